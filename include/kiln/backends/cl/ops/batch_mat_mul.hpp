// SPDX-License-Identifier: Apache-2.0
// ClBackend BatchMatMul: numpy batch broadcasting, either operand transposed (kernels/matmul.cl).
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::BatchMatMul, ClBackend, DataType::Float32> : opencl::Float32Kernel<ops::BatchMatMul> {
  using Float32Kernel::Float32Kernel;

  static Expected<Workload> create(const WorkloadInfo<ops::BatchMatMul>& info, opencl::Context& context) {
    auto made = make<Workload>(info, context, "matmul", "batch_mat_mul");
    if (!made) return made;
    const TensorShape& as = info.inputs[0].shape;
    const TensorShape& bs = info.inputs[1].shape;
    const TensorShape& ys = info.outputs[0].shape;
    const std::size_t batch_rank = ys.rank() - 2;
    const TensorShape a_batch(as.dims().first(as.rank() - 2)), b_batch(bs.dims().first(bs.rank() - 2));
    made->batch_dims_ = opencl::dims6(TensorShape(ys.dims().first(batch_rank)));
    made->a_batch_ = opencl::strides6(ref::broadcast_strides_of(a_batch, batch_rank), batch_rank);
    made->b_batch_ = opencl::strides6(ref::broadcast_strides_of(b_batch, batch_rank), batch_rank);
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const TensorShape& as = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const cl_uint m = ys.dim_from_end(1), n = ys.dim_from_end(0);
    const cl_uint k = params_.transpose_a ? as.dim_from_end(1) : as.dim_from_end(0);
    const std::size_t batches = ys.num_elements(0, ys.rank() - 2);
    return launch_(context, cl::NDRange(n, m, batches), input(in, 0), input(in, 1), opencl::buffer_of(out[0]), m, k,
                   params_.transpose_a ? 1u : k, params_.transpose_a ? m : 1u, params_.transpose_b ? 1u : n,
                   params_.transpose_b ? k : 1u, batch_dims_, a_batch_, b_batch_);
  }

 private:
  cl_uint8 batch_dims_{};
  cl_int8 a_batch_{}, b_batch_{};
};

}  // namespace kiln
