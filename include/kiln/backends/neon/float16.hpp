// SPDX-License-Identifier: Apache-2.0
// NeonBackend in Float16: Float16 storage, Float32 arithmetic. Every op with a Float32 kernel runs
// on Float16 tensors through it, its inputs widened and its outputs narrowed a vector at a time
// (F16C or AVX-512F on x86, FCVTL/FCVTN on aarch64; decision 0019). The element movers (Concat,
// Pad, Transpose, nearest Resize, ...) move Float16 as they move every type.
#pragma once

#include "kiln/backends/float16_via_float32.hpp"
#include "kiln/backends/neon/ops/cast.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

template <class Op>
requires(std::derived_from<Kernel<Op, DataType::Float32>, Float32Kernel<Op>>) struct Kernel<Op, DataType::Float16>
    : Float16ViaFloat32<Op, Kernel<Op, DataType::Float32>, Context, VectorHalves> {
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
