// SPDX-License-Identifier: Apache-2.0
// ClBackend Reduce: sum, mean, max and min over any set of axes (kernels/reduction.cl), in Float32,
// Float16 and int8 (quantized::ReduceStage).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"
#include "kiln/backends/cl/ops/quantize.hpp"
#include "kiln/backends/quantized_reduce.hpp"

namespace kiln {

namespace opencl {
/// The input of a Reduce seen twice: over the kept dimensions (one output element each) and over
/// the `count` reduced ones, as the reduce kernels walk it.
struct ReduceWalk {
  cl_uint8 kept_dims{}, reduced_dims{};
  cl_int8 kept_strides{}, reduced_strides{};
  cl_uint count = 1;

  static ReduceWalk of(const ops::Reduce::Params& params, const TensorShape& xs) {
    const auto mask = *ops::Reduce::reduced_axes(params, xs.rank());
    const ref::Strides strides = ref::strides_of(xs);
    TensorShape kept = xs, reduced = xs;
    ref::Strides kept_strides{}, reduced_strides{};
    ReduceWalk walk;
    walk.count = static_cast<cl_uint>(ops::Reduce::reduced_count(params, xs));
    for (std::size_t d = 0; d < xs.rank(); ++d) {
      (mask.reduced[d] ? kept : reduced)[d] = 1;
      (mask.reduced[d] ? reduced_strides : kept_strides)[d] = strides[d];
    }
    walk.kept_dims = dims6(kept);
    walk.kept_strides = strides6(kept_strides, xs.rank());
    walk.reduced_dims = dims6(reduced);
    walk.reduced_strides = strides6(reduced_strides, xs.rank());
    return walk;
  }
};
}  // namespace opencl

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::Reduce, ClBackend, F>
    : opencl::FloatKernel<ops::Reduce> {
  using FloatKernel::FloatKernel;

  static Expected<Workload> create(const WorkloadInfo<ops::Reduce>& info, opencl::Context& context) {
    auto made = make<Workload>(info, context, "reduction", "reduce");
    if (made) made->walk_ = opencl::ReduceWalk::of(info.params, info.inputs[0].shape);
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]), walk_.kept_dims,
                   walk_.kept_strides, walk_.reduced_dims, walk_.reduced_strides, walk_.count,
                   static_cast<cl_int>(params_.operation));
  }

 private:
  opencl::ReduceWalk walk_;
};

/// int8: RefBackend's integer fold, one work-item per output element, then the stage's requantization.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::Reduce, ClBackend, T> : opencl::Kernel<ops::Reduce> {
  using Kernel::Kernel;

  static Status is_supported(const WorkloadInfo<ops::Reduce>& info) {
    if (auto s = quantized::check_reduce(info); !s) return s;
    return opencl::require_int_indices(info);
  }
  static Expected<Workload> create(const WorkloadInfo<ops::Reduce>& info, opencl::Context& context) {
    auto stage = quantized::ReduceStage::make(info);
    if (!stage) return stage.status();
    auto made = make<Workload>(info, context, "reduction", "int8_reduce",
                               detail::str_cat("-DQUANTIZED=", opencl::quantized_type(T)));
    if (!made) return made;
    made->walk_ = opencl::ReduceWalk::of(info.params, info.inputs[0].shape);
    made->stage_ = opencl::stage_of(stage->multiplier());
    made->zeros_ = {{stage->x_zero(), stage->y_zero()}};
    made->range_ = {stage->lo(), stage->hi()};
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]), walk_.kept_dims,
                   walk_.kept_strides, walk_.reduced_dims, walk_.reduced_strides, walk_.count,
                   static_cast<cl_int>(params_.operation), zeros_, stage_, range_.lo, range_.hi);
  }

 private:
  opencl::ReduceWalk walk_;
  cl_int2 stage_{}, zeros_{};  // (multiplier, right shift); (input, output) zero points
  quantized::OutputRange range_;
};

}  // namespace kiln
