// SPDX-License-Identifier: Apache-2.0
// Reference Softmax / LogSoftmax: max-subtracted exponentials along the axis, in double precision;
// int8 Softmax in integers (quantized::SoftmaxStage).
#pragma once

#include <cmath>
#include <limits>

#include "kiln/backends/quantized_softmax.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Softmax, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Softmax> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const TensorShape& shape = in[0].info.shape;
    const std::size_t axis = *detail::normalize_axis(params_.axis, shape.rank());
    const std::uint64_t outer = shape.num_elements(0, axis), length = shape[axis];
    const std::uint64_t inner = shape.num_elements(axis + 1, shape.rank());
    const float* x = ref::floats(in[0]);
    float* y = ref::floats(out[0]);
    const double beta = params_.beta;
    for (std::uint64_t o = 0; o < outer; ++o)
      for (std::uint64_t i = 0; i < inner; ++i) {
        const std::uint64_t base = o * length * inner + i;
        double max = -std::numeric_limits<double>::infinity();
        for (std::uint64_t j = 0; j < length; ++j) max = std::max(max, beta * x[base + j * inner]);
        double sum = 0.0;
        for (std::uint64_t j = 0; j < length; ++j) sum += std::exp(beta * x[base + j * inner] - max);
        for (std::uint64_t j = 0; j < length; ++j) {
          const double shifted = beta * x[base + j * inner] - max;
          y[base + j * inner] = static_cast<float>(params_.log ? shifted - std::log(sum) : std::exp(shifted) / sum);
        }
      }
  }
};

/// int8: each row through quantized::SoftmaxStage, the integer definition every backend shares.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::Softmax, RefBackend, T> {
  static Status is_supported(const WorkloadInfo<ops::Softmax>& info) { return quantized::check_softmax(info); }
  static Expected<Workload> create(const WorkloadInfo<ops::Softmax>& info, ref::Context&) {
    auto stage = quantized::SoftmaxStage::make(info);
    if (!stage) return stage.status();
    return Workload{*stage, info.params.axis};
  }
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const auto rows = quantized::SoftmaxRows::of(in[0].info.shape, axis);
    const auto* x = static_cast<const element_type_t<T>*>(in[0].data);
    auto* y = static_cast<element_type_t<T>*>(out[0].data);
    for (std::uint64_t r = 0; r < rows.count; ++r)
      stage.row(x + rows.start(r), y + rows.start(r), rows.length, rows.inner);
  }

  quantized::SoftmaxStage stage;
  std::int64_t axis = -1;
};

}  // namespace kiln
