// SPDX-License-Identifier: Apache-2.0
// ClBackend Resize: nearest (every rounding; any element) and bilinear (Float32, Float16), every coordinate
// transform (kernels/resize.cl).
#pragma once

#include <algorithm>
#include <cmath>

#include "kiln/backends/cl/cl_kernel.hpp"
#include "kiln/backends/moved_elements.hpp"

namespace kiln {

namespace opencl {

/// Nearest moves elements of any size (Float32, Float16, 8-bit); bilinear blends Float32 and Float16.
class ResizeKernel : public Kernel<ops::Resize> {
 public:
  using Kernel::Kernel;
  static Status is_supported(const WorkloadInfo<ops::Resize>& info) {
    if (info.inputs[0].type == DataType::Float16 && info.params.method != ops::ResizeMethod::Bicubic)
      return ref::require_type(info, DataType::Float16);
    return check_accelerated_resize(info);
  }

  /// Source rows and columns (and bilinear weights) depend only on the shapes: computed here once,
  /// in double precision as RefBackend computes them, and uploaded.
  static Expected<ResizeKernel> create(const WorkloadInfo<ops::Resize>& info, Context& context) {
    const bool nearest = info.params.method == ops::ResizeMethod::Nearest;
    // Nearest moves any element as it is; only bilinear's blend reads halves.
    const bool blends_halves = !nearest && info.inputs[0].type == DataType::Float16;
    auto made =
        make<ResizeKernel>(info, context, "resize", nearest ? "resize_nearest" : "resize_bilinear",
                           detail::str_cat(element_option(info.inputs[0].type), blends_halves ? " -DKILN_HALF" : ""));
    if (!made) return made;
    const TensorShape& xs = info.inputs[0].shape;
    const TensorShape& ys = info.outputs[0].shape;
    std::vector<cl_int> rows, columns;
    std::vector<cl_float> row_weights, column_weights;
    auto axis = [&](bool is_rows, std::uint32_t in, std::uint32_t out, std::vector<cl_int>& index,
                    std::vector<cl_float>& weight) {
      for (std::uint32_t o = 0; o < out; ++o) {
        const auto s = ops::Resize::sample(info.params, is_rows, o, in, out);
        index.push_back(static_cast<cl_int>(s.first));
        if (nearest) continue;
        index.push_back(static_cast<cl_int>(s.second));
        weight.push_back(static_cast<cl_float>(s.weight));
      }
    };
    axis(true, xs[1], ys[1], rows, row_weights);
    axis(false, xs[2], ys[2], columns, column_weights);
    for (const auto* table : {&rows, &columns}) {
      auto buffer = context.upload(table->data(), table->size() * sizeof(cl_int));
      if (!buffer) return buffer.status();
      made->tables_.push_back(std::move(*buffer));
    }
    for (const auto* table : {&row_weights, &column_weights}) {
      auto buffer = context.upload(table->data(), table->size() * sizeof(cl_float));
      if (!buffer) return buffer.status();
      made->tables_.push_back(std::move(*buffer));
    }
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const cl::NDRange global(ys[3], ys[2], std::size_t{ys[0]} * ys[1]);
    if (params_.method == ops::ResizeMethod::Nearest)
      return launch_(context, global, input(in, 0), buffer_of(out[0]), tables_[0], tables_[1], xs[1], xs[2], ys[1]);
    return launch_(context, global, input(in, 0), buffer_of(out[0]), tables_[0], tables_[1], tables_[2], tables_[3],
                   xs[1], xs[2], ys[1]);
  }

 private:
  std::vector<cl::Buffer> tables_;  // rows, columns, row weights, column weights
};

}  // namespace opencl

template <DataType T>
struct Workload<ops::Resize, ClBackend, T> : opencl::ResizeKernel {
  using ResizeKernel::ResizeKernel;
};

}  // namespace kiln
