// SPDX-License-Identifier: Apache-2.0
// What every backend's int8 layers with weights share (decision 0014): the checks of their tensors,
// and the output stage, made at load, that turns an int32 accumulator into an 8-bit output.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "kiln/backends/workload.hpp"
#include "kiln/core/requantization.hpp"
#include "kiln/ops/op_list.hpp"

namespace kiln::quantized {

/// The longest reduction an int8 layer takes: |sum (x - zx) w| <= 2^15 x K stays within 2^30.
inline constexpr std::uint64_t max_reduction = std::uint64_t{1} << 15;
/// The largest constant bias: with the sum above, every accumulator fits int32.
inline constexpr std::int64_t max_bias = std::int64_t{1} << 30;

constexpr bool is_activation_type(DataType type) { return type == DataType::QAsymmU8 || type == DataType::QAsymmS8; }

/// Fails unless `info` is a QAsymmU8 or QAsymmS8 tensor quantised per tensor. (Each int8 op's check
/// spells out its own one-type-in-and-out message: a shared helper for it moved the message's
/// Status::error instantiation out of line in the AVX objects only, which the isa_symbols test
/// refuses — decision 0009.)
inline Status require_activation(const TensorInfo& info, std::string_view role) {
  if (!is_activation_type(info.type))
    return Status::error(ErrorCode::Unsupported, "runs int8 layers on QAsymmU8 or QAsymmS8 ", role, "s; ", role, " is ",
                         info.to_string());
  if (info.quantization.is_per_axis())
    return Status::error(ErrorCode::Unsupported, "quantises the ", role, " of an int8 layer per tensor only; it has ",
                         info.quantization.scales.size(), " scales");
  return Status::ok();
}

/// The real multiplier of output channel c: input scale x weight scale / output scale.
inline double real_multiplier(const TensorInfo& input, const TensorInfo& weights, const TensorInfo& output,
                              std::size_t channel) {
  const auto& w = weights.quantization.scales;
  return static_cast<double>(input.quantization.scales[0]) * w[w.size() == 1 ? 0 : channel] /
         output.quantization.scales[0];
}

/// The axis of an int8 layer's weights that runs over its output channels: Convolution2d's OHWI and
/// FullyConnected's [N, K] have it outermost, DepthwiseConvolution2d's [1, KH, KW, C] innermost.
template <class Op>
inline constexpr std::size_t channel_axis_v = std::same_as<Op, ops::DepthwiseConvolution2d> ? 3 : 0;

/// How many products an output of an Op layer with weights of shape `w` sums.
template <class Op>
std::uint64_t reduction_length(const TensorShape& w) {
  if constexpr (std::same_as<Op, ops::Convolution2d> || std::same_as<Op, ops::TransposeConvolution2d>)
    return std::uint64_t{w[1]} * w[2] * w[3];  // a transposed convolution's output sums at most that many
  else if constexpr (std::same_as<Op, ops::DepthwiseConvolution2d>)
    return std::uint64_t{w[1]} * w[2];
  else
    return w[1];
}

/// The bounds of an int8 output y: its type's range, narrowed by a fused ReLU-family clamp whose
/// bounds are quantised as Quantize would (round half to even), or in TensorFlow Lite's arithmetic
/// as it rounds them (half away from zero).
struct OutputRange {
  std::int32_t lo = 0, hi = 0;
  static OutputRange of(const TensorInfo& y, const std::optional<ops::Activation::Params>& activation,
                        QuantizedArithmetic arithmetic = QuantizedArithmetic::Kiln) {
    const QuantizedRange range = quantized_range(y.type);
    OutputRange out{range.lo, range.hi};
    if (activation) {
      const float scale = y.quantization.scales[0];
      const std::int32_t zero = y.quantization.offset;
      auto bound = [&](float v) {
        if (arithmetic == QuantizedArithmetic::Kiln) return quantize(v, scale, zero, range);
        return std::clamp(zero + static_cast<std::int32_t>(std::round(v / scale)), range.lo, range.hi);
      };
      const bool bounded = activation->function == ops::ActivationFunction::BoundedReLU;
      out.lo = bound(bounded ? activation->b : 0.0f);
      if (bounded) out.hi = bound(activation->a);
    }
    return out;
  }
};

/// The activation an int8 layer's parameters fuse, if they have one (TransposeConvolution2d's do not).
template <class Params>
std::optional<ops::Activation::Params> fused_activation(const Params& params) {
  if constexpr (requires { params.activation; })
    return params.activation;
  else
    return std::nullopt;
}

/// Fails unless `activation` is absent or a ReLU-family clamp, the only ones int8 layers fuse.
inline Status require_clamp(const std::optional<ops::Activation::Params>& activation) {
  if (activation && activation->function != ops::ActivationFunction::ReLU &&
      activation->function != ops::ActivationFunction::BoundedReLU)
    return Status::error(ErrorCode::Unsupported, "fuses ReLU-family clamps only into int8 layers");
  return Status::ok();
}

/// What turns the int32 accumulator of output channel c into the output: round(acc x M_c) + zo,
/// clamped to the output type's range narrowed by a fused ReLU-family clamp. Made at load.
class OutputStage {
 public:
  template <class Op>
  static Expected<OutputStage> make(const WorkloadInfo<Op>& info) {
    OutputStage stage;
    auto multipliers = keep_array<Requantization>(info.kept, channels(info));
    if (!multipliers) return multipliers.status();
    stage.multipliers_ = std::move(*multipliers);
    if (auto s = compute(info, &stage.multipliers_); !s) return s;
    const TensorInfo& y = info.outputs[0];
    stage.zero_point_ = y.quantization.offset;
    stage.range_ = OutputRange::of(y, fused_activation(info.params), info.arithmetic);
    return stage;
  }
  /// What make() refuses, found without keeping anything.
  template <class Op>
  static Status check(const WorkloadInfo<Op>& info) {
    return compute(info, nullptr);
  }

  std::int32_t operator()(std::int32_t acc, std::size_t channel) const {
    return requantize(acc, multiplier(channel), zero_point_, range_.lo, range_.hi);
  }

  /// The parts, for kernels that requantize a vector of channels at a time.
  const Requantization& multiplier(std::size_t channel) const {
    return multipliers_[multipliers_.size() == 1 ? 0 : channel];
  }
  std::int32_t zero_point() const noexcept { return zero_point_; }
  std::int32_t lo() const noexcept { return range_.lo; }
  std::int32_t hi() const noexcept { return range_.hi; }

 private:
  template <class Op>
  static std::size_t channels(const WorkloadInfo<Op>& info) {
    const TensorInfo& w = info.inputs[1];
    return w.quantization.scales.size() == 1 ? 1 : w.shape[channel_axis_v<Op>];
  }
  /// Each channel's multiplier, into `multipliers` unless null.
  template <class Op>
  static Status compute(const WorkloadInfo<Op>& info, KeptArray<Requantization>* multipliers) {
    for (std::size_t c = 0; c < channels(info); ++c) {
      auto m = Requantization::from_real(real_multiplier(info.inputs[0], info.inputs[1], info.outputs[0], c),
                                         info.arithmetic);
      if (!m) return m.status();
      if (multipliers) (*multipliers)[c] = *m;
    }
    return Status::ok();
  }

  KeptArray<Requantization> multipliers_;
  std::int32_t zero_point_ = 0;
  OutputRange range_;
};

/// Checks an int8 layer with weights (Convolution2d, DepthwiseConvolution2d, FullyConnected): input 0
/// and the output QAsymmU8 or QAsymmS8 of the same type, per tensor; input 1 QSymmS8 weights per
/// tensor or per output channel; an optional Signed32 bias at scale input scale x weight scale;
/// a reduction of at most max_reduction; a fused activation that is a ReLU-family clamp.
template <class Op>
Status check_layer(const WorkloadInfo<Op>& info) {
  constexpr std::size_t channel_axis = channel_axis_v<Op>;
  const TensorInfo &x = info.inputs[0], &w = info.inputs[1], &y = info.outputs[0];
  const std::uint64_t reduction = reduction_length<Op>(w.shape);
  if (auto s = require_activation(x, "input"); !s) return s;
  if (auto s = require_activation(y, "output"); !s) return s;
  if (x.type != y.type)
    return Status::error(ErrorCode::Unsupported, "runs int8 layers whose input and output have one type; ",
                         to_string(x.type), " in, ", to_string(y.type), " out");
  if (w.type != DataType::QSymmS8)
    return Status::error(ErrorCode::Unsupported, "runs int8 ", Op::name, " on QSymmS8 weights; weights are ",
                         w.to_string(), " (weights with a zero point stay Float32 behind a Dequantize)");
  if (w.quantization.is_per_axis() && w.quantization.axis != channel_axis)
    return Status::error(ErrorCode::Unsupported, "quantises ", Op::name, " weights per output channel (axis ",
                         channel_axis, "); they are ", w.to_string());
  const std::size_t channels = w.shape[channel_axis];
  if (w.quantization.is_per_axis() && w.quantization.scales.size() != channels)
    return Status::error(ErrorCode::InvalidArgument, "weights ", w.to_string(), " need ", channels, " scales");
  if (info.inputs.size() > 2) {
    const TensorInfo& b = info.inputs[2];
    if (b.type != DataType::Signed32)
      return Status::error(ErrorCode::Unsupported, "runs int8 ", Op::name, " with a Signed32 bias; it is ",
                           b.to_string());
    // A bias that states its scale must state the one the accumulator has.
    if (!b.quantization.empty())
      for (std::size_t c = 0; c < channels; ++c) {
        const double expected = static_cast<double>(x.quantization.scales[0]) *
                                w.quantization.scales[w.quantization.scales.size() == 1 ? 0 : c];
        const double stated = b.quantization.scales[b.quantization.scales.size() == 1 ? 0 : c];
        if (std::abs(stated - expected) > 1e-4 * expected)
          return Status::error(ErrorCode::Unsupported, "needs the bias of an int8 ", Op::name,
                               " at input scale x weight scale; channel ", c, " has ", stated, ", not ", expected);
      }
  }
  if (reduction > max_reduction)
    return Status::error(ErrorCode::Unsupported, "sums at most ", max_reduction, " products per int8 output; ",
                         Op::name, " sums ", reduction);
  if (auto s = require_clamp(fused_activation(info.params)); !s) return s;
  if (auto s = OutputStage::check(info); !s) return s;
  if (info.inputs.size() > 2 && info.constants[2] != nullptr) {
    const auto* bias = static_cast<const std::int32_t*>(info.constants[2]);
    for (std::size_t c = 0; c < channels; ++c)
      if (std::abs(std::int64_t{bias[c]}) > max_bias)
        return Status::error(ErrorCode::Unsupported, "takes int8 biases up to 2^30 in magnitude; channel ", c, " has ",
                             bias[c]);
  }
  return Status::ok();
}

/// A sum accumulated in int64 (no overflow for any input), saturated to int32: what the output
/// stage takes. Within the bounds check_layer enforces the saturation never acts.
constexpr std::int32_t saturate_to_int32(std::int64_t sum) {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(sum, std::numeric_limits<std::int32_t>::min(),
                                                            std::numeric_limits<std::int32_t>::max()));
}

}  // namespace kiln::quantized
