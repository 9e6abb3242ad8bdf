// SPDX-License-Identifier: Apache-2.0
// Reference Attention: each query's scores in double precision, their softmax, the weighted sum of
// the values; the mask read through numpy broadcasting.
#pragma once

#include <algorithm>
#include <cmath>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Attention, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Attention> {
  explicit Workload(const WorkloadInfo<ops::Attention>& info)
      : Float32Kernel(info), sizes_(ops::Attention::sizes(info.params, info.inputs)) {
    if (info.inputs.size() > 3) {
      const TensorShape& q = info.inputs[0].shape;
      TensorShape scores(q.dims().first(q.rank() - 2));
      scores.push_back(sizes_.queries);
      scores.push_back(sizes_.keys);
      batch_shape_ = TensorShape(q.dims().first(q.rank() - 2));
      mask_strides_ = ref::broadcast_strides_of(info.inputs[3].shape, scores.rank());
    }
  }

  /// One query's scores.
  ScratchSize scratch(const ref::Context&) const { return {sizes_.keys * sizeof(double), alignof(double)}; }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&,
           std::span<std::byte> scratch) const {
    const auto [m, depth, n, value_depth, batches] = sizes_;
    const float *query = ref::floats(in[0]), *key = ref::floats(in[1]), *value = ref::floats(in[2]);
    const float* mask = in.size() > 3 ? ref::floats(in[3]) : nullptr;
    const std::size_t rank = batch_shape_.rank() + 2;
    double* scores = reinterpret_cast<double*>(scratch.data());
    for (std::uint64_t b = 0; b < batches; ++b) {
      const float* q = query + b * m * depth;
      const float* k = key + b * n * depth;
      const float* v = value + b * n * value_depth;
      float* y = ref::floats(out[0]) + b * m * value_depth;
      std::uint64_t mask_base = 0;
      if (mask) {
        const auto coords = ref::unravel(b, batch_shape_);
        for (std::size_t d = 0; d + 2 < rank; ++d) mask_base += coords[d] * mask_strides_[d];
      }
      for (std::uint32_t i = 0; i < m; ++i) {
        double largest = -INFINITY;
        for (std::uint32_t j = 0; j < n; ++j) {
          double dot = 0.0;
          for (std::uint32_t d = 0; d < depth; ++d)
            dot += double(q[i * depth + d]) * (params_.key_rows ? k[j * depth + d] : k[d * n + j]);
          scores[j] = params_.scale * dot;
          if (mask) scores[j] += mask[mask_base + i * mask_strides_[rank - 2] + j * mask_strides_[rank - 1]];
          largest = std::max(largest, scores[j]);
        }
        double sum = 0.0;
        for (std::uint32_t j = 0; j < n; ++j) sum += scores[j] = std::exp(scores[j] - largest);
        for (std::uint32_t c = 0; c < value_depth; ++c) {
          double weighted = 0.0;
          for (std::uint32_t j = 0; j < n; ++j) weighted += scores[j] * v[j * value_depth + c];
          y[i * value_depth + c] = static_cast<float>(weighted / sum);
        }
      }
    }
  }

 private:
  ops::Attention::Sizes sizes_;
  TensorShape batch_shape_;
  ref::Strides mask_strides_{};
};

}  // namespace kiln
