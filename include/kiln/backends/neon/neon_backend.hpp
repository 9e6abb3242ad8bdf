// SPDX-License-Identifier: Apache-2.0
// NeonBackend: the SIMD CPU backend's tag, and its kernels (this translation unit's instruction set),
// or in the dispatching build the chooser of the kernels compiled for several.
#pragma once

#include <string_view>

#include <xsimd/xsimd.hpp>

#include "kiln/backends/neon/neon_context.hpp"
#include "kiln/backends/ref/ref_backend.hpp"

#ifndef KILN_NEON_DISPATCH
#define KILN_NEON_DISPATCH 0
#endif

namespace kiln {

#if KILN_NEON_DISPATCH
namespace neon::dispatch {
inline bool kernels_available();
}  // namespace neon::dispatch
#endif

/// The SIMD CPU backend, written once with xsimd: NEON on Arm, SSE/AVX2/AVX-512 on x86, whichever
/// the compile target (`-march`) allows, or with KILN_NEON_DISPATCH the best of several that the
/// CPU running it has (docs/decisions/0009). Layers it has no kernel for run its RefBackend fallback's.
struct NeonBackend {
  using fallback = RefBackend;
  static constexpr std::string_view id = "CpuAcc";
  static constexpr std::size_t alignment = 64;
  using memory = HostMemory;
  using context = neon::Context;
  using options = neon::Options;
  /// Whether this machine runs the kernels: those of the compile target's instruction set, or in
  /// the dispatching build (KILN_NEON_DISPATCH) the set it chose (see neon::dispatch).
  static bool available() noexcept {
#if KILN_NEON_DISPATCH
    return neon::dispatch::kernels_available();
#else
    return xsimd::available_architectures().best >= xsimd::default_arch::version();
#endif
  }
};

inline namespace KILN_WORKLOAD_SOURCE {
template <>
inline constexpr bool workloads_compiled_v<NeonBackend> = KILN_COMPILED_LIBRARY || KILN_NEON_DISPATCH;
}  // namespace KILN_WORKLOAD_SOURCE

}  // namespace kiln

#if KILN_NEON_DISPATCH
#include "kiln/backends/neon/dispatch/dispatch.hpp"
#else
#include "kiln/backends/neon/kernel_base.hpp"

namespace kiln {
/// NeonBackend's own workloads are its kernels of this translation unit's instruction set.
template <>
struct own_workloads<NeonBackend> {
  template <class Op, DataType Type>
  using type = neon::Kernel<Op, Type>;
};
}  // namespace kiln
#if !KILN_COMPILED_LIBRARY
#include "kiln/backends/neon/workloads.hpp"
#endif
#endif

namespace kiln::neon {

/// The instruction set NeonBackend's kernels run with (xsimd's name: "sse2", "fma3+avx2", "avx512bw"...);
/// empty when the dispatching build found none it may use.
inline std::string_view isa_name() {
#if KILN_NEON_DISPATCH
  const auto& chosen = dispatch::selected_kernels();
  return chosen.has_value() ? (*chosen)->isa : std::string_view{};
#else
  return xsimd::default_arch::name();
#endif
}

/// Whether NeonBackend's Float16 layers compute in Float16 (armv8.2-a's half-precision arithmetic,
/// decision 0020: convolution and fully connected accumulate in Float16), rather than in Float32 on
/// widened halves, which every other instruction set does (decision 0019).
inline bool float16_arithmetic() {
#if KILN_NEON_DISPATCH
  const auto& chosen = dispatch::selected_kernels();
  return chosen.has_value() && (*chosen)->float16_arithmetic;
#else
  return KILN_NEON_HALF_ARITHMETIC != 0;
#endif
}

}  // namespace kiln::neon
