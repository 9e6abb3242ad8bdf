// SPDX-License-Identifier: Apache-2.0
// ClBackend Quantize, Dequantize and Requantize (kernels/quantization.cl), per tensor.
#pragma once

#include <span>
#include <vector>

#include "kiln/backends/cl/cl_kernel.hpp"
#include "kiln/backends/ref/ops/quantize.hpp"

namespace kiln {

namespace opencl {

/// The OpenCL type of an 8-bit quantised tensor's elements.
inline std::string_view quantized_type(DataType type) { return type == DataType::QAsymmU8 ? "uchar" : "char"; }

/// A requantization's right shift as kernels read it: in [1, 62], plus kiln_round_twice (128) for
/// TensorFlow Lite's two roundings (kiln_requantize in kernels/common.cl).
inline cl_int right_shift_of(const Requantization& m) { return (31 - m.shift) | (m.round_twice ? 128 : 0); }

/// An output stage as kernels read it: (multiplier, right shift), an int2.
inline cl_int2 stage_of(const Requantization& m) { return {{m.multiplier, right_shift_of(m)}}; }

/// Output stages on the device, stage_of each.
inline Expected<cl::Buffer> upload_output_stages(Context& context, std::span<const Requantization> multipliers) {
  std::vector<cl_int2> stages;
  for (const Requantization& m : multipliers) stages.push_back(stage_of(m));
  return context.upload(stages.data(), stages.size() * sizeof(cl_int2));
}

/// Fails for tensors quantised per axis (the kernels take one scale) or too large for 32-bit indices.
template <class Op>
Status require_per_tensor(const WorkloadInfo<Op>& info, const TensorInfo& quantized) {
  if (auto s = ref::require_per_tensor(quantized, Op::name); !s) return s;
  return require_int_indices(info);
}

}  // namespace opencl

template <>
struct Workload<ops::Quantize, ClBackend, DataType::Float32> : opencl::Kernel<ops::Quantize> {
  static Status is_supported(const WorkloadInfo<ops::Quantize>& info) {
    return opencl::require_per_tensor(info, info.outputs[0]);
  }
  static Expected<Workload> create(const WorkloadInfo<ops::Quantize>& info, opencl::Context& context) {
    // x / scale must round as RefBackend's division does, or values near a tie round the other way.
    if (auto ready = context.ready(); !ready) return ready;
    if (!(context.device().getInfo<CL_DEVICE_SINGLE_FP_CONFIG>() & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT))
      return Status::error(ErrorCode::Unsupported, "Quantize needs correctly rounded division, which ",
                           context.device().getInfo<CL_DEVICE_NAME>(), " does not offer; run it on CpuRef");
    const std::string options = detail::str_cat("-cl-fp32-correctly-rounded-divide-sqrt -DQUANTIZED=",
                                                opencl::quantized_type(info.outputs[0].type));
    auto made = make<Workload>(info, context, "quantization", "quantize", options);
    if (made) made->ties_away_ = info.arithmetic == QuantizedArithmetic::TfLite;
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const QuantizationInfo& q = out[0].info.quantization;
    const QuantizedRange range = quantized_range(out[0].info.type);
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]), q.scales[0],
                   q.offset, static_cast<float>(range.lo - q.offset), static_cast<float>(range.hi - q.offset),
                   cl_int{ties_away_});
  }

  using Kernel::Kernel;

 private:
  bool ties_away_ = false;  ///< TensorFlow Lite's rounding
};

template <DataType T>
requires(is_quantized(T)) struct Workload<ops::Dequantize, ClBackend, T> : opencl::Kernel<ops::Dequantize> {
  static Status is_supported(const WorkloadInfo<ops::Dequantize>& info) {
    return opencl::require_per_tensor(info, info.inputs[0]);
  }
  static Expected<Workload> create(const WorkloadInfo<ops::Dequantize>& info, opencl::Context& context) {
    return make<Workload>(info, context, "quantization", "dequantize",
                          detail::str_cat("-DQUANTIZED=", opencl::quantized_type(T)));
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const QuantizationInfo& q = in[0].info.quantization;
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]), q.scales[0],
                   q.offset);
  }

  using Kernel::Kernel;
};

template <DataType T>
requires(is_quantized(T)) struct Workload<ops::Requantize, ClBackend, T> : opencl::Kernel<ops::Requantize> {
  static Status is_supported(const WorkloadInfo<ops::Requantize>& info) {
    if (auto s = opencl::require_per_tensor(info, info.inputs[0]); !s) return s;
    return ref::requantize_multiplier(info).status();
  }
  static Expected<Workload> create(const WorkloadInfo<ops::Requantize>& info, opencl::Context& context) {
    auto multiplier = ref::requantize_multiplier(info);
    if (!multiplier) return multiplier.status();
    auto w = make<Workload>(info, context, "quantization", "requantize",
                            detail::str_cat("-DQUANTIZED=", opencl::quantized_type(T),
                                            " -DQUANTIZED_OUT=", opencl::quantized_type(info.outputs[0].type)));
    if (w) w->multiplier_ = *multiplier;
    return w;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const QuantizedRange range = quantized_range(out[0].info.type);
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]),
                   in[0].info.quantization.offset, multiplier_.multiplier, opencl::right_shift_of(multiplier_),
                   out[0].info.quantization.offset, range.lo, range.hi);
  }

  using Kernel::Kernel;

 private:
  Requantization multiplier_;
};

}  // namespace kiln
