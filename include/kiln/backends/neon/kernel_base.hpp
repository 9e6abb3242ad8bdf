// SPDX-License-Identifier: Apache-2.0
// neon::Kernel<Op, Type>: how NeonBackend runs an op in a data type with this translation unit's instruction set.
#pragma once

#include "kiln/backends/neon/isa.hpp"
#include "kiln/backends/neon/neon_context.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// NeonBackend's own workload for Op in Type (see Workload): specialised by the files in ops/,
/// listed in workloads.hpp. It lives in the instruction set's namespace, so that the dispatching
/// build can hold one per set (docs/decisions/0009).
template <class Op, DataType Type>
struct Kernel : NotImplemented {};

/// An extent, stride or padding as a signed index. On 32-bit targets std::ptrdiff_t is as wide as
/// the uint32_t it comes from, and arithmetic or comparisons mixing the two would be unsigned.
constexpr std::ptrdiff_t signed_extent(std::uint32_t v) noexcept { return static_cast<std::ptrdiff_t>(v); }

/// Base of the Neon kernels: keeps the parameters; Float32 only. Its own class rather than
/// ref::Float32Kernel<Op, NeonBackend>, so that every function a kernel uses is in the ISA namespace.
template <class Op>
class Float32Kernel {
 public:
  explicit Float32Kernel(const WorkloadInfo<Op>& info) : params_(info.params) {}
  static Status is_supported(const WorkloadInfo<Op>& info) { return ref::require_float32(info); }

 protected:
  typename Op::Params params_;
};

/// Base of the Neon kernels that read and write Float16 themselves (decision 0020): keeps the
/// parameters; Float16 only.
template <class Op>
class Float16Kernel {
 public:
  explicit Float16Kernel(const WorkloadInfo<Op>& info) : params_(info.params) {}
  static Status is_supported(const WorkloadInfo<Op>& info) { return ref::require_type(info, DataType::Float16); }

 protected:
  typename Op::Params params_;
};

/// Fails unless the layer's inputs from `first` on (weights, bias, statistics) are constants, which
/// Neon kernels pack or fold at load; otherwise the Ref workload NeonBackend inherits runs the layer.
template <class Op>
Status require_constants(const WorkloadInfo<Op>& info, std::size_t first) {
  for (std::size_t i = first; i < info.inputs.size(); ++i)
    if (info.constants[i] == nullptr)
      return Status::error(ErrorCode::Unsupported, "prepares the weights of ", Op::name, " at load, so input ", i,
                           " must be a constant");
  return Status::ok();
}

/// Fails unless the layer is in `type` and its inputs from `first` on are constants.
template <class Op>
Status require_constants_of(const WorkloadInfo<Op>& info, DataType type, std::size_t first) {
  if (auto s = ref::require_type(info, type); !s) return s;
  return require_constants(info, first);
}

using ref::bytes;
using ref::floats;

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
