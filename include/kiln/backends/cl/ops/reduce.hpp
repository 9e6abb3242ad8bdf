// SPDX-License-Identifier: Apache-2.0
// ClBackend Reduce: sum, mean, max and min over any set of axes (kernels/reduction.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Reduce, ClBackend, DataType::Float32> : opencl::Float32Kernel<ops::Reduce> {
  using Float32Kernel::Float32Kernel;

  /// The input seen twice: over the kept dimensions (one output element each) and over the reduced ones.
  static Expected<Workload> create(const WorkloadInfo<ops::Reduce>& info, opencl::Context& context) {
    auto made = make<Workload>(info, context, "reduction", "reduce");
    if (!made) return made;
    const TensorShape& xs = info.inputs[0].shape;
    const auto mask = *ops::Reduce::reduced_axes(info.params, xs.rank());
    const ref::Strides strides = ref::strides_of(xs);
    TensorShape kept = xs, reduced = xs;
    ref::Strides kept_strides{}, reduced_strides{};
    made->count_ = 1;
    for (std::size_t d = 0; d < xs.rank(); ++d) {
      (mask.reduced[d] ? kept : reduced)[d] = 1;
      (mask.reduced[d] ? reduced_strides : kept_strides)[d] = strides[d];
      if (mask.reduced[d]) made->count_ *= xs[d];
    }
    made->kept_dims_ = opencl::dims6(kept);
    made->kept_strides_ = opencl::strides6(kept_strides, xs.rank());
    made->reduced_dims_ = opencl::dims6(reduced);
    made->reduced_strides_ = opencl::strides6(reduced_strides, xs.rank());
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]), kept_dims_,
                   kept_strides_, reduced_dims_, reduced_strides_, count_, static_cast<cl_int>(params_.operation));
  }

 private:
  cl_uint8 kept_dims_{}, reduced_dims_{};
  cl_int8 kept_strides_{}, reduced_strides_{};
  cl_uint count_ = 1;
};

}  // namespace kiln
