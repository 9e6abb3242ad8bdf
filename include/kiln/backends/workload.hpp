// SPDX-License-Identifier: Apache-2.0
// Workload<Op, Backend>: how a backend runs one op, and the compile-time queries about it.
#pragma once

#include <concepts>
#include <span>
#include <type_traits>

#include "kiln/core/tensor.hpp"
#include "kiln/ops/op_list.hpp"

namespace kiln {

/// The base of the primary Workload template: "this backend does not implement this op".
struct NotImplemented {};

/// How backend `Backend` runs op `Op`. A backend implements an op by specialising this template:
///
/// \code
/// template <> struct Workload<ops::Activation, RefBackend> {
///   static Status is_supported(const WorkloadInfo<ops::Activation>& info);  // optional; default: yes
///   explicit Workload(const WorkloadInfo<ops::Activation>& info);            // packs constants once
///   void run(std::span<const ConstTensor> inputs, std::span<const Tensor> outputs,
///            ref::Context& context) const;                                  // or returns Status
/// };
/// \endcode
/// A backend that does not specialise it inherits the workload of its `fallback` backend.
template <class Op, class Backend>
struct Workload : NotImplemented {};

/// What a workload is told when it is created at load time.
template <class Op>
struct WorkloadInfo {
  const typename Op::Params& params;
  std::span<const TensorInfo> inputs;
  std::span<const TensorInfo> outputs;
  /// One entry per input: the data of inputs produced by Constant layers, nullptr for the others.
  std::span<const void* const> constants;
};

namespace detail {
template <class Op, class Backend>
struct resolve_workload {
  using own = Workload<Op, Backend>;
  using type = std::conditional_t<std::derived_from<own, NotImplemented>,
                                  typename resolve_workload<Op, typename Backend::fallback>::type, own>;
};
template <class Op>
struct resolve_workload<Op, void> {
  using type = NotImplemented;
};
}  // namespace detail

/// The workload that runs Op on Backend: its own, or its fallback chain's first.
template <class Op, class Backend>
using workload_t = typename detail::resolve_workload<Op, Backend>::type;

/// True when Backend (or a backend it falls back to) implements Op.
template <class Op, class Backend>
inline constexpr bool supports_v = !std::same_as<workload_t<Op, Backend>, NotImplemented>;

namespace detail {
template <class Backend, class List> struct all_ops_supported;
template <class Backend, class... Ops>
struct all_ops_supported<Backend, TypeList<Ops...>> {
  static constexpr bool value = ((ops::is_structural_v<Ops> || supports_v<Ops, Backend>) && ...);
};
}  // namespace detail

/// True when Backend implements every op of ops::op_list.
template <class Backend>
inline constexpr bool all_ops_supported_v = detail::all_ops_supported<Backend, ops::op_list>::value;

/// Calls f(std::type_identity<W>{}) for every workload that Backend can run Op with, its own first
/// and then each fallback's, until f returns true. Returns whether one did. A backend whose own
/// workload rejects a layer thus still runs it with the workload it inherits (xsimd's parent-arch
/// kernels), so `all_ops_supported_v` keeps its promise.
template <class Op, class Backend, class F>
constexpr bool for_each_workload_in_chain(F&& f) {
  if constexpr (std::is_void_v<Backend>) {
    return false;
  } else {
    if constexpr (!std::derived_from<Workload<Op, Backend>, NotImplemented>)
      if (f(std::type_identity<Workload<Op, Backend>>{})) return true;
    return for_each_workload_in_chain<Op, typename Backend::fallback>(f);
  }
}

/// Asks a workload type whether it runs a layer with these infos (yes unless it says otherwise).
template <class Op, class W>
Status workload_supports(const WorkloadInfo<Op>& info) {
  if constexpr (requires { { W::is_supported(info) } -> std::same_as<Status>; }) return W::is_supported(info);
  else return Status::ok();
}

}  // namespace kiln
