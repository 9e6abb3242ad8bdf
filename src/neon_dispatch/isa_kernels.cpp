// SPDX-License-Identifier: Apache-2.0
// The Neon kernels of one instruction set, for the dispatching build (docs/decisions/0009). Meson
// compiles this file once per set with -DKILN_NEON_DISPATCH=1 and the set's flags:
//   x86-64   sse2: -msse2    avx2: -mavx2 -mfma
//            avx512: -mavx512f -mavx512cd -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma
//            avx512vnni: avx512's and -mavx512vnni
//   aarch64  asimd: -march=armv8-a    dotprod_fp16: -march=armv8.2-a+dotprod+fp16
// Built by hand, link the objects in that order, narrowest first: where two of them carry a copy
// of the same shared inline function, the linker keeps the first, which every CPU runs.
#include "kiln/backends/neon/neon_backend.hpp"
#include "kiln/backends/neon/workloads.hpp"

// The compile flags decide which set this is; a mismatch with the sets in dispatch.hpp leaves that
// set's kernels undefined, a link error that names it.
#if defined(__AVX512VNNI__)
using CompiledSet = kiln::neon::dispatch::avx512vnni;
constexpr std::string_view compiled_set_name = "avx512bw+vnni";
#elif defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD) && defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
using CompiledSet = kiln::neon::dispatch::dotprod_fp16;
constexpr std::string_view compiled_set_name = "arm64+neon+dotprod+fp16";
#else
using CompiledSet = xsimd::default_arch;
constexpr std::string_view compiled_set_name = xsimd::default_arch::name();
#endif

template <>
const kiln::neon::dispatch::IsaKernels& kiln::neon::dispatch::isa_kernels<CompiledSet>() {
  static constexpr IsaKernels kernels{compiled_set_name, kiln::detail::table_of<NeonBackend, AllOps, neon::Kernel>(),
                                      KILN_NEON_HALF_ARITHMETIC != 0};
  return kernels;
}
