// SPDX-License-Identifier: Apache-2.0
// Reference BatchMatMul: one triple loop per pair of broadcast batch matrices; in int8 the
// integer products of quantized::MatMulStage.
#pragma once

#include "kiln/backends/mat_mul_geometry.hpp"
#include "kiln/backends/quantized_batch_mat_mul.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::BatchMatMul, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::BatchMatMul> {
  explicit Workload(const WorkloadInfo<ops::BatchMatMul>& info)
      : Float32Kernel(info), geometry_(MatMulGeometry::of(info)) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const MatMulGeometry& g = geometry_;
    const float* a = ref::floats(in[0]);
    const float* b = ref::floats(in[1]);
    float* y = ref::floats(out[0]);
    for (std::size_t t = 0; t < g.pairs.size(); ++t) {
      const float* am = a + g.pairs[t].a;
      const float* bm = b + g.pairs[t].b;
      float* ym = y + t * g.m * g.n;
      for (std::size_t i = 0; i < g.m; ++i)
        for (std::size_t j = 0; j < g.n; ++j) {
          float sum = 0.0f;
          for (std::size_t p = 0; p < g.k; ++p) sum += am[i * g.a_row + p * g.a_col] * bm[p * g.b_row + j * g.b_col];
          ym[i * g.n + j] = sum;
        }
    }
  }

 private:
  MatMulGeometry geometry_;
};

/// int8: every output matrix through quantized::MatMulStage.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::BatchMatMul, RefBackend, T> {
  static Status is_supported(const WorkloadInfo<ops::BatchMatMul>& info) {
    return quantized::check_batch_mat_mul(info);
  }
  static Expected<Workload> create(const WorkloadInfo<ops::BatchMatMul>& info, ref::Context&) {
    auto stage = quantized::MatMulStage::make(info);
    if (!stage) return stage.status();
    return Workload{*stage, MatMulGeometry::of(info)};
  }
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const auto* a = static_cast<const element_type_t<T>*>(in[0].data);
    const auto* b = static_cast<const element_type_t<T>*>(in[1].data);
    auto* y = static_cast<element_type_t<T>*>(out[0].data);
    for (std::size_t t = 0; t < geometry.pairs.size(); ++t) stage.rows(a, b, y, geometry, t, 0, geometry.m);
  }

  quantized::MatMulStage stage;
  MatMulGeometry geometry;
};

}  // namespace kiln
