// SPDX-License-Identifier: Apache-2.0
// LoadedNetwork: a network ready to execute — planned memory, prepared constants, one workload per layer.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "kiln/memory/arena.hpp"
#include "kiln/optimizer/optimizer.hpp"
#include "kiln/runtime/arena_tensors.hpp"
#include "kiln/runtime/load_options.hpp"

namespace kiln::detail {

/// A workload with its type erased into two function pointers: one indirect call per layer.
class ErasedWorkload {
 public:
  using RunFn = Status (*)(const void* state, std::span<const ConstTensor>, std::span<const Tensor>, void* context);

  ErasedWorkload() = default;
  template <class W, class Context>
  static ErasedWorkload make(W workload) {
    ErasedWorkload erased;
    erased.state_ = std::shared_ptr<const void>(std::make_shared<const W>(std::move(workload)));
    erased.run_ = [](const void* state, std::span<const ConstTensor> in, std::span<const Tensor> out, void* context) {
      const W& w = *static_cast<const W*>(state);
      Context& ctx = *static_cast<Context*>(context);
      if constexpr (std::same_as<decltype(w.run(in, out, ctx)), Status>) return w.run(in, out, ctx);
      else {
        w.run(in, out, ctx);
        return Status::ok();
      }
    };
    return erased;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, void* context) const {
    return run_(state_.get(), in, out, context);
  }

 private:
  std::shared_ptr<const void> state_;
  RunFn run_ = nullptr;
};

/// Where a tensor's bytes are: an offset in the arena, or constant storage prepared at load.
struct TensorSlot {
  TensorInfo info;
  bool is_constant = false;
  std::uint64_t offset = 0;         ///< arena offset (intermediate tensors)
  const std::byte* data = nullptr;  ///< constant data
};

/// One entry of the execution loop.
struct Step {
  enum class Kind : std::uint8_t { Input, Output, Compute } kind = Kind::Compute;
  LayerId layer = 0;
  BindingId binding = 0;
  ErasedWorkload workload;
  void* context = nullptr;
  std::vector<std::size_t> inputs;   ///< indices into the tensor table
  std::vector<std::size_t> outputs;
};

/// The per-inference state of a network: its arena and the tensor views bound into it.
struct WorkingMemory {
  AlignedBuffer arena;
  std::vector<std::vector<ConstTensor>> inputs;  ///< per step
  std::vector<std::vector<Tensor>> outputs;      ///< per step
};

/// A loaded network. Immutable after load except for its working memory, which `mutex` guards.
class LoadedNetwork {
 public:
  template <Backend... Bs>
  static Expected<std::shared_ptr<LoadedNetwork>> load(const OptimizedNetwork<Bs...>& optimized,
                                                       std::tuple<typename Bs::context...>& contexts,
                                                       const LoadOptions& options);

  Status execute(std::span<const InputBinding> inputs, std::span<const OutputBinding> outputs);

  Expected<TensorInfo> input_info(BindingId id) const { return binding_info(Step::Kind::Input, id); }
  Expected<TensorInfo> output_info(BindingId id) const { return binding_info(Step::Kind::Output, id); }
  const MemorySummary& memory_summary() const noexcept { return memory_; }
  std::span<const BindingId> input_bindings() const noexcept { return input_bindings_; }
  std::span<const BindingId> output_bindings() const noexcept { return output_bindings_; }

 private:
  Expected<TensorInfo> binding_info(Step::Kind kind, BindingId id) const;
  Status bind(WorkingMemory& memory) const;
  template <class Binding>
  Status check_bindings(std::span<const Binding> given, Step::Kind kind) const;

  std::vector<std::string> layer_names_;
  std::vector<TensorSlot> tensors_;
  std::vector<AlignedBuffer> constants_;
  std::vector<Step> steps_;
  std::vector<BindingId> input_bindings_, output_bindings_;
  MemorySummary memory_;
  std::size_t alignment_ = 64;

  std::mutex mutex_;
  WorkingMemory working_memory_;
};

template <Backend... Bs>
Expected<std::shared_ptr<LoadedNetwork>> LoadedNetwork::load(const OptimizedNetwork<Bs...>& optimized,
                                                             std::tuple<typename Bs::context...>& contexts,
                                                             const LoadOptions& options) {
  const Network& network = optimized.network();
  auto loaded = std::make_shared<LoadedNetwork>();
  loaded->alignment_ = std::max({Bs::alignment...});
  for (const Layer& layer : network.layers()) loaded->layer_names_.push_back(layer.name);

  // Tensor table: every output of every executed layer. Constants get their storage now.
  std::vector<std::vector<std::size_t>> slot_of(network.num_layers());
  const auto order = optimized.execution_order();
  for (LayerId id : order) {
    const Layer& layer = network.layer(id);
    const auto* constant = layer.params_if<ops::Constant>();
    for (const TensorInfo& info : layer.outputs) {
      slot_of[id].push_back(loaded->tensors_.size());
      TensorSlot slot{info};
      if (constant) {
        AlignedBuffer storage(constant->data.size(), loaded->alignment_);
        if (!constant->data.empty()) {
          if (storage.data() == nullptr)
            return Status::error(ErrorCode::OutOfMemory, "cannot allocate ", constant->data.size(),
                                 " bytes for constant '", layer.name, "'");
          std::memcpy(storage.data(), constant->data.data(), constant->data.size());
        }
        slot.is_constant = true;
        slot.data = storage.data();
        loaded->memory_.constant_bytes += constant->data.size();
        loaded->constants_.push_back(std::move(storage));
      }
      loaded->tensors_.push_back(std::move(slot));
    }
  }
  // The others live in the arena.
  std::vector<BufferRequest> requests;
  std::vector<std::size_t> request_tensor;
  for (const ArenaTensor& tensor : arena_tensors(network)) {
    requests.push_back(tensor.request);
    request_tensor.push_back(slot_of[tensor.slot.layer][tensor.slot.index]);
  }

  for (const LayerId id : order) {
    const Layer& layer = network.layer(id);
    Step entry;
    entry.kind = Step::Kind::Compute;
    entry.layer = id;
    for (const auto& input : layer.inputs) entry.inputs.push_back(slot_of[input->layer][input->index]);
    entry.outputs = slot_of[id];
    Status status = std::visit(
        [&]<class P>(const P& descriptor) -> Status {
          using Op = typename P::op;
          if constexpr (std::same_as<Op, ops::Input>) {
            entry.kind = Step::Kind::Input;
            entry.binding = descriptor.value.binding;
            loaded->input_bindings_.push_back(entry.binding);
          } else if constexpr (std::same_as<Op, ops::Output>) {
            entry.kind = Step::Kind::Output;
            entry.binding = descriptor.value.binding;
            loaded->output_bindings_.push_back(entry.binding);
          } else if constexpr (!ops::is_structural_v<Op>) {
            const LayerInputs inputs(network, layer);
            const WorkloadInfo<Op> info = inputs.info_for<Op>(layer, descriptor.value);
            visit_backend<Bs...>(optimized.backend_index(id), [&]<class B>(std::type_identity<B>) {
              if constexpr (supports_v<Op, B>) {
                using W = workload_t<Op, B>;
                entry.workload = ErasedWorkload::make<W, typename B::context>(W(info));
                entry.context = &std::get<typename B::context>(contexts);
              }
            });
          }
          return Status::ok();
        },
        layer.descriptor);
    if (!status) return status.with_context(layer.describe());
    if (entry.kind != Step::Kind::Compute || !layer.is<ops::Constant>()) loaded->steps_.push_back(std::move(entry));
  }

  const MemoryPlan plan = plan_memory(options.memory_strategy, requests, loaded->alignment_);
  if (auto valid = validate_plan(requests, plan, loaded->alignment_); !valid)
    return valid.with_context("memory plan");
  for (std::size_t r = 0; r < requests.size(); ++r) loaded->tensors_[request_tensor[r]].offset = plan.offsets[r];
  loaded->memory_.strategy = to_string(options.memory_strategy);
  loaded->memory_.tensors = requests.size();
  loaded->memory_.arena_bytes = plan.arena_size;
  loaded->memory_.lower_bound_bytes = plan.lower_bound;
  loaded->memory_.unplanned_bytes = plan_memory<OneBlockPerTensor>(requests, loaded->alignment_).arena_size;

  if (auto bound = loaded->bind(loaded->working_memory_); !bound) return bound;
  return loaded;
}

inline Status LoadedNetwork::bind(WorkingMemory& memory) const {
  memory.arena = AlignedBuffer(memory_.arena_bytes, alignment_);
  if (memory_.arena_bytes != 0 && memory.arena.data() == nullptr)
    return Status::error(ErrorCode::OutOfMemory, "cannot allocate the ", memory_.arena_bytes, "-byte arena");
  auto address = [&](const TensorSlot& slot) {
    return slot.is_constant ? const_cast<std::byte*>(slot.data) : memory.arena.data() + slot.offset;
  };
  memory.inputs.assign(steps_.size(), {});
  memory.outputs.assign(steps_.size(), {});
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    for (std::size_t t : steps_[s].inputs) memory.inputs[s].push_back({tensors_[t].info, address(tensors_[t])});
    for (std::size_t t : steps_[s].outputs) memory.outputs[s].push_back({tensors_[t].info, address(tensors_[t])});
  }
  return Status::ok();
}

inline Expected<TensorInfo> LoadedNetwork::binding_info(Step::Kind kind, BindingId id) const {
  for (const Step& step : steps_)
    if (step.kind == kind && step.binding == id)
      return tensors_[kind == Step::Kind::Input ? step.outputs[0] : step.inputs[0]].info;
  const auto& known = kind == Step::Kind::Input ? input_bindings_ : output_bindings_;
  return Status::error(ErrorCode::NotFound, kind == Step::Kind::Input ? "input" : "output", " binding ", id,
                       " does not exist; this network has ", kind == Step::Kind::Input ? "inputs " : "outputs ",
                       detail::list_to_string<BindingId>(known));
}

template <class Binding>
Status LoadedNetwork::check_bindings(std::span<const Binding> given, Step::Kind kind) const {
  const bool is_input = kind == Step::Kind::Input;
  const std::string_view what = is_input ? "input" : "output";
  const auto& expected = is_input ? input_bindings_ : output_bindings_;
  for (std::size_t i = 0; i < given.size(); ++i) {
    auto info = binding_info(kind, given[i].id);
    if (!info) return info.status();
    for (std::size_t j = 0; j < i; ++j)
      if (given[j].id == given[i].id) return Status::error(ErrorCode::InvalidArgument, what, " binding ", given[i].id, " is given twice");
    const auto& tensor = given[i].tensor;
    if (tensor.info.type != info->type || tensor.info.shape != info->shape)
      return Status::error(ErrorCode::InvalidArgument, what, " binding ", given[i].id, " expects ", info->to_string(),
                           " but the buffer is ", tensor.info.to_string());
    if (tensor.data == nullptr && info->num_bytes() != 0)
      return Status::error(ErrorCode::InvalidArgument, what, " binding ", given[i].id, " has a null data pointer");
  }
  for (BindingId id : expected) {
    bool found = false;
    for (const auto& binding : given) found = found || binding.id == id;
    if (!found) return Status::error(ErrorCode::InvalidArgument, what, " binding ", id, " is missing");
  }
  return Status::ok();
}

inline Status LoadedNetwork::execute(std::span<const InputBinding> inputs, std::span<const OutputBinding> outputs) {
  if (auto s = check_bindings(inputs, Step::Kind::Input); !s) return s;
  if (auto s = check_bindings(outputs, Step::Kind::Output); !s) return s;
  std::lock_guard lock(mutex_);
  WorkingMemory& memory = working_memory_;
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    switch (step.kind) {
      case Step::Kind::Input:
        for (const InputBinding& b : inputs)
          if (b.id == step.binding && b.tensor.info.num_bytes() != 0)
            std::memcpy(memory.outputs[s][0].data, b.tensor.data, b.tensor.info.num_bytes());
        break;
      case Step::Kind::Output:
        for (const OutputBinding& b : outputs)
          if (b.id == step.binding && b.tensor.info.num_bytes() != 0)
            std::memcpy(b.tensor.data, memory.inputs[s][0].data, b.tensor.info.num_bytes());
        break;
      case Step::Kind::Compute:
        if (auto status = step.workload.run(memory.inputs[s], memory.outputs[s], step.context); !status)
          return status.with_context(detail::str_cat("layer '", layer_names_[step.layer], "'"));
        break;
    }
  }
  return Status::ok();
}

}  // namespace kiln::detail
