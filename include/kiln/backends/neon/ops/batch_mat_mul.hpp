// SPDX-License-Identifier: Apache-2.0
// Neon BatchMatMul: both operands arrive at run time, so nothing is packed; a register tile of 4 (8 with
// AVX-512) rows of A by two vectors of B's rows (b as stored), or four dot products along K (b transposed);
// int8 RefBackend's integer products split over the threads.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "kiln/backends/mat_mul_geometry.hpp"
#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"
#include "kiln/backends/quantized_batch_mat_mul.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

namespace detail {

/// y[Rows x 2 vectors] = a[Rows x k] (strides a_row, a_col) x b[k x 2 vectors] (row stride ldb).
template <std::size_t Rows>
void matmul_tile(const float* a, std::size_t a_row, std::size_t a_col, const float* b, std::size_t ldb, std::size_t k,
                 float* y, std::size_t ldy) {
  Vec acc[Rows][2];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < Rows; ++r) acc[r][0] = acc[r][1] = Vec(0.0f);
  for (std::size_t p = 0; p < k; ++p) {
    const Vec b0 = Vec::load_unaligned(b + p * ldb), b1 = Vec::load_unaligned(b + p * ldb + lanes);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < Rows; ++r) {
      const Vec ar(a[r * a_row + p * a_col]);
      acc[r][0] = xsimd::fma(ar, b0, acc[r][0]);
      acc[r][1] = xsimd::fma(ar, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 8
  for (std::size_t r = 0; r < Rows; ++r) {
    acc[r][0].store_unaligned(y + r * ldy);
    acc[r][1].store_unaligned(y + r * ldy + lanes);
  }
}

template <std::size_t... Rows>
constexpr auto matmul_tiles(std::index_sequence<Rows...>) {
  using Tile =
      void (*)(const float*, std::size_t, std::size_t, const float*, std::size_t, std::size_t, float*, std::size_t);
  return std::array<Tile, sizeof...(Rows)>{&matmul_tile<Rows + 1>...};
}

/// y[rows x n] = a[rows x k] (strides a_row, a_col) x b[k x n] (row stride ldb), rows <= MaxRows:
/// whole blocks of two vectors of columns by the unrolled tile, the last partial block by a
/// generic loop.
template <std::size_t MaxRows>
void matmul_rows(const float* a, std::size_t a_row, std::size_t a_col, const float* b, std::size_t ldb, std::size_t k,
                 std::size_t rows, std::size_t n, float* y, std::size_t ldy) {
  static constexpr auto tiles = matmul_tiles(std::make_index_sequence<MaxRows>{});
  std::size_t j = 0;
  for (; j + 2 * lanes <= n; j += 2 * lanes) tiles[rows - 1](a, a_row, a_col, b + j, ldb, k, y + j, ldy);
  if (j == n) return;
  const std::size_t n0 = std::min(lanes, n - j), n1 = n - j - n0;
  for (std::size_t r = 0; r < rows; ++r) {
    Vec acc0(0.0f), acc1(0.0f);
    for (std::size_t p = 0; p < k; ++p) {
      const float* bp = b + p * ldb + j;
      const Vec ar(a[r * a_row + p * a_col]);
      acc0 = xsimd::fma(ar, load_tail(bp, n0), acc0);
      if (n1 > 0) acc1 = xsimd::fma(ar, load_tail(bp + lanes, n1), acc1);
    }
    float* yr = y + r * ldy + j;
    store_tail(yr, acc0, n0);
    if (n1 > 0) store_tail(yr + lanes, acc1, n1);
  }
}

}  // namespace detail

/// Deviation from Ref: transpose_a and transpose_b together run on the Ref workload.
template <>
struct Kernel<ops::BatchMatMul, DataType::Float32> : Float32Kernel<ops::BatchMatMul> {
  static Status is_supported(const WorkloadInfo<ops::BatchMatMul>& info) {
    if (auto s = Float32Kernel::is_supported(info); !s) return s;
    if (info.params.transpose_a && info.params.transpose_b)
      return Status::error(ErrorCode::Unsupported,
                           "has no BatchMatMul kernel for transpose_a and transpose_b together");
    return Status::ok();
  }

  explicit Kernel(const WorkloadInfo<ops::BatchMatMul>& info) : Float32Kernel(info), g_(MatMulGeometry::of(info)) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const float* a = floats(in[0]);
    const float* b = floats(in[1]);
    float* y = floats(out[0]);
    const std::size_t blocks = (g_.m + rows_per_task - 1) / rows_per_task;
    context.parallel_for(
        g_.pairs.size() * blocks,
        [&](std::size_t task) {
          const MatMulGeometry::Pair& pair = g_.pairs[task / blocks];
          const std::size_t first = task % blocks * rows_per_task, rows = std::min(rows_per_task, g_.m - first);
          const float* am = a + pair.a;
          float* ym = y + (task / blocks) * g_.m * g_.n;
          if (params_.transpose_b)
            dot_rows(am, b + pair.b, ym, first, rows);
          else
            row_tile(am, b + pair.b, ym, first, rows);
        },
        rows_per_task * g_.n * g_.k);
  }

 private:
  static constexpr std::size_t rows_per_task = lanes >= 16 ? 8 : 4;  // accumulators that fit the registers

  // y[first..first+rows) = a rows x b, b stored [K, N].
  void row_tile(const float* a, const float* b, float* y, std::size_t first, std::size_t rows) const {
    const std::size_t a_row = params_.transpose_a ? 1 : g_.k, a_col = params_.transpose_a ? g_.m : 1;
    detail::matmul_rows<rows_per_task>(a + first * a_row, a_row, a_col, b, g_.n, g_.k, rows, g_.n, y + first * g_.n,
                                       g_.n);
  }

  // b stored [N, K] (transpose_b) and a rows contiguous: each y element a dot product along K.
  void dot_rows(const float* a, const float* b, float* y, std::size_t first, std::size_t rows) const {
    constexpr std::size_t together = 4;
    for (std::size_t r = first; r < first + rows; ++r) {
      const float* ar = a + r * g_.k;
      for (std::size_t j = 0; j < g_.n; j += together) {
        const std::size_t count = std::min(together, g_.n - j);
        Vec acc[together];
        for (Vec& v : acc) v = Vec(0.0f);
        for (std::size_t p = 0; p < g_.k; p += lanes) {
          const std::size_t n = std::min(lanes, g_.k - p);
          const Vec av = load_upto(ar + p, n);
          for (std::size_t q = 0; q < count; ++q) {
            const float* bq = b + (j + q) * g_.k + p;
            acc[q] = xsimd::fma(av, load_upto(bq, n), acc[q]);
          }
        }
        for (std::size_t q = 0; q < count; ++q) y[r * g_.n + j + q] = reduce_add(acc[q]);
      }
    }
  }

  MatMulGeometry g_;
};

/// int8: quantized::MatMulStage's integer rows (RefBackend's), blocks of rows of the output
/// matrices split over the threads; the compiler vectorises a block of columns when b's rows are
/// contiguous. Not yet the packed VNNI GEMM of FullyConnected: both operands arrive at run time.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Kernel<ops::BatchMatMul, T> {
  static Status is_supported(const WorkloadInfo<ops::BatchMatMul>& info) {
    return quantized::check_batch_mat_mul(info);
  }
  static Expected<Kernel> create(const WorkloadInfo<ops::BatchMatMul>& info, Context&) {
    auto stage = quantized::MatMulStage::make(info);
    if (!stage) return stage.status();
    return Kernel{*stage, MatMulGeometry::of(info)};
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    constexpr std::size_t rows_per_task = 4;
    const auto* a = static_cast<const element_type_t<T>*>(in[0].data);
    const auto* b = static_cast<const element_type_t<T>*>(in[1].data);
    auto* y = static_cast<element_type_t<T>*>(out[0].data);
    const std::size_t blocks = (geometry.m + rows_per_task - 1) / rows_per_task;
    context.parallel_for(
        geometry.pairs.size() * blocks,
        [&](std::size_t task) {
          const std::size_t first = task % blocks * rows_per_task;
          stage.rows(a, b, y, geometry, task / blocks, first, std::min(rows_per_task, geometry.m - first));
        },
        rows_per_task * geometry.n * geometry.k);
  }

  quantized::MatMulStage stage;
  MatMulGeometry geometry;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
