// SPDX-License-Identifier: Apache-2.0
// Workload<Op, Backend, Type>: how a backend runs one op in one data type, and what it is told at load.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include "kiln/backends/kept_memory.hpp"
#include "kiln/core/status.hpp"
#include "kiln/core/tensor.hpp"
#include "kiln/detail/compilation.hpp"
#include "kiln/ops/op_set.hpp"

namespace kiln {

/// The base of the primary Workload template: "this backend has no workload for this op and type".
struct NotImplemented {};

/// How backend `Backend` runs the layers of op `Op` whose data type (ops::layer_data_type: the
/// first input's) is `Type`. A backend offers a workload by specialising this template, fully for
/// one type or partially for several:
///
/// \code
/// template <> struct Workload<ops::Activation, RefBackend, DataType::Float32> { ... };
/// template <DataType T> struct Workload<ops::Concat, RefBackend, T> { ... };       // every type
/// \endcode
///
/// A workload provides
/// - `explicit Workload(const WorkloadInfo<Op>&)`, which prepares its constants once, or
///   `static Expected<Workload> create(const WorkloadInfo<Op>&, Context&)` when that needs the
///   backend's context (a device, a thread count) or may fail;
/// - optionally `static Status is_supported(const WorkloadInfo<Op>&)`, refusing a layer it cannot
///   run (other tensors' types, shapes), with a message that does not repeat the backend's id;
/// - optionally `ScratchSize scratch(const Context&) const`: memory it needs while it runs, which
///   the loader plans with the network's tensors (a kernel never allocates);
/// - what it computes at load and reads at every run in KeptArrays from `info.kept` (when not
///   null), so that a compiled network keeps them in its arena instead of on the heap;
/// - optionally `static constexpr std::size_t inputs_read_at_run`: run() reads only that many
///   first inputs, having copied what it needs of the others (constant weights, packed) when it
///   was created; the loader then keeps no copy of constants that nothing else reads at run time;
/// - `run(inputs, outputs, Context&) const`, or `run(inputs, outputs, Context&, std::span<std::byte>
///   scratch) const` when it asked for scratch, returning void or Status.
///
/// A layer whose data type a backend has no workload for, or whose workload refuses it, goes to
/// the workload its `fallback` backend has for that type (docs/decisions/0012).
template <class Op, class Backend, DataType Type>
struct Workload : NotImplemented {};

/// What a workload is told when it is created at load time.
template <class Op>
struct WorkloadInfo {
  const typename Op::Params& params;
  std::span<const TensorInfo> inputs;
  std::span<const TensorInfo> outputs;
  /// One entry per input: the data of inputs produced by Constant layers, nullptr for the others.
  std::span<const void* const> constants;
  /// Where to keep what the workload computes at load and reads at run (KeptArray); null: the heap.
  KeptMemory* kept = nullptr;
  /// Whose rules the network's int8 layers compute by (Network::arithmetic).
  QuantizedArithmetic arithmetic = QuantizedArithmetic::Kiln;
};

/// Working memory a workload needs while it runs: planned into the working memory's arena for the
/// duration of its step, so that no kernel allocates.
struct ScratchSize {
  std::uint64_t bytes = 0;    ///< 64-bit, as the memory plan is: a 32-bit target's size_t could wrap
  std::size_t alignment = 1;  ///< at most the network's alignment (the largest of its backends')
};

namespace detail {

/// Makes workload W for a layer, by whichever of the two ways Workload allows it offers: its
/// static create(info, context), which may fail and may make a base of W that holds the code W
/// shares with other types' workloads, or its constructor from the info.
template <class W, class Op, class Context>
auto make_workload(const WorkloadInfo<Op>& info, Context& context) {
  if constexpr (requires { W::create(info, context); })
    return W::create(info, context);
  else
    return Expected<W>(W(info));
}
/// The type of the workload make_workload<W> makes.
template <class W, class Op, class Context>
using made_workload_t =
    std::remove_cvref_t<decltype(*make_workload<W>(std::declval<const WorkloadInfo<Op>&>(), std::declval<Context&>()))>;

/// Runs workload `w` in whichever form it has: with or without scratch, returning Status or void.
template <class W, class Context>
Status run_workload(const W& w, std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
                    std::span<std::byte> scratch) {
  if constexpr (requires { w.run(in, out, context, scratch); }) {
    if constexpr (std::same_as<decltype(w.run(in, out, context, scratch)), Status>)
      return w.run(in, out, context, scratch);
    else
      w.run(in, out, context, scratch);
  } else {
    if constexpr (std::same_as<decltype(w.run(in, out, context)), Status>)
      return w.run(in, out, context);
    else
      w.run(in, out, context);
  }
  return Status::ok();
}

}  // namespace detail

/// The class template that holds backend B's own workloads: Workload<Op, B, Type>, unless B says
/// otherwise (NeonBackend's kernels live in a namespace named after their instruction set).
template <class B>
struct own_workloads {
  template <class Op, DataType Type>
  using type = Workload<Op, B, Type>;
};

/// True when Backend itself (not a fallback) has a workload for Op in Type.
template <class Op, class Backend, DataType Type>
inline constexpr bool has_own_workload_v =
    !std::derived_from<typename own_workloads<Backend>::template type<Op, Type>, NotImplemented>;

#if KILN_COMPILED_LIBRARY
#define KILN_WORKLOAD_SOURCE compiled_library
#else
#define KILN_WORKLOAD_SOURCE header_workloads
#endif

// Whether a backend's workloads are compiled into this translation unit or come from a library
// differs between programs (KILN_COMPILED_LIBRARY, the dispatching NeonBackend), so what depends
// on it lives in an inline namespace named after the choice: the two never share a symbol.
inline namespace KILN_WORKLOAD_SOURCE {
/// True for a backend whose own workloads this program takes from a compiled library
/// (compiled_workload_table<B>()) instead of the Workload specialisations its headers define.
template <class B>
inline constexpr bool workloads_compiled_v = false;
}  // namespace KILN_WORKLOAD_SOURCE

namespace detail {
template <class Op, class Backend>
constexpr bool has_any_own_workload() {
  return []<std::size_t... I>(std::index_sequence<I...>) {
    return (has_own_workload_v<Op, Backend, all_data_types[I]> || ...);
  }
  (std::make_index_sequence<std::size(all_data_types)>{});
}
}  // namespace detail

/// True when Backend, or a backend it falls back to, runs Op in at least one data type. A backend
/// whose workloads come from a compiled library was checked when that library was built, and
/// counts as running every op.
template <class Op, class Backend>
constexpr bool supports() {
  if constexpr (std::is_void_v<Backend>)
    return false;
  else if constexpr (workloads_compiled_v<Backend>)
    return true;
  else
    return detail::has_any_own_workload<Op, Backend>() || supports<Op, typename Backend::fallback>();
}
template <class Op, class Backend>
inline constexpr bool supports_v = supports<Op, Backend>();

namespace detail {
template <class Backend, class Set>
struct all_ops_supported;
template <class Backend, class... Ops>
struct all_ops_supported<Backend, OpSet<Ops...>> {
  static constexpr bool value = ((ops::is_structural_v<Ops> || supports_v<Ops, Backend>)&&...);
};
}  // namespace detail

/// True when Backend runs every op of the set (in some data type).
template <class Backend, class Set = AllOps>
inline constexpr bool all_ops_supported_v = detail::all_ops_supported<Backend, Set>::value;

}  // namespace kiln
