// SPDX-License-Identifier: Apache-2.0
// ClBackend FullyConnected with fused activation: constant weights go through the tiled gemm
// kernel, transposed at load; weights fed at run time through a plain dot-product kernel
// (kernels/matmul.cl).
#pragma once

#include "kiln/backends/cl/gemm.hpp"

namespace kiln {

template <>
struct Workload<ops::FullyConnected, ClBackend, DataType::Float32> : opencl::Float32Kernel<ops::FullyConnected> {
  using Float32Kernel::Float32Kernel;

  static Expected<Workload> create(const WorkloadInfo<ops::FullyConnected>& info, opencl::Context& context) {
    const bool packed = info.constants[1] != nullptr;
    auto made = make<Workload>(info, context, "matmul", packed ? "gemm" : "fully_connected");
    if (!made || !packed) return made;
    const TensorShape& ws = info.inputs[1].shape;
    auto weights = opencl::upload_transposed(context, static_cast<const float*>(info.constants[1]), ws[0], ws[1]);
    if (!weights) return weights.status();
    made->constants_[1] = std::move(*weights);
    made->packed_ = true;
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const cl_uint k = in[0].info.shape.dim_from_end(0);
    const cl_uint columns = out[0].info.shape.dim_from_end(0);
    const cl_uint rows = columns == 0 ? 0 : static_cast<cl_uint>(out[0].info.num_elements() / columns);
    const bool has_bias = in.size() > 2;
    const opencl::ActivationArgs act(params_.activation);
    if (packed_)
      return launch_(context, opencl::gemm_range(rows, columns), input(in, 0), input(in, 1),
                     input(in, has_bias ? 2 : 1), opencl::buffer_of(out[0]), rows, columns, k, cl_int{has_bias},
                     act.function, act.a, act.b);
    return launch_(context, cl::NDRange(columns, rows), input(in, 0), input(in, 1), input(in, has_bias ? 2 : 1),
                   opencl::buffer_of(out[0]), k, cl_int{has_bias}, act.function, act.a, act.b);
  }

 private:
  bool packed_ = false;  // weights transposed to [K, N] for the gemm kernel
};

}  // namespace kiln
