// SPDX-License-Identifier: Apache-2.0
// Neon Quantize (a vector at a time), Dequantize and Requantize (a 256-entry table built at load by
// RefBackend's rule, since an 8-bit input has only 256 values): bit-exact with RefBackend.
#pragma once

#include <array>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/int8_dot.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"
#include "kiln/backends/ref/ops/quantize.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

template <>
struct Kernel<ops::Quantize, DataType::Float32> {
  static Status is_supported(const WorkloadInfo<ops::Quantize>& info) {
    return ref::require_per_tensor(info.outputs[0], ops::Quantize::name);
  }
  explicit Kernel(const WorkloadInfo<ops::Quantize>& info)
      : ties_away_(info.arithmetic == QuantizedArithmetic::TfLite) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const float scale = out[0].info.quantization.scales[0];
    const std::int32_t zero_point = out[0].info.quantization.offset;
    const QuantizedRange range = quantized_range(out[0].info.type);
    // Clamping before rounding to integral bounds is clamping after, and keeps the conversion in range.
    const Vec lo(static_cast<float>(range.lo - zero_point)), hi(static_cast<float>(range.hi - zero_point));
    const float* x = floats(in[0]);
    auto* y = static_cast<std::uint8_t*>(out[0].data);
    static_assert(lanes % Int8Dot::lanes == 0, "a float vector's results narrow in whole Int8Dot vectors");
    parallel_chunks(context, in[0].info.num_elements(), [&](std::size_t begin, std::size_t end) {
      std::size_t i = begin;
      for (alignas(64) std::array<std::int32_t, lanes> q; i + lanes <= end; i += lanes) {
        Vec v = Vec::load_unaligned(x + i) / Vec(scale);
        v = xsimd::min(xsimd::max(xsimd::select(xsimd::isnan(v), Vec(0.0f), v), lo), hi);
        ((ties_away_ ? round_half_away_to_int(v) : round_to_int(v)) + zero_point).store_aligned(q.data());
        for (std::size_t lane = 0; lane < lanes; lane += Int8Dot::lanes)
          Int8Dot::store_bytes(Int8Dot::load(q.data() + lane), y + i + lane, Int8Dot::lanes);
      }
      for (; i < end; ++i) y[i] = static_cast<std::uint8_t>(quantize(x[i], scale, zero_point, range, ties_away_));
    });
  }

 private:
  bool ties_away_;  ///< TensorFlow Lite's rounding
};

/// A per-tensor conversion of 8-bit input as a table of its 256 possible values, indexed by byte.
template <class T>
class ByteTable {
 public:
  template <class F>
  ByteTable(DataType input_type, F&& value_of) {
    for (unsigned byte = 0; byte < 256; ++byte)
      table_[byte] = static_cast<T>(value_of(input_type == DataType::QAsymmU8
                                                 ? static_cast<std::int32_t>(byte)
                                                 : static_cast<std::int32_t>(static_cast<std::int8_t>(byte))));
  }

  void run(const ConstTensor& in, const Tensor& out, Context& context) const {
    const auto* x = static_cast<const std::uint8_t*>(in.data);
    T* y = static_cast<T*>(out.data);
    parallel_chunks(context, in.info.num_elements(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) y[i] = table_[x[i]];
    });
  }

 private:
  std::array<T, 256> table_{};
};

template <DataType T>
requires(is_quantized(T)) struct Kernel<ops::Dequantize, T> {
  static Status is_supported(const WorkloadInfo<ops::Dequantize>& info) {
    return ref::require_per_tensor(info.inputs[0], ops::Dequantize::name);
  }
  explicit Kernel(const WorkloadInfo<ops::Dequantize>& info)
      : table_(T, [&q = info.inputs[0].quantization](std::int32_t v) { return dequantize(v, q.scales[0], q.offset); }) {
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    table_.run(in[0], out[0], context);
  }

 private:
  ByteTable<float> table_;
};

template <DataType T>
requires(is_quantized(T)) struct Kernel<ops::Requantize, T> {
  static Status is_supported(const WorkloadInfo<ops::Requantize>& info) {
    return ref::requantize_multiplier(info).status();
  }
  static Expected<Kernel> create(const WorkloadInfo<ops::Requantize>& info, Context&) {
    auto multiplier = ref::requantize_multiplier(info);
    if (!multiplier) return multiplier.status();
    const std::int32_t in_zero = info.inputs[0].quantization.offset, out_zero = info.outputs[0].quantization.offset;
    const QuantizedRange range = quantized_range(info.outputs[0].type);
    return Kernel(ByteTable<std::uint8_t>(T, [&](std::int32_t v) {
      return static_cast<std::uint8_t>(requantize(v - in_zero, *multiplier, out_zero, range.lo, range.hi));
    }));
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    table_.run(in[0], out[0], context);
  }

 private:
  explicit Kernel(ByteTable<std::uint8_t> table) : table_(std::move(table)) {}
  ByteTable<std::uint8_t> table_;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
