// SPDX-License-Identifier: Apache-2.0
// ClBackend Activation (kernels/elementwise.cl): the formulas in float (on Float32 and Float16
// tensors), and in int8 a lookup in the layer's table, uploaded at load.
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"
#include "kiln/backends/cl/ops/quantize.hpp"
#include "kiln/backends/quantized_activation.hpp"

namespace kiln {

template <DataType F>
requires(opencl::is_float_kernel_type(F)) struct Workload<ops::Activation, ClBackend, F>
    : opencl::FloatKernel<ops::Activation> {
  static Expected<Workload> create(const WorkloadInfo<ops::Activation>& info, opencl::Context& context) {
    return make<Workload>(info, context, "elementwise", "activation");
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]),
                   static_cast<cl_int>(params_.function), params_.a, params_.b);
  }

  using FloatKernel::FloatKernel;
};

/// int8: each byte through quantized::ActivationTable, RefBackend's table.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Workload<ops::Activation, ClBackend, T>
    : opencl::Kernel<ops::Activation> {
  using Kernel::Kernel;

  static Status is_supported(const WorkloadInfo<ops::Activation>& info) {
    if (auto s = quantized::check_activation(info); !s) return s;
    return opencl::require_int_indices(info);
  }
  static Expected<Workload> create(const WorkloadInfo<ops::Activation>& info, opencl::Context& context) {
    auto made = make<Workload>(info, context, "elementwise", "int8_table");
    if (!made) return made;
    const quantized::ActivationTable table(info);
    auto uploaded = context.upload(table.bytes().data(), table.bytes().size());
    if (!uploaded) return uploaded.status();
    made->table_ = std::move(*uploaded);
    return made;
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), table_, opencl::buffer_of(out[0]));
  }

 private:
  cl::Buffer table_;
};

}  // namespace kiln
