// SPDX-License-Identifier: Apache-2.0
// Neon Softmax: rows along the innermost axis, vectorised max, exp and sum (Float16 computed in Float32
// lanes); other axes run Ref's kernel.
// int8 Softmax: the rows of any axis through quantized::SoftmaxStage, split over the threads.
#pragma once

#include <cmath>
#include <limits>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"
#include "kiln/backends/quantized_softmax.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Softmax (or LogSoftmax) of each row of `length` elements E: floats, or halves computed in
/// Float32 lanes. Float32 rows hold exp(beta x - max) in y between the passes; a half would round
/// each before the scale, so Float16 rows compute exp again instead (one rounding per result).
template <class E>
void softmax_rows(const E* x, E* y, std::size_t rows, std::size_t length, float beta, bool log, Context& context) {
  constexpr bool exps_in_output = std::same_as<E, float>;
  const Vec vbeta(beta), lowest(-std::numeric_limits<float>::infinity()), zero(0.0f);
  // Lanes of the last partial vector that hold data: its padding must reach neither max nor sum.
  const auto tail = lanes_below(length % lanes);
  auto each_vector = [&](std::size_t count, Vec v, Vec padding) {
    return count == lanes ? v : xsimd::select(tail, v, padding);
  };
  parallel_chunks(
      context, rows,
      [&](std::size_t first, std::size_t last) {
        for (std::size_t r = first; r < last; ++r) {
          const E* xr = x + r * length;
          E* yr = y + r * length;
          Vec vmax = lowest;
          for (std::size_t i = 0; i < length; i += lanes) {
            const std::size_t count = std::min(lanes, length - i);
            vmax = xsimd::max(vmax, each_vector(count, vbeta * load_upto(xr + i, count), lowest));
          }
          const Vec shift(reduce_max(vmax));
          Vec vsum = zero;
          for (std::size_t i = 0; i < length; i += lanes) {
            const std::size_t count = std::min(lanes, length - i);
            const Vec e = xsimd::exp(vbeta * load_upto(xr + i, count) - shift);
            if constexpr (exps_in_output) store_upto(yr + i, e, count);
            vsum += each_vector(count, e, zero);
          }
          const float sum = reduce_add(vsum);
          if (log) {
            const Vec log_sum(std::log(sum));
            map(xr, yr, length, [=](Vec v) { return vbeta * v - shift - log_sum; });
          } else if (const Vec inverse(1.0f / sum); exps_in_output) {
            map(yr, yr, length, [=](Vec e) { return e * inverse; });
          } else {
            map(xr, yr, length, [=](Vec v) { return xsimd::exp(vbeta * v - shift) * inverse; });
          }
        }
      },
      std::max<std::size_t>(1, stream_chunk / length), length * 16);
}

/// Fails unless the layer is in `type` and its axis is the innermost, the rows the kernels run.
inline Status require_innermost_softmax(const WorkloadInfo<ops::Softmax>& info, DataType type) {
  if (auto s = ref::require_type(info, type); !s) return s;
  if (*kiln::detail::normalize_axis(info.params.axis, info.inputs[0].rank()) != info.inputs[0].rank() - 1)
    return Status::error(ErrorCode::Unsupported, "runs Softmax along the innermost axis only");
  return Status::ok();
}

/// The layer's rows of elements E.
template <class E>
void softmax(const ops::Softmax::Params& params, const ConstTensor& in, const Tensor& out, Context& context) {
  const std::size_t length = in.info.shape.dim_from_end(0);
  if (length == 0) return;
  softmax_rows(static_cast<const E*>(in.data), static_cast<E*>(out.data), in.info.num_elements() / length, length,
               params.beta, params.log, context);
}

/// Deviation from Ref: Ref accumulates in double; this sums float vectors lane-wise and then the
/// lanes, so results differ by a few ulps.
template <>
struct Kernel<ops::Softmax, DataType::Float32> : Float32Kernel<ops::Softmax> {
  using Float32Kernel::Float32Kernel;
  static Status is_supported(const WorkloadInfo<ops::Softmax>& info) {
    return require_innermost_softmax(info, DataType::Float32);
  }
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    softmax<float>(params_, in[0], out[0], context);
  }
};

/// Float16: halves read and written in place, with no Float32 buffers.
template <>
struct Kernel<ops::Softmax, DataType::Float16> : Float16Kernel<ops::Softmax> {
  using Float16Kernel::Float16Kernel;
  static Status is_supported(const WorkloadInfo<ops::Softmax>& info) {
    return require_innermost_softmax(info, DataType::Float16);
  }
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    softmax<Half>(params_, in[0], out[0], context);
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
