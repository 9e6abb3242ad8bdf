// SPDX-License-Identifier: Apache-2.0
// xsimd helpers shared by the Neon kernels: the float batch, tails without scalar loops, activations;
// Float16 in memory, computed in Float32 lanes.
#pragma once

#include <cmath>
#include <complex>
#include <cstring>
#include <numbers>

#include <xsimd/xsimd.hpp>

#include "kiln/backends/neon/kernel_base.hpp"
#include "kiln/backends/neon/simd/half_vectors.hpp"
#include "kiln/ops/activation.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

using Vec = xsimd::batch<float>;  // the compile target's widest float vector
/// Floats per vector: 4 (SSE, NEON), 8 (AVX2), 16 (AVX-512).
inline constexpr std::size_t lanes = Vec::size;

/// v rounded to the nearest integer, ties to even (RefBackend's nearbyint), for |v| < 2^22. xsimd
/// 8.1 rounds ties away from zero where the target has no such conversion (32-bit Arm NEON):
/// there, adding and subtracting 1.5 x 2^23 leaves the float's rounding (to even) at whole numbers.
inline xsimd::batch<std::int32_t> round_to_int(Vec v) {
#if XSIMD_WITH_NEON && !XSIMD_WITH_NEON64
  const Vec magic(12582912.0f);
  return xsimd::to_int((v + magic) - magic);
#else
  return xsimd::nearbyint_as_int(v);
#endif
}

/// v rounded to the nearest integer, ties away from zero (std::round), for |v| < 2^22: v - trunc(v)
/// is exact there.
inline xsimd::batch<std::int32_t> round_half_away_to_int(Vec v) {
  const Vec whole = xsimd::trunc(v), fraction = v - whole;
  const Vec step =
      xsimd::select(fraction >= Vec(0.5f), Vec(1.0f), xsimd::select(fraction <= Vec(-0.5f), Vec(-1.0f), Vec(0.0f)));
  return xsimd::to_int(whole + step);
}

/// Copies n <= lanes floats as a few fixed-size moves (16, 8, 4, 2, 1 floats by the bits of n): a
/// memcpy of a variable size is a library call, which cost more than the row of a narrow GEMM tile
/// whose last columns it stored.
inline void copy_short(float* to, const float* from, std::size_t n) {
  static_assert(lanes <= 16, "a vector is at most 16 floats");
  std::size_t i = 0;
  const auto move = [&]<std::size_t Count>() {
    if (Count <= lanes && (n & Count) != 0) {
      std::memcpy(to + i, from + i, Count * sizeof(float));
      i += Count;
    }
  };
  move.template operator()<16>();
  move.template operator()<8>();
  move.template operator()<4>();
  move.template operator()<2>();
  move.template operator()<1>();
}

/// The first n <= lanes floats at p in a vector, zeros after: tails run the vector code, not a
/// scalar loop, so small channel counts do not fall off a cliff.
inline Vec load_tail(const float* p, std::size_t n) {
  alignas(64) float buffer[lanes] = {};
  copy_short(buffer, p, n);
  return Vec::load_aligned(buffer);
}
inline void store_tail(float* p, Vec v, std::size_t n) {
  alignas(64) float buffer[lanes];
  v.store_aligned(buffer);
  copy_short(p, buffer, n);
}

/// n <= lanes floats at p: a whole vector when n is lanes, else a tail.
inline Vec load_upto(const float* p, std::size_t n) { return n == lanes ? Vec::load_unaligned(p) : load_tail(p, n); }
/// The first n <= lanes floats of v, stored at p.
inline void store_upto(float* p, Vec v, std::size_t n) {
  if (n == lanes)
    v.store_unaligned(p);
  else
    store_tail(p, v, n);
}

/// Float16 in memory, Float32 in registers: n <= lanes halves widened into a vector (zeros after),
/// and the first n lanes of a vector rounded to halves (ties to even), as Float16ViaFloat32 does a
/// whole tensor at a time, but a vector at a time with no buffer. A whole vector converts in
/// registers where the target converts that many lanes at once (AVX-512F: 16, F16C: 8, aarch64: 4).
#if defined(__AVX512F__) || (defined(__AVX__) && defined(__F16C__)) || defined(__aarch64__)
#define KILN_NEON_VECTOR_HALVES 1
inline Vec widen_vector(const Half* p) {
#if defined(__AVX512F__)
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
#elif defined(__AVX__)
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#else
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
#endif
}
inline void narrow_vector(Vec v, Half* p) {
#if defined(__AVX512F__)
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(__AVX__)
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
#else
  vst1_u16(p, vreinterpret_u16_f16(vcvt_f16_f32(v)));
#endif
}
#else
#define KILN_NEON_VECTOR_HALVES 0
#endif
inline Vec load_upto(const Half* p, std::size_t n) {
#if KILN_NEON_VECTOR_HALVES
  if (n == lanes) return widen_vector(p);
#endif
  alignas(64) float buffer[lanes] = {};
  widen_halves(p, buffer, n);
  return Vec::load_aligned(buffer);
}
inline void store_upto(Half* p, Vec v, std::size_t n) {
#if KILN_NEON_VECTOR_HALVES
  if (n == lanes) return narrow_vector(v, p);
#endif
  alignas(64) float buffer[lanes];
  v.store_aligned(buffer);
  narrow_to_halves(buffer, p, n);
}
/// An element as a float: itself, or a half widened.
inline float as_float(float f) { return f; }
inline float as_float(Half h) { return half_to_float(h); }

/// t[2i] = a[i] and t[2i + 1] = b[i] for the i of n's whole vectors; returns how many pairs that is.
/// xsimd stores a batch of complex numbers interleaved, real and imaginary parts.
inline std::size_t interleave_vectors(const float* a, const float* b, float* t, std::size_t n) {
  using Pairs = xsimd::batch<std::complex<float>>;
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes)
    Pairs(Vec::load_unaligned(a + i), Vec::load_unaligned(b + i))
        .store_unaligned(reinterpret_cast<std::complex<float>*>(t + 2 * i));
  return i;
}

/// Lanes [0, n) true, the others false: the mask of a tail of n < lanes elements.
inline xsimd::batch_bool<float> lanes_below(std::size_t n) {
  alignas(64) float index[lanes];
  for (std::size_t i = 0; i < lanes; ++i) index[i] = static_cast<float>(i);
  return Vec::load_aligned(index) < Vec(static_cast<float>(n));
}

/// y[i] = f(x[i]) for i < n, a vector at a time; on halves, f computes in Float32 and each result
/// is rounded once.
template <class F>
void map(const float* x, float* y, std::size_t n, F&& f) {
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) f(Vec::load_unaligned(x + i)).store_unaligned(y + i);
  if (i < n) store_tail(y + i, f(load_tail(x + i, n - i)), n - i);
}
template <class F>
void map(const Half* x, Half* y, std::size_t n, F&& f) {
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t count = std::min(lanes, n - i);
    store_upto(y + i, f(load_upto(x + i, count)), count);
  }
}

/// What the GEMM's tile does to vectors, named alike for each element type's vector (HalfVec's are
/// in half_arithmetic.hpp): acc + a * b with one rounding, x limited to [lo, hi], *p in every lane.
inline Vec multiply_add(Vec a, Vec b, Vec acc) { return xsimd::fma(a, b, acc); }
inline Vec clamp_lanes(Vec x, Vec lo, Vec hi) { return xsimd::min(xsimd::max(x, lo), hi); }
inline Vec broadcast_element(const float* p) { return Vec(*p); }

/// Horizontal max and sum of a vector.
inline float reduce_max(Vec v) {
  alignas(64) float buffer[lanes];
  v.store_aligned(buffer);
  float m = buffer[0];
  for (std::size_t i = 1; i < lanes; ++i) m = std::max(m, buffer[i]);
  return m;
}
inline float reduce_add(Vec v) { return xsimd::hadd(v); }

/// ops::Activation::softplus a vector at a time.
inline Vec softplus(Vec x) { return xsimd::max(x, Vec(0.0f)) + xsimd::log1p(xsimd::exp(-xsimd::abs(x))); }

/// Calls f with a vector functor for the activation `p`, so that the switch on the function is
/// made once per kernel call, not once per vector. Each functor reads like RefBackend's formula.
template <class F>
decltype(auto) visit_activation(const ops::Activation::Params& p, F&& f) {
  using A = ops::ActivationFunction;
  const Vec a(p.a), b(p.b), zero(0.0f), one(1.0f), three(3.0f), six(6.0f), sixth(1.0f / 6.0f), half(0.5f);
  switch (p.function) {
    case A::ReLU: return f([=](Vec x) { return xsimd::max(x, zero); });
    case A::BoundedReLU: return f([=](Vec x) { return xsimd::min(a, xsimd::max(x, b)); });
    case A::LeakyReLU: return f([=](Vec x) { return xsimd::select(x >= zero, x, a * x); });
    case A::ELU: return f([=](Vec x) { return xsimd::select(x >= zero, x, a * xsimd::expm1(x)); });
    case A::Sigmoid: return f([=](Vec x) { return one / (one + xsimd::exp(-x)); });
    case A::Tanh: return f([=](Vec x) { return xsimd::tanh(x); });
    case A::HardSigmoid: return f([=](Vec x) { return xsimd::max(zero, xsimd::min(one, a * x + b)); });
    case A::HardSwish:  // times 1/6 rather than / 6: a division is many times slower, within an ulp
      return f([=](Vec x) { return x * xsimd::max(zero, xsimd::min(six, x + three)) * sixth; });
    case A::SiLU: return f([=](Vec x) { return x / (one + xsimd::exp(-x)); });
    case A::Softplus: return f([](Vec x) { return softplus(x); });
    case A::Mish: return f([](Vec x) { return x * xsimd::tanh(softplus(x)); });
    case A::Softsign: return f([=](Vec x) { return x / (one + xsimd::abs(x)); });
    case A::SELU: return f([=](Vec x) { return b * xsimd::select(x > zero, x, a * xsimd::expm1(x)); });
    case A::CELU: return f([=](Vec x) { return xsimd::max(zero, x) + xsimd::min(zero, a * xsimd::expm1(x / a)); });
    case A::ThresholdedReLU: return f([=](Vec x) { return xsimd::select(x > a, x, zero); });
    case A::Shrink: return f([=](Vec x) { return xsimd::select(x < -a, x + b, xsimd::select(x > a, x - b, zero)); });
    case A::GELU:
      if (p.a != 0.0f) {
        const Vec k(std::sqrt(2.0f / std::numbers::pi_v<float>)), c(0.044715f);
        return f([=](Vec x) { return half * x * (one + xsimd::tanh(k * (x + c * x * x * x))); });
      }
      return f([=](Vec x) { return half * x * (one + xsimd::erf(x / Vec(std::numbers::sqrt2_v<float>))); });
  }
  return f([](Vec x) { return x; });
}

/// The activation `p` of one vector (a switch on the function per call).
inline Vec activate(const ops::Activation::Params& p, Vec x) {
  return visit_activation(p, [x](auto f) { return f(x); });
}

/// Applies an optional fused activation in place over n floats or halves.
template <class E>
void apply_activation(const std::optional<ops::Activation::Params>& activation, E* y, std::size_t n) {
  if (activation) visit_activation(*activation, [&](auto f) { map(y, y, n, f); });
}

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
