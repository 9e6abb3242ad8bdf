// SPDX-License-Identifier: Apache-2.0
// Reference Quantize, Dequantize and Requantize: one value at a time, by decision 0014's rules.
#pragma once

#include <cstdint>
#include <string_view>

#include "kiln/backends/quantized_layer.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"
#include "kiln/core/requantization.hpp"

namespace kiln {

namespace ref {

/// Fails for a tensor quantised per axis, for conversions (NeonBackend's, ClBackend's) that take one scale.
inline Status require_per_tensor(const TensorInfo& info, std::string_view op) {
  if (info.quantization.is_per_axis())
    return Status::error(ErrorCode::Unsupported, "runs ", op, " quantised per tensor only; ", info.to_string(), " has ",
                         info.quantization.scales.size(), " scales");
  return Status::ok();
}

/// Stores q, which lies in the range of the tensor's 8-bit type: the same byte for uint8 and int8.
inline void store_8bit(const Tensor& t, std::uint64_t i, std::int32_t q) {
  static_cast<std::uint8_t*>(t.data)[i] = static_cast<std::uint8_t>(q);
}

}  // namespace ref

template <>
struct Workload<ops::Quantize, RefBackend, DataType::Float32> {
  explicit Workload(const WorkloadInfo<ops::Quantize>& info)
      : scales_(info.outputs[0]), ties_away_(info.arithmetic == QuantizedArithmetic::TfLite) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const float* x = ref::floats(in[0]);
    const std::int32_t zero_point = out[0].info.quantization.offset;
    const QuantizedRange range = quantized_range(out[0].info.type);
    for (std::uint64_t i = 0; i < in[0].info.num_elements(); ++i)
      ref::store_8bit(out[0], i, quantize(x[i], scales_(i), zero_point, range, ties_away_));
  }

 private:
  ElementScales scales_;
  bool ties_away_;  ///< TensorFlow Lite's rounding
};

/// Every input type Dequantize takes (ops::Dequantize::infer checks them).
template <DataType T>
requires(is_quantized(T) || T == DataType::Signed32) struct Workload<ops::Dequantize, RefBackend, T> {
  explicit Workload(const WorkloadInfo<ops::Dequantize>& info) : scales_(info.inputs[0]) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const std::int32_t zero_point = in[0].info.quantization.offset;
    float* y = ref::floats(out[0]);
    for (std::uint64_t i = 0; i < in[0].info.num_elements(); ++i)
      y[i] = dequantize(integer_at(in[0], i), scales_(i), zero_point);
  }

 private:
  ElementScales scales_;
};

namespace ref {

/// Base of RefBackend's int8 layers with weights (Derived: Convolution2d, DepthwiseConvolution2d,
/// FullyConnected): the checks, the output stage made at load, and the store that passes each
/// accumulator through it.
template <class Op, class Derived>
class Int8Kernel {
 public:
  static Status is_supported(const WorkloadInfo<Op>& info) { return quantized::check_layer(info); }
  static Expected<Derived> create(const WorkloadInfo<Op>& info, Context&) {
    auto stage = quantized::OutputStage::make(info);
    if (!stage) return stage.status();
    Derived workload;
    workload.params_ = info.params;
    workload.stage_ = std::move(*stage);
    return workload;
  }

 protected:
  /// Receives (output index, int64 sum, output channel) from the op's loop nest.
  auto store_to(const Tensor& out) const {
    return [this, &out](std::uint64_t i, std::int64_t sum, std::uint32_t channel) {
      store_8bit(out, i, stage_(quantized::saturate_to_int32(sum), channel));
    };
  }

  typename Op::Params params_;
  quantized::OutputStage stage_;
};

/// Requantize's multiplier, input scale / output scale, made at load.
inline Expected<Requantization> requantize_multiplier(const WorkloadInfo<ops::Requantize>& info) {
  return Requantization::from_real(
      static_cast<double>(info.inputs[0].quantization.scales[0]) / info.outputs[0].quantization.scales[0],
      info.arithmetic);
}

}  // namespace ref

template <DataType T>
requires(is_quantized(T)) struct Workload<ops::Requantize, RefBackend, T> {
  static Status is_supported(const WorkloadInfo<ops::Requantize>& info) {
    return ref::requantize_multiplier(info).status();
  }
  static Expected<Workload> create(const WorkloadInfo<ops::Requantize>& info, ref::Context&) {
    auto multiplier = ref::requantize_multiplier(info);
    if (!multiplier) return multiplier.status();
    return Workload{*multiplier};
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const std::int32_t in_zero = in[0].info.quantization.offset, out_zero = out[0].info.quantization.offset;
    const QuantizedRange range = quantized_range(out[0].info.type);
    for (std::uint64_t i = 0; i < in[0].info.num_elements(); ++i)
      ref::store_8bit(out[0], i, requantize(integer_at(in[0], i) - in_zero, multiplier, out_zero, range.lo, range.hi));
  }

  Requantization multiplier;
};

}  // namespace kiln
