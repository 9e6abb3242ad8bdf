// SPDX-License-Identifier: Apache-2.0
// NeonBackend with every Neon workload: include this to run networks on the SIMD CPU backend.
#pragma once

#include <string_view>

#include "kiln/backends/neon/kernel_list.hpp"
#include "kiln/backends/neon/neon_kernel.hpp"
#include "kiln/backends/ref/ref_backend.hpp"

#if KILN_NEON_DISPATCH
#include "kiln/backends/neon/dispatch/dispatch.hpp"
#else
#include "kiln/backends/neon/kernels.hpp"

namespace kiln {

/// NeonBackend's workload: the kernel compiled for this translation unit's instruction set.
template <class Op>
  requires neon::has_kernel<Op>
struct Workload<Op, NeonBackend> : neon::Kernel<Op> {
  using neon::Kernel<Op>::Kernel;
};

}  // namespace kiln
#endif

namespace kiln::neon {

/// The instruction set NeonBackend's kernels run with (xsimd's name: "sse2", "fma3+avx2", "avx512bw"...);
/// empty when the dispatching build found none it may use (the reason is in the optimizer's report).
inline std::string_view isa_name() {
#if KILN_NEON_DISPATCH
  const auto& kernels = dispatch::selected_kernels();
  return kernels.has_value() ? (*kernels)->isa : std::string_view{};
#else
  return xsimd::default_arch::name();
#endif
}

}  // namespace kiln::neon

static_assert(kiln::Backend<kiln::NeonBackend>);
static_assert(kiln::all_ops_supported_v<kiln::NeonBackend>);
