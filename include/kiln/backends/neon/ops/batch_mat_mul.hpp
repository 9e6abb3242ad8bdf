// SPDX-License-Identifier: Apache-2.0
// Neon BatchMatMul: both operands arrive at run time, so nothing is packed; a register tile of 4 (8 with
// AVX-512) rows of A by two vectors of B's rows (b as stored), or four dot products along K (b transposed).
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

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

  explicit Kernel(const WorkloadInfo<ops::BatchMatMul>& info) : Float32Kernel(info) {
    const TensorShape& as = info.inputs[0].shape;
    const TensorShape& bs = info.inputs[1].shape;
    const TensorShape& ys = info.outputs[0].shape;
    m_ = ys.dim_from_end(1), n_ = ys.dim_from_end(0);
    k_ = params_.transpose_a ? as.dim_from_end(1) : as.dim_from_end(0);
    const std::size_t batch_rank = ys.rank() - 2;
    const TensorShape y_batch(ys.dims().first(batch_rank));
    const auto a_strides = ref::broadcast_strides_of(TensorShape(as.dims().first(as.rank() - 2)), batch_rank);
    const auto b_strides = ref::broadcast_strides_of(TensorShape(bs.dims().first(bs.rank() - 2)), batch_rank);
    for (std::uint64_t batch = 0; batch < y_batch.num_elements(); ++batch) {
      const auto coords = ref::unravel(batch, y_batch);
      Pair pair;
      for (std::size_t d = 0; d < batch_rank; ++d) {
        pair.a += coords[d] * a_strides[d] * m_ * k_;
        pair.b += coords[d] * b_strides[d] * k_ * n_;
      }
      pairs_.push_back(pair);
    }
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const float* a = floats(in[0]);
    const float* b = floats(in[1]);
    float* y = floats(out[0]);
    const std::size_t blocks = (m_ + rows_per_task - 1) / rows_per_task;
    context.parallel_for(
        pairs_.size() * blocks,
        [&](std::size_t task) {
          const Pair& pair = pairs_[task / blocks];
          const std::size_t first = task % blocks * rows_per_task, rows = std::min(rows_per_task, m_ - first);
          const float* am = a + pair.a;
          float* ym = y + (task / blocks) * m_ * n_;
          if (params_.transpose_b)
            dot_rows(am, b + pair.b, ym, first, rows);
          else
            row_tile(am, b + pair.b, ym, first, rows);
        },
        rows_per_task * n_ * k_);
  }

 private:
  static constexpr std::size_t rows_per_task = lanes >= 16 ? 8 : 4;  // accumulators that fit the registers
  struct Pair {
    std::uint64_t a = 0, b = 0;  // element offsets of the two matrices one output matrix multiplies
  };

  // y[first..first+rows) = a rows x b, b stored [K, N]: two vectors of each b row per step of K,
  // whole blocks of columns by the unrolled tile, the last partial block by the generic loop.
  void row_tile(const float* a, const float* b, float* y, std::size_t first, std::size_t rows) const {
    static constexpr auto tiles = detail::matmul_tiles(std::make_index_sequence<rows_per_task>{});
    const std::size_t a_row = params_.transpose_a ? 1 : k_, a_col = params_.transpose_a ? m_ : 1;
    const float* a_first = a + first * a_row;
    std::size_t j = 0;
    for (; j + 2 * lanes <= n_; j += 2 * lanes)
      tiles[rows - 1](a_first, a_row, a_col, b + j, n_, k_, y + first * n_ + j, n_);
    if (j == n_) return;
    const std::size_t n0 = std::min(lanes, n_ - j), n1 = n_ - j - n0;
    for (std::size_t r = 0; r < rows; ++r) {
      Vec acc0(0.0f), acc1(0.0f);
      for (std::size_t p = 0; p < k_; ++p) {
        const float* bp = b + p * n_ + j;
        const Vec ar(a_first[r * a_row + p * a_col]);
        acc0 = xsimd::fma(ar, load_tail(bp, n0), acc0);
        if (n1 > 0) acc1 = xsimd::fma(ar, load_tail(bp + lanes, n1), acc1);
      }
      float* yr = y + (first + r) * n_ + j;
      store_tail(yr, acc0, n0);
      if (n1 > 0) store_tail(yr + lanes, acc1, n1);
    }
  }

  // b stored [N, K] (transpose_b) and a rows contiguous: each y element a dot product along K.
  void dot_rows(const float* a, const float* b, float* y, std::size_t first, std::size_t rows) const {
    constexpr std::size_t together = 4;
    for (std::size_t r = first; r < first + rows; ++r) {
      const float* ar = a + r * k_;
      for (std::size_t j = 0; j < n_; j += together) {
        const std::size_t count = std::min(together, n_ - j);
        Vec acc[together];
        for (Vec& v : acc) v = Vec(0.0f);
        for (std::size_t p = 0; p < k_; p += lanes) {
          const std::size_t n = std::min(lanes, k_ - p);
          const Vec av = load_upto(ar + p, n);
          for (std::size_t q = 0; q < count; ++q) {
            const float* bq = b + (j + q) * k_ + p;
            acc[q] = xsimd::fma(av, load_upto(bq, n), acc[q]);
          }
        }
        for (std::size_t q = 0; q < count; ++q) y[r * n_ + j + q] = reduce_add(acc[q]);
      }
    }
  }

  std::size_t m_ = 0, n_ = 0, k_ = 0;
  std::vector<Pair> pairs_;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
