// SPDX-License-Identifier: Apache-2.0
// ClBackend Cast (Float32 <-> Float16) on the device (kernels/cast.cl), so that a Float16 network's
// conversions at its edges need no trip to the host.
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"

namespace kiln {

template <DataType T>
requires(ops::Cast::converts(T)) struct Workload<ops::Cast, ClBackend, T> : opencl::Kernel<ops::Cast> {
  using Kernel::Kernel;

  static Status is_supported(const WorkloadInfo<ops::Cast>& info) {
    if (info.outputs[0].type == T || !ops::Cast::converts(info.outputs[0].type))
      return Status::error(ErrorCode::Unsupported, "casts between Float32 and Float16; this Cast makes ",
                           to_string(info.outputs[0].type), " of ", to_string(T));
    return opencl::require_int_indices(info);
  }
  static Expected<Workload> create(const WorkloadInfo<ops::Cast>& info, opencl::Context& context) {
    return make<Workload>(info, context, "cast", T == DataType::Float32 ? "float32_to_float16" : "float16_to_float32");
  }
  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, opencl::Context& context) const {
    return launch_(context, opencl::elements_of(out[0].info), input(in, 0), opencl::buffer_of(out[0]));
  }
};

}  // namespace kiln
