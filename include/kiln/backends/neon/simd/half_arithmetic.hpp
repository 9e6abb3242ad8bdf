// SPDX-License-Identifier: Apache-2.0
// Arithmetic on Float16 vectors, where the compile target has it: armv8.2-a's half-precision
// vector instructions (FEAT_FP16: FMLA, FMAX, FMIN on 8 halves), which the dispatching build's
// dotprod_fp16 set compiles for. xsimd 8.1 has no Float16 batch, so HalfVec wraps the intrinsics
// with the few members the GEMM and the depthwise convolution use (decision 0020). Elsewhere Float16 layers compute in
// Float32 on widened halves (Float16ViaFloat32, decision 0019).
#pragma once

#include "kiln/backends/neon/simd/half_vectors.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

#if KILN_NEON_HALF_ARITHMETIC
/// Eight halves in a register. Memory holds Float16 as its bits (kiln::Half), so loads and stores
/// go through 16-bit integer vectors.
struct HalfVec {
  static constexpr std::size_t size = 8;
  float16x8_t v;

  HalfVec() = default;
  HalfVec(float16x8_t value) : v(value) {}  // NOLINT: the intrinsics' results convert implicitly
  /// Every lane `f` rounded to Float16 (ties to even; infinities stay infinite).
  explicit HalfVec(float f) : v(vdupq_n_f16(static_cast<float16_t>(f))) {}

  static HalfVec load_unaligned(const Half* p) { return vreinterpretq_f16_u16(vld1q_u16(p)); }
  static HalfVec load_aligned(const Half* p) { return load_unaligned(p); }
  void store_unaligned(Half* p) const { vst1q_u16(p, vreinterpretq_u16_f16(v)); }
  void store_aligned(Half* p) const { store_unaligned(p); }
};

/// acc + a * b in every lane, one rounding (FMLA).
inline HalfVec multiply_add(HalfVec a, HalfVec b, HalfVec acc) { return vfmaq_f16(acc.v, a.v, b.v); }
/// x limited to [lo, hi] lane by lane.
inline HalfVec clamp_lanes(HalfVec x, HalfVec lo, HalfVec hi) { return vminq_f16(vmaxq_f16(x.v, lo.v), hi.v); }
/// *p in every lane.
inline HalfVec broadcast_element(const Half* p) { return vreinterpretq_f16_u16(vld1q_dup_u16(p)); }

/// The first n <= 8 halves at p in a vector, zeros after.
inline HalfVec load_tail(const Half* p, std::size_t n) {
  alignas(16) Half buffer[HalfVec::size] = {};
  for (std::size_t i = 0; i < n; ++i) buffer[i] = p[i];
  return HalfVec::load_aligned(buffer);
}
/// The first n <= 8 halves of v, stored at p.
inline void store_tail(Half* p, HalfVec v, std::size_t n) {
  alignas(16) Half buffer[HalfVec::size];
  v.store_aligned(buffer);
  for (std::size_t i = 0; i < n; ++i) p[i] = buffer[i];
}

#endif

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
