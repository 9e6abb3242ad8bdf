// SPDX-License-Identifier: Apache-2.0
// The instruction set this translation unit's Neon kernels are compiled for, as a namespace name.
#pragma once

#include <xsimd/xsimd.hpp>

// Every Neon kernel lives in `kiln::neon::KILN_NEON_ISA`, an inline namespace named after the
// compile target's instruction set. Code written as `neon::gemm` finds it unchanged, but the same
// kernel compiled for two instruction sets (the dispatching build, docs/decisions/0009) gets two
// distinct symbols, so the linker can never hand AVX-512 code to an SSE2 caller.
#if XSIMD_WITH_AVX512BW && defined(__AVX512VNNI__)
#define KILN_NEON_ISA isa_avx512bw_vnni
#elif XSIMD_WITH_AVX512BW
#define KILN_NEON_ISA isa_avx512bw
#elif XSIMD_WITH_AVX512F
#define KILN_NEON_ISA isa_avx512f
#elif XSIMD_WITH_FMA3_AVX2
#define KILN_NEON_ISA isa_fma3_avx2
#elif XSIMD_WITH_AVX2
#define KILN_NEON_ISA isa_avx2
#elif XSIMD_WITH_FMA3_AVX
#define KILN_NEON_ISA isa_fma3_avx
#elif XSIMD_WITH_AVX
#define KILN_NEON_ISA isa_avx
#elif XSIMD_WITH_SSE4_2
#define KILN_NEON_ISA isa_sse4_2
#elif XSIMD_WITH_SSE4_1
#define KILN_NEON_ISA isa_sse4_1
#elif XSIMD_WITH_SSSE3
#define KILN_NEON_ISA isa_ssse3
#elif XSIMD_WITH_SSE3
#define KILN_NEON_ISA isa_sse3
#elif XSIMD_WITH_SSE2
#define KILN_NEON_ISA isa_sse2
#elif XSIMD_WITH_NEON64 && defined(__ARM_FEATURE_DOTPROD) && defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#define KILN_NEON_ISA isa_neon64_dotprod_fp16
#elif XSIMD_WITH_NEON64 && defined(__ARM_FEATURE_DOTPROD)
#define KILN_NEON_ISA isa_neon64_dotprod
#elif XSIMD_WITH_NEON64 && defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#define KILN_NEON_ISA isa_neon64_fp16
#elif XSIMD_WITH_NEON64
#define KILN_NEON_ISA isa_neon64
#elif XSIMD_WITH_NEON
#define KILN_NEON_ISA isa_neon
#else
#error "kiln: xsimd finds no SIMD instruction set for this target; build without NeonBackend (-Dneon=disabled)"
#endif

// Whether the compile target has half-precision vector arithmetic (aarch64 with armv8.2-a's FP16:
// the dispatching build's dotprod_fp16 set), with which Float16 layers compute in Float16
// (simd/half_arithmetic.hpp, decision 0020) instead of in Float32 on widened halves.
#if defined(__aarch64__) && defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#define KILN_NEON_HALF_ARITHMETIC 1
#else
#define KILN_NEON_HALF_ARITHMETIC 0
#endif
