// SPDX-License-Identifier: Apache-2.0
// ClBackend FullyConnected with fused activation: constant weights go through the tiled gemm
// kernel, transposed at load; weights fed at run time through a plain dot-product kernel
// (kernels/matmul.cl). In int8, one output per work-item (kernels/int8_layers.cl).
#pragma once

#include "kiln/backends/cl/gemm.hpp"
#include "kiln/backends/cl/int8_kernel.hpp"

namespace kiln {

namespace opencl {

/// A FullyConnected layer's rows (every dimension of the input but the last), output columns and
/// reduction length.
struct MatrixSizes {
  cl_uint rows, columns, k;
};
inline MatrixSizes matrix_sizes(std::span<const ConstTensor> in, std::span<const Tensor> out) {
  const cl_uint columns = out[0].info.shape.dim_from_end(0);
  return {columns == 0 ? 0 : static_cast<cl_uint>(out[0].info.num_elements() / columns), columns,
          in[0].info.shape.dim_from_end(0)};
}

}  // namespace opencl

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::FullyConnected, ClBackend, F>
    : opencl::FloatKernel<ops::FullyConnected> {
  using FloatKernel::FloatKernel;

  static Expected<Workload> create(const WorkloadInfo<ops::FullyConnected>& info, opencl::Context& context) {
    const bool packed = info.constants[1] != nullptr;
    auto made = make<Workload>(info, context, "matmul", packed ? "gemm" : "fully_connected");
    if (!made || !packed) return made;
    const TensorShape& ws = info.inputs[1].shape;
    auto weights = opencl::upload_transposed(context, info.inputs[1], info.constants[1], ws[0], ws[1]);
    if (!weights) return weights.status();
    made->constants_[1] = std::move(*weights);
    made->packed_ = true;
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const auto [rows, columns, k] = opencl::matrix_sizes(in, out);
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

template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::FullyConnected, ClBackend, T>
    : opencl::Int8Kernel<ops::FullyConnected, Workload<ops::FullyConnected, ClBackend, T>> {
  static constexpr std::string_view kernel_name = "int8_fully_connected";
  using opencl::Int8Kernel<ops::FullyConnected, Workload>::Int8Kernel;

  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    const auto [rows, columns, k] = opencl::matrix_sizes(in, out);
    return this->launch(context, cl::NDRange(columns, rows), in, out, k);
  }
};

}  // namespace kiln
