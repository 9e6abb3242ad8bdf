// SPDX-License-Identifier: Apache-2.0
// Float16 <-> Float32 a vector at a time, with the target's conversion instructions: AVX-512F and
// F16C (vcvtph2ps, vcvtps2ph) on x86, FCVTL/FCVTN on aarch64. xsimd 8.1 has no Float16 batch, so
// these are intrinsics (decision 0019); elsewhere (SSE2, 32-bit Arm) the scalar conversions run.
#pragma once

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/core/half.hpp"

#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// f[i] = half_to_float(h[i]) for i < n.
inline void widen_halves(const Half* h, float* f, std::size_t n) {
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(f + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + i))));
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
#elif defined(__aarch64__)
  for (; i + 4 <= n; i += 4) vst1q_f32(f + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h + i))));
#endif
  for (; i < n; ++i) f[i] = half_to_float(h[i]);
}

/// h[i] = float_to_half(f[i]) for i < n: rounded to nearest, ties to even, as the instructions
/// round with the default (non-flushing) floating-point environment.
inline void narrow_to_halves(const float* f, Half* h, std::size_t n) {
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(h + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT));
#elif defined(__aarch64__)
  for (; i + 4 <= n; i += 4) vst1_u16(h + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(f + i))));
#endif
  for (; i < n; ++i) h[i] = float_to_half(f[i]);
}

/// The conversions Neon's Float16 workloads widen and narrow with (Float16ViaFloat32's `Halves`),
/// split over the context's threads.
struct VectorHalves {
  static void widen(const Half* h, float* f, std::uint64_t n, Context& context) {
    parallel_chunks(
        context, n, [&](std::size_t begin, std::size_t end) { widen_halves(h + begin, f + begin, end - begin); },
        stream_chunk, 1);
  }
  static void narrow(const float* f, Half* h, std::uint64_t n, Context& context) {
    parallel_chunks(
        context, n, [&](std::size_t begin, std::size_t end) { narrow_to_halves(f + begin, h + begin, end - begin); },
        stream_chunk, 1);
  }
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
