// SPDX-License-Identifier: Apache-2.0
// Reference Reduce: every input element folded into the output element it reduces to; in int8
// the differences from the zero point are folded in integers (quantized::ReduceStage).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/backends/quantized_reduce.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

namespace ref {
/// Folds each element of an input of shape `xs` into `accumulators` (one per output element,
/// filled with the operation's identity): fold(acc, i) folds input element i into acc.
template <class Acc, class Fold>
void reduce_into(const TensorShape& xs, const ops::Reduce::Params& params, std::span<Acc> accumulators, Fold fold) {
  const auto mask = *ops::Reduce::reduced_axes(params, xs.rank());
  TensorShape kept = xs;  // the output with the reduced axes kept as 1, whatever keep_dims says
  for (std::size_t d = 0; d < xs.rank(); ++d)
    if (mask.reduced[d]) kept[d] = 1;
  const Strides y_strides = broadcast_strides_of(kept, xs.rank());
  for (std::uint64_t i = 0; i < xs.num_elements(); ++i) {
    const auto coords = unravel(i, xs);
    std::uint64_t target = 0;
    for (std::size_t d = 0; d < xs.rank(); ++d) target += coords[d] * y_strides[d];
    fold(accumulators[target], i);
  }
}

}  // namespace ref

template <>
struct Workload<ops::Reduce, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Reduce> {
  explicit Workload(const WorkloadInfo<ops::Reduce>& info)
      : Float32Kernel(info), outputs_(info.outputs[0].num_elements()) {}

  /// One double accumulator per output element.
  ScratchSize scratch(const ref::Context&) const { return {outputs_ * sizeof(double), alignof(double)}; }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&,
           std::span<std::byte> scratch) const {
    using O = ops::ReduceOperation;
    const float* x = ref::floats(in[0]);
    float* y = ref::floats(out[0]);
    const O operation = params_.operation;
    const std::span<double> accumulator(reinterpret_cast<double*>(scratch.data()), outputs_);
    std::ranges::fill(accumulator, operation == O::Max    ? -std::numeric_limits<double>::infinity()
                                   : operation == O::Min  ? std::numeric_limits<double>::infinity()
                                   : operation == O::Prod ? 1.0
                                                          : 0.0);
    ref::reduce_into(in[0].info.shape, params_, accumulator, [&](double& acc, std::uint64_t i) {
      const double v = x[i];
      switch (operation) {
        case O::Sum:
        case O::Mean: acc += v; break;
        case O::Max: acc = (std::isnan(v) || v > acc) ? v : acc; break;
        case O::Min: acc = (std::isnan(v) || v < acc) ? v : acc; break;
        case O::Prod: acc *= v; break;
      }
    });
    const double count = static_cast<double>(ops::Reduce::reduced_count(params_, in[0].info.shape));
    for (std::size_t i = 0; i < accumulator.size(); ++i)
      y[i] = static_cast<float>(operation == O::Mean ? accumulator[i] / count : accumulator[i]);
  }

 private:
  std::uint64_t outputs_;
};

/// int8: the differences x - zx folded in 64 bits, then quantized::ReduceStage.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::Reduce, RefBackend, T> {
  static Status is_supported(const WorkloadInfo<ops::Reduce>& info) { return quantized::check_reduce(info); }
  static Expected<Workload> create(const WorkloadInfo<ops::Reduce>& info, ref::Context&) {
    auto stage = quantized::ReduceStage::make(info);
    if (!stage) return stage.status();
    return Workload{*stage, info.params, info.outputs[0].num_elements()};
  }

  /// One 64-bit accumulator per output element.
  ScratchSize scratch(const ref::Context&) const { return {outputs * sizeof(std::int64_t), alignof(std::int64_t)}; }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&,
           std::span<std::byte> scratch) const {
    using O = ops::ReduceOperation;
    const auto* x = static_cast<const element_type_t<T>*>(in[0].data);
    auto* y = static_cast<element_type_t<T>*>(out[0].data);
    const std::span<std::int64_t> accumulator(reinterpret_cast<std::int64_t*>(scratch.data()), outputs);
    using Limits = std::numeric_limits<std::int64_t>;
    std::ranges::fill(accumulator, params.operation == O::Max   ? Limits::min()
                                   : params.operation == O::Min ? Limits::max()
                                                                : 0);
    ref::reduce_into(in[0].info.shape, params, accumulator, [&](std::int64_t& acc, std::uint64_t i) {
      const std::int64_t v = std::int64_t{x[i]} - stage.x_zero();
      acc = params.operation == O::Max ? std::max(acc, v) : params.operation == O::Min ? std::min(acc, v) : acc + v;
    });
    for (std::size_t i = 0; i < accumulator.size(); ++i) y[i] = static_cast<element_type_t<T>>(stage(accumulator[i]));
  }

  quantized::ReduceStage stage;
  ops::Reduce::Params params;
  std::uint64_t outputs = 0;
};

}  // namespace kiln
