// SPDX-License-Identifier: Apache-2.0
// OpSet<Ops...>: the ops a program uses, so that it compiles only their workloads.
#pragma once

#include <array>
#include <cstddef>

#include "kiln/ops/op_list.hpp"

namespace kiln {

/// The ops a program runs, given to `optimize` and `Runtime` as their first template argument:
///
/// \code
/// using Ops = kiln::OpSet<kiln::ops::Convolution2d, kiln::ops::Activation, kiln::ops::FullyConnected>;
/// kiln::Runtime<Ops, kiln::NeonBackend, kiln::RefBackend> runtime;   // compiles these three only
/// auto optimized = kiln::optimize<Ops, kiln::NeonBackend, kiln::RefBackend>(std::move(network));
/// \endcode
/// A layer of any other op is refused by `optimize` with a Status that names it. Input, Output and
/// Constant are always allowed, and MemCopy is added where a backend has device memory. Without an
/// OpSet a Runtime runs every op (AllOps), as tflite-micro's AllOpsResolver does.
template <class... Ops>
struct OpSet {
  static_assert(
      (contains_v<Ops, ops::op_list> && ...),
      "kiln: every OpSet entry must be an op descriptor of kiln::ops::op_list, such as kiln::ops::Convolution2d");

  /// Whether the op at `index` of ops::op_list is in the set (structural ops always are).
  static constexpr std::array<bool, ops::op_list::size> contains = [] {
    std::array<bool, ops::op_list::size> in{};
    ((in[index_of_v<Ops, ops::op_list>] = true), ...);
    in[index_of_v<ops::Input, ops::op_list>] = in[index_of_v<ops::Output, ops::op_list>] = true;
    in[index_of_v<ops::Constant, ops::op_list>] = true;
    return in;
  }();
};

/// Every op kiln has: what a Runtime without an OpSet runs.
using AllOps = apply_t<OpSet, ops::op_list>;

template <class T>
inline constexpr bool is_op_set_v = false;
template <class... Ops>
inline constexpr bool is_op_set_v<OpSet<Ops...>> = true;

/// True when every entry of the OpSet is an op of ops::op_list. Runtime and optimize() check it
/// themselves: naming OpSet<...> as a template argument does not instantiate its body.
template <class Set>
inline constexpr bool op_set_entries_are_ops_v = false;
template <class... Ops>
inline constexpr bool op_set_entries_are_ops_v<OpSet<Ops...>> = (contains_v<Ops, ops::op_list> && ...);

}  // namespace kiln
