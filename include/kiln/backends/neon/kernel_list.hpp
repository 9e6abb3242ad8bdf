// SPDX-License-Identifier: Apache-2.0
// The ops NeonBackend has its own kernels for; every other op runs its RefBackend fallback's workload.
#pragma once

#include "kiln/core/type_list.hpp"
#include "kiln/ops/op_list.hpp"

namespace kiln::neon {

/// One entry per file in ops/: adding a Neon kernel adds its op here (kernels.hpp checks both agree).
/// Gather, Reshape and TransposeConvolution2d run the Ref workloads (Gather and Reshape are already
/// row copies there; see docs/decisions/0008).
using kernel_ops = TypeList<ops::Activation, ops::BatchMatMul, ops::BatchNormalization, ops::Concat, ops::Convolution2d,
                            ops::DepthwiseConvolution2d, ops::ElementwiseBinary, ops::ElementwiseUnary,
                            ops::FullyConnected, ops::Pad, ops::Pooling2d, ops::Reduce, ops::Resize, ops::Softmax,
                            ops::Split, ops::StridedSlice, ops::Transpose>;

template <class Op, class List> inline constexpr bool list_contains_v = false;
template <class Op, class... Ops> inline constexpr bool list_contains_v<Op, TypeList<Ops...>> = (std::is_same_v<Op, Ops> || ...);

/// True for the ops NeonBackend runs with its own kernels.
template <class Op>
concept has_kernel = list_contains_v<Op, kernel_ops>;

}  // namespace kiln::neon
