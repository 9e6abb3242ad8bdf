// SPDX-License-Identifier: Apache-2.0
// neon::Kernel<Op>: how NeonBackend runs an op with this translation unit's instruction set.
#pragma once

#include "kiln/backends/neon/isa.hpp"
#include "kiln/backends/neon/neon_kernel.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Specialised by each file in ops/, for the ops named in kernel_list.hpp. NeonBackend's workload
/// is this kernel (or, in the dispatching build, the one compiled for the best instruction set).
template <class Op>
struct Kernel;

/// Base of the Neon kernels: keeps the parameters; Float32 only. Its own class rather than
/// ref::Float32Kernel<Op, NeonBackend>, so that every function a kernel uses is in the ISA namespace.
template <class Op>
class Float32Kernel {
 public:
  explicit Float32Kernel(const WorkloadInfo<Op>& info) : params_(info.params) {}
  static Status is_supported(const WorkloadInfo<Op>& info) { return ref::require_float32(info, NeonBackend::id); }

 protected:
  typename Op::Params params_;
};

/// Fails unless the layer is Float32 and its inputs from `first` on (weights, bias, statistics)
/// are constants, which Neon kernels pack or fold at load; otherwise the Ref workload
/// NeonBackend inherits runs the layer.
template <class Op>
Status require_float32_constants(const WorkloadInfo<Op>& info, std::size_t first) {
  if (auto s = ref::require_float32(info, NeonBackend::id); !s) return s;
  for (std::size_t i = first; i < info.inputs.size(); ++i)
    if (info.constants[i] == nullptr)
      return Status::error(ErrorCode::Unsupported, NeonBackend::id, " prepares the weights of ", Op::name,
                           " at load, so input ", i, " must be a constant");
  return Status::ok();
}

using ref::bytes;
using ref::floats;

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
