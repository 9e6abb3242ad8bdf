// SPDX-License-Identifier: Apache-2.0
// Reference BatchMatMul: one triple loop per pair of broadcast batch matrices.
#pragma once

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::BatchMatMul, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::BatchMatMul> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const TensorShape& as = in[0].info.shape;
    const TensorShape& bs = in[1].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const std::size_t batch_rank = ys.rank() - 2;
    const std::uint32_t m = ys.dim_from_end(1), n = ys.dim_from_end(0);
    const std::uint32_t k = params_.transpose_a ? as.dim_from_end(1) : as.dim_from_end(0);
    // Element strides of row/column within one matrix of a and b.
    const std::uint64_t a_row = params_.transpose_a ? 1 : k, a_col = params_.transpose_a ? m : 1;
    const std::uint64_t b_row = params_.transpose_b ? 1 : n, b_col = params_.transpose_b ? k : 1;
    const TensorShape a_batch(as.dims().first(as.rank() - 2)), b_batch(bs.dims().first(bs.rank() - 2));
    const TensorShape y_batch(ys.dims().first(batch_rank));
    const ref::Strides a_strides = ref::broadcast_strides_of(a_batch, batch_rank);
    const ref::Strides b_strides = ref::broadcast_strides_of(b_batch, batch_rank);
    const float* a = ref::floats(in[0]);
    const float* b = ref::floats(in[1]);
    float* y = ref::floats(out[0]);
    for (std::uint64_t batch = 0; batch < y_batch.num_elements(); ++batch) {
      const auto coords = ref::unravel(batch, y_batch);
      std::uint64_t a_matrix = 0, b_matrix = 0;
      for (std::size_t d = 0; d < batch_rank; ++d) {
        a_matrix += coords[d] * a_strides[d];
        b_matrix += coords[d] * b_strides[d];
      }
      const float* am = a + a_matrix * m * k;
      const float* bm = b + b_matrix * k * n;
      float* ym = y + batch * m * n;
      for (std::uint32_t i = 0; i < m; ++i)
        for (std::uint32_t j = 0; j < n; ++j) {
          float sum = 0.0f;
          for (std::uint32_t p = 0; p < k; ++p) sum += am[i * a_row + p * a_col] * bm[p * b_row + j * b_col];
          ym[std::uint64_t{i} * n + j] = sum;
        }
    }
  }
};

}  // namespace kiln
