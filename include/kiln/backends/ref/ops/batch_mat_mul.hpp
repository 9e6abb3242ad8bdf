// SPDX-License-Identifier: Apache-2.0
// Reference BatchMatMul: one triple loop per pair of broadcast batch matrices, in Float32 and in
// Signed32; in int8 the integer products of quantized::MatMulStage.
#pragma once

#include "kiln/backends/mat_mul_geometry.hpp"
#include "kiln/backends/quantized_batch_mat_mul.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

namespace ref {

/// Every output matrix as sums of products in Acc (the float sums, or int32's wrapping ones in
/// uint32), stored as E.
template <class Acc, class E>
void multiply_matrices(const MatMulGeometry& g, const E* a, const E* b, E* y) {
  for (std::size_t t = 0; t < g.pairs.size(); ++t) {
    const E* am = a + g.pairs[t].a;
    const E* bm = b + g.pairs[t].b;
    E* ym = y + t * g.m * g.n;
    for (std::size_t i = 0; i < g.m; ++i)
      for (std::size_t j = 0; j < g.n; ++j) {
        Acc sum = 0;
        for (std::size_t p = 0; p < g.k; ++p)
          sum += static_cast<Acc>(am[i * g.a_row + p * g.a_col]) * static_cast<Acc>(bm[p * g.b_row + j * g.b_col]);
        ym[i * g.n + j] = static_cast<E>(sum);
      }
  }
}

}  // namespace ref

template <>
struct Workload<ops::BatchMatMul, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::BatchMatMul> {
  explicit Workload(const WorkloadInfo<ops::BatchMatMul>& info)
      : Float32Kernel(info), geometry_(MatMulGeometry::of(info)) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    ref::multiply_matrices<float>(geometry_, ref::floats(in[0]), ref::floats(in[1]), ref::floats(out[0]));
  }

 private:
  MatMulGeometry geometry_;
};

/// Signed32 (ONNX MatMulInteger of two computed operands): sums wrap around on overflow.
template <>
struct Workload<ops::BatchMatMul, RefBackend, DataType::Signed32> : ref::Signed32Kernel<ops::BatchMatMul> {
  explicit Workload(const WorkloadInfo<ops::BatchMatMul>& info)
      : Signed32Kernel(info), geometry_(MatMulGeometry::of(info)) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    ref::multiply_matrices<std::uint32_t>(geometry_, static_cast<const std::int32_t*>(in[0].data),
                                          static_cast<const std::int32_t*>(in[1].data),
                                          static_cast<std::int32_t*>(out[0].data));
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
