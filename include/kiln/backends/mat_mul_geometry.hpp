// SPDX-License-Identifier: Apache-2.0
// The matrices a BatchMatMul multiplies, worked out once at load by every backend's workload.
#pragma once

#include <cstddef>
#include <vector>

#include "kiln/backends/ref/ref_kernel.hpp"
#include "kiln/backends/workload.hpp"
#include "kiln/ops/batch_mat_mul.hpp"

namespace kiln {

/// The matrices of a BatchMatMul: y[m x n] = a[m x k] b[k x n] per output matrix, element (i, p)
/// of a at i a_row + p a_col and (p, j) of b at p b_row + j b_col (transposes are strides), and for
/// output matrix t the element offsets pairs[t] of the a and b matrices it multiplies (numpy
/// broadcasting of the batch dimensions).
struct MatMulGeometry {
  struct Pair {
    std::size_t a = 0, b = 0;
  };
  std::size_t m = 0, n = 0, k = 0, a_row = 0, a_col = 0, b_row = 0, b_col = 0;
  std::vector<Pair> pairs;

  static MatMulGeometry of(const WorkloadInfo<ops::BatchMatMul>& info) {
    const ops::BatchMatMul::Params& params = info.params;
    const TensorShape &as = info.inputs[0].shape, &bs = info.inputs[1].shape, &ys = info.outputs[0].shape;
    MatMulGeometry g;
    g.m = ys.dim_from_end(1);
    g.n = ys.dim_from_end(0);
    g.k = params.transpose_a ? as.dim_from_end(1) : as.dim_from_end(0);
    g.a_row = params.transpose_a ? 1 : g.k;
    g.a_col = params.transpose_a ? g.m : 1;
    g.b_row = params.transpose_b ? 1 : g.n;
    g.b_col = params.transpose_b ? g.k : 1;
    const std::size_t batch_rank = ys.rank() - 2;
    const TensorShape y_batch(ys.dims().first(batch_rank));
    const auto a_strides = ref::broadcast_strides_of(TensorShape(as.dims().first(as.rank() - 2)), batch_rank);
    const auto b_strides = ref::broadcast_strides_of(TensorShape(bs.dims().first(bs.rank() - 2)), batch_rank);
    for (std::uint64_t batch = 0; batch < y_batch.num_elements(); ++batch) {
      const auto coords = ref::unravel(batch, y_batch);
      Pair pair;
      for (std::size_t d = 0; d < batch_rank; ++d) {
        pair.a += coords[d] * a_strides[d] * g.m * g.k;
        pair.b += coords[d] * b_strides[d] * g.k * g.n;
      }
      g.pairs.push_back(pair);
    }
    return g;
  }
};

}  // namespace kiln
