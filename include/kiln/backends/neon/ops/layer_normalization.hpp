// SPDX-License-Identifier: Apache-2.0
// Neon LayerNormalization: each row's sum, then its squared deviations, then the scaled result, a
// vector at a time; rows split over the threads. Float16 reads and writes halves and computes in
// Float32 lanes.
#pragma once

#include <cmath>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Normalises `rows` rows of `length` elements E (floats, or halves): the mean and the variance
/// in two passes over the row, as RefBackend takes them (a one-pass sum of squares would cancel
/// for rows far from zero), then (x - mean) / sqrt(variance + epsilon) * scale (+ bias).
/// With `means` and `inverses`, each row's mean and 1 / sqrt(variance + epsilon) go there too.
/// Deviation from Ref: float lanes, summed lane-wise and then across the lanes, where Ref sums in
/// double; results differ by a few ulps.
template <class E>
void layer_normalization_rows(const E* x, const E* scale, const E* bias, E* y, E* means, E* inverses, std::size_t rows,
                              std::size_t length, float epsilon, Context& context) {
  const auto tail = lanes_below(length % lanes);
  const Vec zero(0.0f);
  parallel_chunks(
      context, rows,
      [&](std::size_t first, std::size_t last) {
        for (std::size_t r = first; r < last; ++r) {
          const E* xr = x + r * length;
          E* yr = y + r * length;
          Vec sum = zero;  // a tail's lanes past the row load as zeros
          for (std::size_t i = 0; i < length; i += lanes) sum += load_upto(xr + i, std::min(lanes, length - i));
          const Vec mean(reduce_add(sum) / static_cast<float>(length));
          Vec squares = zero;
          for (std::size_t i = 0; i < length; i += lanes) {
            const std::size_t count = std::min(lanes, length - i);
            Vec d = load_upto(xr + i, count) - mean;
            if (count < lanes) d = xsimd::select(tail, d, zero);
            squares = multiply_add(d, d, squares);
          }
          const Vec inverse(1.0f / std::sqrt(reduce_add(squares) / static_cast<float>(length) + epsilon));
          if (means) {
            store_upto(means + r, mean, 1);
            store_upto(inverses + r, inverse, 1);
          }
          for (std::size_t i = 0; i < length; i += lanes) {
            const std::size_t count = std::min(lanes, length - i);
            const Vec normalized = (load_upto(xr + i, count) - mean) * inverse;
            store_upto(yr + i,
                       bias ? multiply_add(normalized, load_upto(scale + i, count), load_upto(bias + i, count))
                            : normalized * load_upto(scale + i, count),
                       count);
          }
        }
      },
      std::max<std::size_t>(1, stream_chunk / std::max<std::size_t>(length, 1)), length * 8);
}

/// Float32, and Float16 with no Float32 buffers.
template <DataType Type>
requires(Type == DataType::Float32 || Type == DataType::Float16) struct Kernel<ops::LayerNormalization, Type> {
  using E = element_type_t<Type>;
  explicit Kernel(const WorkloadInfo<ops::LayerNormalization>& info) : params_(info.params) {}
  static Status is_supported(const WorkloadInfo<ops::LayerNormalization>& info) {
    return ref::require_type(info, Type);
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const TensorShape& shape = in[0].info.shape;
    const std::size_t axis = *ops::LayerNormalization::first_row_dimension(params_, shape.rank());
    const std::size_t length = shape.num_elements(axis, shape.rank());
    if (length == 0) return;
    const bool statistics = out.size() > 1;
    layer_normalization_rows(static_cast<const E*>(in[0].data), static_cast<const E*>(in[1].data),
                             in.size() > 2 ? static_cast<const E*>(in[2].data) : nullptr, static_cast<E*>(out[0].data),
                             statistics ? static_cast<E*>(out[1].data) : nullptr,
                             statistics ? static_cast<E*>(out[2].data) : nullptr, shape.num_elements() / length, length,
                             params_.epsilon, context);
  }

 private:
  ops::LayerNormalization::Params params_;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
