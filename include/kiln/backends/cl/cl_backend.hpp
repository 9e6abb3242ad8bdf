// SPDX-License-Identifier: Apache-2.0
// ClBackend: the OpenCL backend's tag and memory kind, and (unless a library compiled them) its workloads.
#pragma once

#include <string_view>

#include "kiln/backends/backend.hpp"
#include "kiln/backends/cl/cl_context.hpp"
#include "kiln/backends/workload.hpp"

namespace kiln {

namespace opencl {
/// The memory kind of ClBackend: OpenCL buffers. A tensor of this kind is a `cl_mem` (a sub-buffer
/// of the working memory's arena) in Tensor::data, never a host address.
struct DeviceMemory {
  static constexpr std::string_view name = "cl";
};
}  // namespace opencl

/// The OpenCL backend: kernels from kernels/*.cl, embedded at build time, run on the device
/// Options::device selects (a GPU when there is one). Tensors live in device memory; optimize()
/// inserts MemCopy layers where they cross to host backends. It has no fallback of its own:
/// layers it cannot run go to the next backend of the Runtime.
struct ClBackend {
  using fallback = void;
  static constexpr std::string_view id = "GpuAcc";
  static constexpr std::size_t alignment = 64;
  using memory = opencl::DeviceMemory;
  using context = opencl::Context;
  using options = opencl::Options;
  /// Whether the device KILN_CL_DEVICE names (by default any) exists; asked once per process.
  static bool available() noexcept {
    static const bool found = opencl::select_device(opencl::device_spec({})).has_value();
    return found;
  }
};

inline namespace KILN_WORKLOAD_SOURCE {
template <>
inline constexpr bool workloads_compiled_v<ClBackend> = KILN_COMPILED_LIBRARY;
}  // namespace KILN_WORKLOAD_SOURCE

}  // namespace kiln

#if !KILN_COMPILED_LIBRARY
#include "kiln/backends/cl/workloads.hpp"
#endif
