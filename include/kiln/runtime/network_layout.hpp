// SPDX-License-Identifier: Apache-2.0
// NetworkLayout: what a loaded network is made of — its steps, its tensors and the backends they run
// on — as the loader builds it and execution, zero-copy and the printouts read it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/runtime/tensor_table.hpp"

namespace kiln::detail {

/// One entry of a loaded network's execution loop.
struct Step {
  enum class Kind : std::uint8_t { Input, Output, Compute } kind = Kind::Compute;
  LayerId layer = 0;
  BindingId binding = 0;             ///< Input and Output steps
  ErasedWorkload workload;           ///< Compute steps
  std::uint8_t backend = 0;          ///< index into NetworkLayout::backends (Compute steps)
  void* context = nullptr;           ///< the context the workload runs with
  std::vector<std::size_t> inputs;   ///< tensor slots it reads
  std::vector<std::size_t> outputs;  ///< tensor slots it writes
  std::size_t scratch = no_scratch;  ///< its scratch slot, if it has one
  std::uint64_t kept_bytes = 0;      ///< what its workload keeps from load on (KeptMemory)

  /// Whether it reads input `i` when it runs (a workload may have packed it at load instead).
  bool reads_at_run(std::size_t i) const { return kind != Kind::Compute || i < workload.inputs_read_at_run(); }
};

/// A backend of the Runtime a network was loaded into, as its steps reach it.
struct BackendInstance {
  std::string_view id;
  const ContextHooks* hooks = nullptr;
  void* context = nullptr;
};

struct NetworkLayout {
  std::vector<std::string> layer_names;
  std::vector<std::string_view> layer_ops;
  std::vector<BackendInstance> backends;
  TensorTable tensors;
  std::vector<Step> steps;
  std::vector<BindingId> input_bindings, output_bindings;

  std::string_view backend_of(const Step& step) const {
    return step.kind == Step::Kind::Compute ? backends[step.backend].id : std::string_view{};
  }
  /// The info of an input or output binding, or null when there is none.
  const TensorInfo* binding_info(Step::Kind kind, BindingId id) const {
    for (const Step& step : steps)
      if (step.kind == kind && step.binding == id)
        return &tensors[kind == Step::Kind::Input ? step.outputs[0] : step.inputs[0]].info;
    return nullptr;
  }
  /// "input binding 5 does not exist; this network has inputs [0, 1]".
  Status unknown_binding(Step::Kind kind, BindingId id) const {
    const bool input = kind == Step::Kind::Input;
    return Status::error(ErrorCode::NotFound, input ? "input" : "output", " binding ", id,
                         " does not exist; this network has ", input ? "inputs " : "outputs ",
                         list_to_string<BindingId>(input ? input_bindings : output_bindings));
  }
};

/// Which Constant layers a step made so far reads at run time (the others were copied into the
/// workloads that read them, packed weights), and, for a load that was given the network, how
/// many reads of each are still to be made into steps: a constant that no step will read again
/// is released at once, so that its packed copies and it are not all held.
class ConstantReads {
 public:
  ConstantReads(const Network& network, Network* consumed)
      : network_(network), consumed_(consumed), read_at_run_(network.num_layers(), false) {
    if (consumed_ == nullptr) return;
    pending_.assign(network.num_layers(), 0);
    for (LayerId id : network.execution_order())
      for (const auto& input : network.layer(id).inputs)
        if (network.layer(input->layer).is<ops::Constant>()) ++pending_[input->layer];
  }

  void made(const Layer& layer, const Step& step) {
    for (std::size_t i = 0; i < layer.inputs.size(); ++i) {
      const LayerId from = layer.inputs[i]->layer;
      if (!network_.layer(from).is<ops::Constant>()) continue;
      if (step.reads_at_run(i)) read_at_run_[from] = true;
      if (consumed_ != nullptr && --pending_[from] == 0 && !read_at_run_[from]) consumed_->release_constant_data(from);
    }
  }

  /// Whether a step reads Constant layer `id` at run time; final once every step is made.
  bool read_at_run(LayerId id) const { return read_at_run_[id]; }

 private:
  const Network& network_;
  Network* consumed_;
  std::vector<std::uint32_t> pending_;
  std::vector<bool> read_at_run_;
};

}  // namespace kiln::detail

// TensorTable's definitions need Step, so they come with this header.
#if !KILN_COMPILED_LIBRARY || KILN_BUILDING_LIBRARY
#include "kiln/runtime/tensor_table_inl.hpp"
#endif
