// SPDX-License-Identifier: Apache-2.0
// Matrix products on kernels/matmul.cl's gemm: the weights layout it reads and its launch geometry.
#pragma once

#include <vector>

#include "kiln/core/half.hpp"

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln::opencl {

/// Constant weights [N, K] (one row per output feature, as FullyConnected and 1x1 convolutions
/// keep them) transposed once, at load, into the [K, N] layout the gemm kernel streams; their
/// elements are floats or, for a Float16 layer, halves.
inline Expected<cl::Buffer> upload_transposed(Context& context, const TensorInfo& info, const void* weights,
                                              std::uint32_t n, std::uint32_t k) {
  auto transpose = [&]<class E>(const E* from) {
    std::vector<E> transposed(std::size_t{n} * k);
    for (std::uint32_t j = 0; j < n; ++j)
      for (std::uint32_t p = 0; p < k; ++p) transposed[std::size_t{p} * n + j] = from[std::size_t{j} * k + p];
    return context.upload(transposed.data(), transposed.size() * sizeof(E));
  };
  if (info.type == DataType::Float16) return transpose(static_cast<const Half*>(weights));
  return transpose(static_cast<const float*>(weights));
}

/// The gemm kernel's global size for an m x n result: one work-item per 4 x 8 tile.
inline cl::NDRange gemm_range(std::size_t m, std::size_t n) { return cl::NDRange((n + 7) / 8, (m + 3) / 4); }

}  // namespace kiln::opencl
