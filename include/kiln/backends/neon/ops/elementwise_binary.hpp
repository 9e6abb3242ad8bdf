// SPDX-License-Identifier: Apache-2.0
// Neon ElementwiseBinary: rows of the innermost dimension, each operand contiguous or broadcast along it.
#pragma once

#include <limits>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

template <>
struct Kernel<ops::ElementwiseBinary, DataType::Float32> : Float32Kernel<ops::ElementwiseBinary> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    using O = ops::BinaryOperation;
    auto nan_if_either = [](Vec a, Vec b, Vec r) {  // numpy maximum/minimum propagate NaN
      return xsimd::select(xsimd::isnan(a) || xsimd::isnan(b), Vec(std::numeric_limits<float>::quiet_NaN()), r);
    };
    auto with_op = [&](auto f) { broadcast_rows(in, out, context, params_.activation, f); };
    switch (params_.operation) {
      case O::Add: return with_op([](Vec a, Vec b) { return a + b; });
      case O::Sub: return with_op([](Vec a, Vec b) { return a - b; });
      case O::Mul: return with_op([](Vec a, Vec b) { return a * b; });
      case O::Div: return with_op([](Vec a, Vec b) { return a / b; });
      case O::Maximum: return with_op([=](Vec a, Vec b) { return nan_if_either(a, b, xsimd::max(a, b)); });
      case O::Minimum: return with_op([=](Vec a, Vec b) { return nan_if_either(a, b, xsimd::min(a, b)); });
      case O::Power: return with_op([](Vec a, Vec b) { return xsimd::pow(a, b); });
    }
  }

 private:
  // One row is the output's innermost dimension; an operand broadcast along it is a scalar there.
  // A fused activation runs on each chunk right after it is computed, while it is in cache.
  template <class F>
  static void broadcast_rows(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
                             const std::optional<ops::Activation::Params>& activation, F f) {
    const TensorShape& ys = out[0].info.shape;
    const std::size_t rank = ys.rank();
    const float* a = floats(in[0]);
    const float* b = floats(in[1]);
    float* y = floats(out[0]);
    const std::uint64_t total = ys.num_elements();
    if (total == 0) return;
    const ref::Strides sa = ref::broadcast_strides_of(in[0].info.shape, rank);
    const ref::Strides sb = ref::broadcast_strides_of(in[1].info.shape, rank);
    const bool same = in[0].info.shape == in[1].info.shape;
    // Equal shapes and scalar operands are one flat row; otherwise rows of the innermost dimension.
    const std::uint64_t row = same || rank == 0 ? total : ys[rank - 1];
    const bool a_varies = same || (in[0].info.num_elements() != 1 && rank != 0 && sa[rank - 1] != 0);
    const bool b_varies = same || (in[1].info.num_elements() != 1 && rank != 0 && sb[rank - 1] != 0);
    const std::uint64_t rows = total / row;
    auto run_row = [&](std::uint64_t r, std::uint64_t begin, std::uint64_t end) {
      std::uint64_t ia = 0, ib = 0;
      if (!same) {
        std::uint64_t rest = r;
        for (std::size_t d = rank - 1; d-- > 0;) {
          const std::uint64_t coord = rest % ys[d];
          rest /= ys[d];
          ia += coord * sa[d];
          ib += coord * sb[d];
        }
      }
      const float* pa = a + ia;
      const float* pb = b + ib;
      float* py = y + r * row;
      auto load = [](const float* p, bool varies, std::uint64_t i) {
        return varies ? Vec::load_unaligned(p + i) : Vec(*p);
      };
      auto load_partial = [](const float* p, bool varies, std::uint64_t i, std::size_t n) {
        return varies ? load_tail(p + i, n) : Vec(*p);
      };
      std::uint64_t i = begin;
      for (; i + lanes <= end; i += lanes) f(load(pa, a_varies, i), load(pb, b_varies, i)).store_unaligned(py + i);
      if (i < end) {
        const std::size_t n = end - i;
        store_tail(py + i, f(load_partial(pa, a_varies, i, n), load_partial(pb, b_varies, i, n)), n);
      }
      apply_activation(activation, py + begin, end - begin);
    };
    if (rows == 1) {
      parallel_chunks(context, row, [&](std::size_t begin, std::size_t end) { run_row(0, begin, end); });
      return;
    }
    const std::size_t rows_per_chunk = std::max<std::uint64_t>(1, stream_chunk / row);
    parallel_chunks(
        context, rows,
        [&](std::size_t first, std::size_t last) {
          for (std::size_t r = first; r < last; ++r) run_row(r, 0, row);
        },
        rows_per_chunk, row * 16);
  }
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
