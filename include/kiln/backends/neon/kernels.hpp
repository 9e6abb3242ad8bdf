// SPDX-License-Identifier: Apache-2.0
// Every Neon kernel, compiled for this translation unit's instruction set (see isa.hpp).
#pragma once

#include "kiln/backends/neon/kernel_list.hpp"
#include "kiln/backends/neon/ops/activation.hpp"
#include "kiln/backends/neon/ops/batch_mat_mul.hpp"
#include "kiln/backends/neon/ops/batch_normalization.hpp"
#include "kiln/backends/neon/ops/concat.hpp"
#include "kiln/backends/neon/ops/convolution2d.hpp"
#include "kiln/backends/neon/ops/depthwise_convolution2d.hpp"
#include "kiln/backends/neon/ops/elementwise_binary.hpp"
#include "kiln/backends/neon/ops/elementwise_unary.hpp"
#include "kiln/backends/neon/ops/fully_connected.hpp"
#include "kiln/backends/neon/ops/pad.hpp"
#include "kiln/backends/neon/ops/pooling2d.hpp"
#include "kiln/backends/neon/ops/reduce.hpp"
#include "kiln/backends/neon/ops/resize.hpp"
#include "kiln/backends/neon/ops/softmax.hpp"
#include "kiln/backends/neon/ops/split.hpp"
#include "kiln/backends/neon/ops/strided_slice.hpp"
#include "kiln/backends/neon/ops/transpose.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

template <class List> inline constexpr bool kernels_defined_v = false;
template <class... Ops>
inline constexpr bool kernels_defined_v<TypeList<Ops...>> = (requires { sizeof(Kernel<Ops>); } && ...);
static_assert(kernels_defined_v<kernel_ops>, "an op listed in neon/kernel_list.hpp has no Kernel<Op> in neon/ops/");

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
