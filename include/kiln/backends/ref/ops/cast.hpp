// SPDX-License-Identifier: Apache-2.0
// Reference Cast (Float32 <-> Float16), one element at a time, and the conversions RefBackend's
// Float16 workloads widen and narrow with.
#pragma once

#include <algorithm>
#include <cmath>

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
requires(ops::Cast::castable(T)) struct Workload<ops::Cast, RefBackend, T> {
  explicit Workload(const WorkloadInfo<ops::Cast>&) {}

  /// Element i of a tensor as a double (exact for every castable type).
  static double value_at(const ConstTensor& t, std::uint64_t i) {
    switch (t.info.type) {
      case DataType::Float32: return static_cast<const float*>(t.data)[i];
      case DataType::Float16: return half_to_float(static_cast<const Half*>(t.data)[i]);
      case DataType::Signed32: return static_cast<const std::int32_t*>(t.data)[i];
      default: return static_cast<const std::uint8_t*>(t.data)[i] != 0 ? 1.0 : 0.0;
    }
  }
  static void store(const Tensor& t, std::uint64_t i, double v) {
    switch (t.info.type) {
      case DataType::Float32: static_cast<float*>(t.data)[i] = static_cast<float>(v); break;
      case DataType::Float16: static_cast<Half*>(t.data)[i] = float_to_half(static_cast<float>(v)); break;
      case DataType::Signed32:
        static_cast<std::int32_t*>(t.data)[i] =
            std::isnan(v) ? 0 : static_cast<std::int32_t>(std::clamp(std::trunc(v), -2147483648.0, 2147483647.0));
        break;
      default: static_cast<std::uint8_t*>(t.data)[i] = v != 0.0 ? 1 : 0;
    }
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context& context) const {
    if (ops::Cast::converts(in[0].info.type) && ops::Cast::converts(out[0].info.type))
      return cast_elements<ref::ScalarHalves>(in[0], out[0], context);
    for (std::uint64_t i = 0; i < in[0].info.num_elements(); ++i) store(out[0], i, value_at(in[0], i));
  }
};

}  // namespace kiln
