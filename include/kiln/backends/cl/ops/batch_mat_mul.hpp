// SPDX-License-Identifier: Apache-2.0
// ClBackend BatchMatMul: numpy batch broadcasting, either operand transposed (kernels/matmul.cl), in
// Float32 and Float16 and in int8 (quantized::MatMulStage).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"
#include "kiln/backends/cl/ops/quantize.hpp"
#include "kiln/backends/quantized_batch_mat_mul.hpp"

namespace kiln {

namespace opencl {
/// A BatchMatMul as the kernels take it: one work-item per output element (n, m, output matrices),
/// the strides of MatMulGeometry, and the batch dimensions with each operand's broadcast strides
/// (in matrices).
struct MatMulWalk {
  cl::NDRange range;
  cl_uint m = 0, k = 0, a_row = 0, a_col = 0, b_row = 0, b_col = 0;
  cl_uint8 batch_dims{};
  cl_int8 a_batch{}, b_batch{};

  static MatMulWalk of(const WorkloadInfo<ops::BatchMatMul>& info) {
    const MatMulGeometry g = MatMulGeometry::of(info);
    const TensorShape &as = info.inputs[0].shape, &bs = info.inputs[1].shape, &ys = info.outputs[0].shape;
    const std::size_t batch_rank = ys.rank() - 2;
    const TensorShape a_batch(as.dims().first(as.rank() - 2)), b_batch(bs.dims().first(bs.rank() - 2));
    MatMulWalk w;
    w.range = cl::NDRange(g.n, g.m, g.pairs.size());
    w.m = static_cast<cl_uint>(g.m);
    w.k = static_cast<cl_uint>(g.k);
    w.a_row = static_cast<cl_uint>(g.a_row);
    w.a_col = static_cast<cl_uint>(g.a_col);
    w.b_row = static_cast<cl_uint>(g.b_row);
    w.b_col = static_cast<cl_uint>(g.b_col);
    w.batch_dims = dims6(TensorShape(ys.dims().first(batch_rank)));
    w.a_batch = strides6(ref::broadcast_strides_of(a_batch, batch_rank), batch_rank);
    w.b_batch = strides6(ref::broadcast_strides_of(b_batch, batch_rank), batch_rank);
    return w;
  }
};
}  // namespace opencl

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::BatchMatMul, ClBackend, F>
    : opencl::FloatKernel<ops::BatchMatMul> {
  using FloatKernel::FloatKernel;

  static Expected<Workload> create(const WorkloadInfo<ops::BatchMatMul>& info, opencl::Context& context) {
    auto made = make<Workload>(info, context, "matmul", "batch_mat_mul");
    if (made) made->walk_ = opencl::MatMulWalk::of(info);
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const opencl::MatMulWalk& w = walk_;
    return launch_(context, w.range, input(in, 0), input(in, 1), opencl::buffer_of(out[0]), w.m, w.k, w.a_row, w.a_col,
                   w.b_row, w.b_col, w.batch_dims, w.a_batch, w.b_batch);
  }

 private:
  opencl::MatMulWalk walk_;
};

/// int8: quantized::MatMulStage's products, one work-item per output element, summed in int.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::BatchMatMul, ClBackend, T>
    : opencl::Kernel<ops::BatchMatMul> {
  using Kernel::Kernel;

  static Status is_supported(const WorkloadInfo<ops::BatchMatMul>& info) {
    if (auto s = quantized::check_batch_mat_mul(info); !s) return s;
    return opencl::require_int_indices(info);
  }
  static Expected<Workload> create(const WorkloadInfo<ops::BatchMatMul>& info, opencl::Context& context) {
    auto stage = quantized::MatMulStage::make(info);
    if (!stage) return stage.status();
    auto made = make<Workload>(info, context, "matmul", "int8_batch_mat_mul",
                               detail::str_cat("-DQUANTIZED=", opencl::quantized_type(T)));
    if (!made) return made;
    made->walk_ = opencl::MatMulWalk::of(info);
    made->stage_ = opencl::stage_of(stage->multiplier());
    made->zeros_ = {{stage->a_zero(), stage->b_zero(), stage->y_zero(), 0}};
    made->range_ = {stage->lo(), stage->hi()};
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const opencl::MatMulWalk& w = walk_;
    return launch_(context, w.range, input(in, 0), input(in, 1), opencl::buffer_of(out[0]), w.m, w.k, w.a_row, w.a_col,
                   w.b_row, w.b_col, w.batch_dims, w.a_batch, w.b_batch, zeros_, stage_, range_.lo, range_.hi);
  }

 private:
  opencl::MatMulWalk walk_;
  cl_int4 zeros_{};  // a, b and output zero points
  cl_int2 stage_{};  // (multiplier, right shift)
  quantized::OutputRange range_;
};

}  // namespace kiln
