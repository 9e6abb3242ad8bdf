// SPDX-License-Identifier: Apache-2.0
// RefBackend in Float16: every op it computes in Float32 runs on Float16 tensors by widening them,
// computing in Float32 and rounding the results to Float16 (decision 0019): the oracle the other
// backends' Float16 workloads are tested against. The ops that only move elements (Concat, Pad,
// Transpose, ...) move Float16 as they move every type.
#pragma once

#include "kiln/backends/float16_via_float32.hpp"
#include "kiln/backends/ref/ops/cast.hpp"

namespace kiln {

template <class Op>
requires(std::derived_from<Workload<Op, RefBackend, DataType::Float32>,
                           ref::Float32Kernel<Op>>) struct Workload<Op, RefBackend, DataType::Float16>
    : Float16ViaFloat32<Op, Workload<Op, RefBackend, DataType::Float32>, ref::Context, ref::ScalarHalves> {
};

}  // namespace kiln
