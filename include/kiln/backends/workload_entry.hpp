// SPDX-License-Identifier: Apache-2.0
// WorkloadEntry: one workload of a backend with its type erased, and ErasedWorkload, a created one.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include "kiln/backends/workload.hpp"

namespace kiln {

/// A layer as the optimizer and the loader hand it to a workload entry, whatever its op: `params`
/// points to the Op::Params of the op the entry is for.
struct LayerInfo {
  const void* params = nullptr;
  std::span<const TensorInfo> inputs;
  std::span<const TensorInfo> outputs;
  std::span<const void* const> constants;
  KeptMemory* kept = nullptr;
  QuantizedArithmetic arithmetic = QuantizedArithmetic::Kiln;

  DataType data_type() const { return ops::layer_data_type(inputs, outputs); }
  template <class Op>
  WorkloadInfo<Op> as() const {
    return {*static_cast<const typename Op::Params*>(params), inputs, outputs, constants, kept, arithmetic};
  }
};

namespace detail {
/// How an ErasedWorkload destroys its state.
struct StateDeleter {
  void (*destroy)(void*) = nullptr;
  void operator()(void* p) const { destroy(p); }
};
}  // namespace detail

/// A workload made for one layer at load: its state and how to run it, one indirect call per
/// inference. This is the only way kiln erases a workload's type.
class ErasedWorkload {
 public:
  using RunFn = Status (*)(const void* state, std::span<const ConstTensor> inputs, std::span<const Tensor> outputs,
                           void* context, std::span<std::byte> scratch);

  ErasedWorkload() = default;

  /// Takes `workload` of type W, which runs with Context, and asks it for its scratch.
  template <class W, class Context>
  static ErasedWorkload make(W&& workload, Context& context) {
    using Type = std::remove_cvref_t<W>;
    ErasedWorkload erased;
    erased.state_ = State(new Type(std::forward<W>(workload)), {[](void* p) { delete static_cast<Type*>(p); }});
    erased.run_ = &run_as<Type, Context>;
    if constexpr (requires(const Type& w) {
                    { w.scratch(context) } -> std::same_as<ScratchSize>;
                  })
      erased.scratch_ = static_cast<const Type*>(erased.state_.get())->scratch(context);
    if constexpr (requires {
                    { Type::inputs_read_at_run } -> std::convertible_to<std::size_t>;
                  })
      erased.inputs_read_at_run_ = Type::inputs_read_at_run;
    return erased;
  }

  Status run(std::span<const ConstTensor> inputs, std::span<const Tensor> outputs, void* context,
             std::span<std::byte> scratch) const {
    return run_(state_.get(), inputs, outputs, context, scratch);
  }
  /// The working memory the workload needs while it runs.
  const ScratchSize& scratch() const noexcept { return scratch_; }
  /// How many of its first inputs run() reads; it copied what it needs of the others at load.
  std::size_t inputs_read_at_run() const noexcept { return inputs_read_at_run_; }

 private:
  template <class W, class Context>
  static Status run_as(const void* state, std::span<const ConstTensor> in, std::span<const Tensor> out, void* context,
                       std::span<std::byte> scratch) {
    return detail::run_workload(*static_cast<const W*>(state), in, out, *static_cast<Context*>(context), scratch);
  }

  using State = std::unique_ptr<void, detail::StateDeleter>;
  State state_;
  RunFn run_ = nullptr;
  ScratchSize scratch_;
  std::size_t inputs_read_at_run_ = static_cast<std::size_t>(-1);
};

/// One workload a backend offers, with its type erased: what the optimizer asks and the loader
/// calls. A backend's entries for an op (one per data type it runs) come from its Workload
/// specialisations (workload_table.hpp) or from a library that compiled them.
struct WorkloadEntry {
  std::string_view backend;  ///< id of the backend whose code this is
  DataType data_type;        ///< the layer data type it runs
  Status (*is_supported)(const LayerInfo& layer);
  /// `context` is the context of `backend` (or of a backend whose context derives from it).
  Expected<ErasedWorkload> (*create)(const LayerInfo& layer, void* context);
};

namespace detail {

template <class T>
inline constexpr bool is_expected_v = false;
template <class T>
inline constexpr bool is_expected_v<Expected<T>> = true;

/// What a workload type W must provide to run op Op with Context (see Workload). Its create may
/// make a base of W that holds the code W shares with other data types' workloads.
template <class W, class Op, class Context>
concept WorkloadFor = (std::constructible_from<W, const WorkloadInfo<Op>&> ||
                       requires(const WorkloadInfo<Op>& info, Context& context) {
                         requires is_expected_v<decltype(W::create(info, context))>;
                       }) &&
                      requires(const W& w, std::span<const ConstTensor> in, std::span<const Tensor> out,
                               Context& context, std::span<std::byte> scratch) {
  requires requires { w.run(in, out, context); } || requires {
    w.run(in, out, context, scratch);
  };
};

template <class Op, class W>
Status entry_is_supported(const LayerInfo& layer) {
  if constexpr (requires(const WorkloadInfo<Op>& info) {
                  { W::is_supported(info) } -> std::same_as<Status>;
                })
    return W::is_supported(layer.as<Op>());
  else
    return Status::ok();
}

template <class Op, class W, class Context>
Expected<ErasedWorkload> entry_create(const LayerInfo& layer, void* context) {
  Context& ctx = *static_cast<Context*>(context);
  auto made = make_workload<W>(layer.as<Op>(), ctx);
  if (!made) return made.status();
  return ErasedWorkload::make(std::move(*made), ctx);
}

/// The entry of workload W, which `Owner`'s code provides for Op in Type and runs with Context.
template <class Op, class W, DataType Type, class Context>
constexpr WorkloadEntry entry_of(std::string_view owner) {
  static_assert(
      WorkloadFor<W, Op, Context>,
      "kiln: a workload needs a constructor from WorkloadInfo<Op> (or a static create(info, context) "
      "returning an Expected) and a const run(inputs, outputs, context[, scratch]); see backends/workload.hpp");
  return {owner, Type, &entry_is_supported<Op, W>, &entry_create<Op, W, Context>};
}

}  // namespace detail
}  // namespace kiln
