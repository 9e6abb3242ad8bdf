// SPDX-License-Identifier: Apache-2.0
// Reference Cast (Float32 <-> Float16), one element at a time, and the conversions RefBackend's
// Float16 workloads widen and narrow with.
#pragma once

#include "kiln/backends/float16_via_float32.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"
#include "kiln/core/half.hpp"

namespace kiln {

namespace ref {
/// Float16 conversions one element at a time (Float16ViaFloat32's `Halves`).
struct ScalarHalves {
  static void widen(const Half* h, float* f, std::uint64_t n, Context&) {
    for (std::uint64_t i = 0; i < n; ++i) f[i] = half_to_float(h[i]);
  }
  static void narrow(const float* f, Half* h, std::uint64_t n, Context&) {
    for (std::uint64_t i = 0; i < n; ++i) h[i] = float_to_half(f[i]);
  }
};
}  // namespace ref

template <DataType T>
requires(ops::Cast::converts(T)) struct Workload<ops::Cast, RefBackend, T> {
  explicit Workload(const WorkloadInfo<ops::Cast>&) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context& context) const {
    cast_elements<ref::ScalarHalves>(in[0], out[0], context);
  }
};

}  // namespace kiln
