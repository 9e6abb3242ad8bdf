// SPDX-License-Identifier: Apache-2.0
// Reference Reduce: every input element folded into the output element it reduces to.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Reduce, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Reduce> {
  explicit Workload(const WorkloadInfo<ops::Reduce>& info)
      : Float32Kernel(info), outputs_(info.outputs[0].num_elements()) {}

  /// One double accumulator per output element.
  ScratchSize scratch(const ref::Context&) const { return {outputs_ * sizeof(double), alignof(double)}; }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&,
           std::span<std::byte> scratch) const {
    using O = ops::ReduceOperation;
    const TensorShape& xs = in[0].info.shape;
    const auto mask = *ops::Reduce::reduced_axes(params_, xs.rank());
    // The output seen with the reduced axes kept as 1, whatever keep_dims says.
    TensorShape kept = xs;
    std::uint64_t count = 1;
    for (std::size_t d = 0; d < xs.rank(); ++d)
      if (mask.reduced[d]) {
        count *= xs[d];
        kept[d] = 1;
      }
    const ref::Strides y_strides = ref::broadcast_strides_of(kept, xs.rank());
    const float* x = ref::floats(in[0]);
    float* y = ref::floats(out[0]);
    const double initial = params_.operation == O::Max   ? -std::numeric_limits<double>::infinity()
                           : params_.operation == O::Min ? std::numeric_limits<double>::infinity()
                                                         : 0.0;
    const std::span<double> accumulator(reinterpret_cast<double*>(scratch.data()), outputs_);
    std::ranges::fill(accumulator, initial);
    for (std::uint64_t i = 0; i < xs.num_elements(); ++i) {
      const auto coords = ref::unravel(i, xs);
      std::uint64_t target = 0;
      for (std::size_t d = 0; d < xs.rank(); ++d) target += coords[d] * y_strides[d];
      double& acc = accumulator[target];
      const double v = x[i];
      switch (params_.operation) {
        case O::Sum:
        case O::Mean: acc += v; break;
        case O::Max: acc = (std::isnan(v) || v > acc) ? v : acc; break;
        case O::Min: acc = (std::isnan(v) || v < acc) ? v : acc; break;
      }
    }
    for (std::size_t i = 0; i < accumulator.size(); ++i)
      y[i] = static_cast<float>(params_.operation == O::Mean ? accumulator[i] / static_cast<double>(count)
                                                             : accumulator[i]);
  }

 private:
  std::uint64_t outputs_;
};

}  // namespace kiln
