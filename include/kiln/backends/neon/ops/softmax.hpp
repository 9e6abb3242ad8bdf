// SPDX-License-Identifier: Apache-2.0
// Neon Softmax: rows along the innermost axis, vectorised max, exp and sum; other axes run Ref's kernel.
// int8 Softmax: the rows of any axis through quantized::SoftmaxStage, split over the threads.
#pragma once

#include <cmath>
#include <limits>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"
#include "kiln/backends/quantized_softmax.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Deviation from Ref: Ref accumulates in double; this sums float vectors lane-wise and then the
/// lanes, so results differ by a few ulps.
template <>
struct Kernel<ops::Softmax, DataType::Float32> : Float32Kernel<ops::Softmax> {
  using Float32Kernel::Float32Kernel;

  static Status is_supported(const WorkloadInfo<ops::Softmax>& info) {
    if (auto s = ref::require_float32(info); !s) return s;
    if (*kiln::detail::normalize_axis(info.params.axis, info.inputs[0].rank()) != info.inputs[0].rank() - 1)
      return Status::error(ErrorCode::Unsupported, "runs Softmax along the innermost axis only");
    return Status::ok();
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const TensorShape& shape = in[0].info.shape;
    const std::size_t length = shape.dim_from_end(0);
    if (length == 0) return;
    const std::size_t rows = in[0].info.num_elements() / length;
    const float* x = floats(in[0]);
    float* y = floats(out[0]);
    const Vec beta(params_.beta);
    // Lanes of the last partial vector that hold data; the zero padding's exp must not be summed.
    const auto tail = lanes_below(length % lanes);
    const std::size_t rows_per_chunk = std::max<std::size_t>(1, stream_chunk / length);
    parallel_chunks(
        context, rows,
        [&](std::size_t first, std::size_t last) {
          for (std::size_t r = first; r < last; ++r) {
            const float* xr = x + r * length;
            float* yr = y + r * length;
            Vec vmax(-std::numeric_limits<float>::infinity());
            std::size_t i = 0;
            for (; i + lanes <= length; i += lanes) vmax = xsimd::max(vmax, beta * Vec::load_unaligned(xr + i));
            float max = reduce_max(vmax);
            for (; i < length; ++i) max = std::max(max, params_.beta * xr[i]);
            const Vec shift(max);
            Vec vsum(0.0f);
            // y holds exp(beta x - max) first: one pass of exp, then a scale (or a log shift).
            i = 0;
            for (; i + lanes <= length; i += lanes) {
              const Vec e = xsimd::exp(beta * Vec::load_unaligned(xr + i) - shift);
              e.store_unaligned(yr + i);
              vsum += e;
            }
            float sum = reduce_add(vsum);
            if (i < length) {
              const std::size_t n = length - i;
              const Vec e = xsimd::exp(beta * load_tail(xr + i, n) - shift);
              store_tail(yr + i, e, n);
              sum += reduce_add(xsimd::select(tail, e, Vec(0.0f)));
            }
            if (params_.log) {
              const Vec log_sum(std::log(sum));
              map(xr, yr, length, [=](Vec v) { return beta * v - shift - log_sum; });
            } else {
              const Vec inverse(1.0f / sum);
              map(yr, yr, length, [=](Vec v) { return v * inverse; });
            }
          }
        },
        rows_per_chunk, length * 16);
  }
};

/// int8: RefBackend's integer rows (quantized::SoftmaxStage), bit-exact by construction, a chunk of
/// rows per thread. A row costs a table lookup and a 64-bit division per element, which is small
/// beside the layers before a classifier's Softmax.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Kernel<ops::Softmax, T> {
  static Status is_supported(const WorkloadInfo<ops::Softmax>& info) { return quantized::check_softmax(info); }
  static Expected<Kernel> create(const WorkloadInfo<ops::Softmax>& info, Context&) {
    auto stage = quantized::SoftmaxStage::make(info);
    if (!stage) return stage.status();
    return Kernel{*stage, info.params.axis};
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const auto rows = quantized::SoftmaxRows::of(in[0].info.shape, axis);
    if (rows.length == 0) return;
    const auto* x = static_cast<const element_type_t<T>*>(in[0].data);
    auto* y = static_cast<element_type_t<T>*>(out[0].data);
    parallel_chunks(
        context, rows.count,
        [&](std::size_t first, std::size_t last) {
          for (std::size_t r = first; r < last; ++r)
            stage.row(x + rows.start(r), y + rows.start(r), rows.length, rows.inner);
        },
        std::max<std::size_t>(1, stream_chunk / rows.length), rows.length * 32);
  }

  quantized::SoftmaxStage stage;
  std::int64_t axis = -1;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
