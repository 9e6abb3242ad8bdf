// SPDX-License-Identifier: Apache-2.0
// The integer dot products and output stage of NeonBackend's int8 kernels for this translation unit's
// instruction set: the one part of Neon written with intrinsics, because xsimd 8.1 has none for them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "kiln/backends/neon/isa.hpp"

#if XSIMD_WITH_SSE2
#include <immintrin.h>
#elif XSIMD_WITH_NEON
#include <arm_neon.h>
#endif

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// The output stage of a panel of columns, as int8 kernels read it a vector at a time: column j's
/// accumulator becomes clamp((acc x multiplier[j] + 2^(right_shift[j] - 1)) >> right_shift[j],
/// lo, hi) + zero_point, which is RefBackend's requantize (decision 0014) with the clamp moved
/// before the zero point is added.
///
/// Where every right shift is 33 or more, (acc x multiplier + 2^(right_shift - 1)) >> right_shift
/// equals (high + 2^(right_shift - 33)) >> (right_shift - 32), high being the product's upper 32
/// bits: the rounding term has no low half, so the low half cannot carry into the result. The
/// vector code then works in 32-bit lanes, which it reads from high_rounding and high_shift.
///
/// TensorFlow Lite's two roundings (Requantization::round_twice) add product_bias[j] (2^30, or 0
/// for a right shift under 32) to the 64-bit product, or subtract it where the sum is negative,
/// before the one rounding. Where every column rounds twice with a right shift of 32 or more
/// (two_roundings), the vector code computes them as TensorFlow Lite does, in 32-bit lanes:
/// x = (acc x multiplier + 2^30) >> 31, the product's bits 31 to 62, then x divided by
/// 2^high_shift[j] rounding halves away from zero, high_rounding[j] holding 2^high_shift[j] - 1.
///
/// Stores of two vectors at once narrow the values less the zero point to 16 bits with
/// saturation, add the zero point with saturation and clamp the words to the output range: a
/// value past a 16-bit limit is past the range on the same side, so the result is the same.
struct Int8OutputStage {
  const std::int32_t* multiplier;
  const std::int32_t* right_shift;  ///< in [1, 62]
  const std::int32_t* high_rounding;
  const std::int32_t* high_shift;
  const std::int32_t* product_bias;
  bool high_halves;     ///< every right shift is at least 33, no column rounds twice
  bool two_roundings;   ///< every column rounds twice, every right shift is at least 32
  std::int64_t lo, hi;  ///< the output range less the zero point
  std::int32_t zero_point;

  /// Column j of one accumulator, the way every instruction set's vector code computes it.
  std::int32_t scalar(std::int32_t acc, std::size_t j) const {
    const int right = right_shift[j];
    std::int64_t product = std::int64_t{acc} * multiplier[j];
    if (product_bias[j] != 0) product += product < -product_bias[j] ? -product_bias[j] : product_bias[j];
    const std::int64_t shifted = (product + (std::int64_t{1} << (right - 1))) >> right;
    return static_cast<std::int32_t>(std::clamp(shifted, lo, hi)) + zero_point;
  }
};

/// The first `count` bytes at x (all of Word's when count reaches its size), zeros after. A whole
/// word is one load: copying fewer bytes than the compiler can see builds it on the stack a byte
/// at a time, and reading it back stalls on store forwarding (an AVX2 int8 depthwise layer ran
/// at a fifth of its Float32 twin's speed).
template <class Word>
Word load_first_bytes(const std::uint8_t* x, std::size_t count) {
  Word bytes = 0;
  if (count >= sizeof bytes)
    std::memcpy(&bytes, x, sizeof bytes);
  else
    std::memcpy(&bytes, x, count);
  return bytes;
}

/// Int8Dot: how this instruction set multiplies int8 activations by int8 weights and sums into
/// int32 lanes. A micro-kernel holds `lanes` columns per accumulator vector and adds `depth`
/// products per lane per step; the activations are packed (convert) as AValue, shifted by
/// offset(signed) so that the instruction takes them, and the weights as BValue. Kernels that
/// work one channel a lane (depthwise, pooling) use the lane-wise int32 operations: widen (up to
/// `lanes` bytes), splat, add, subtract, max, multiply_add.
///
/// - AVX512-VNNI: vpdpbusd, 4 unsigned x signed byte products a lane; signed activations are
///   flipped to unsigned (x + 128).
/// - AVX-512, AVX2, SSE2: vpmaddwd on values widened to 16 bits, 2 products a lane, exact (the
///   byte form, vpmaddubsw, saturates at 16 bits).
/// - NEON with the dot product (aarch64, armv8.2-a+dotprod): sdot, 4 signed byte products a lane;
///   unsigned activations are flipped to signed (x - 128).
/// - NEON: mul and sadalp on values widened to 16 bits, 2 products a lane, exact.
/// - elsewhere: the same arithmetic in plain C++, four lanes.
///
/// Sums wrap modulo 2^32 (the instructions do; the portable code adds unsigned), which is exact:
/// decision 0014 bounds every true sum, offset correction included, within int32.
#if XSIMD_WITH_AVX2

/// The column of 2 x lanes that lane j % lanes of store_pair's vector j / lanes holds where
/// packing two vectors to 16 bits interleaves them four lanes at a time (AVX2, AVX-512): in this
/// order the words come out in column order.
constexpr std::size_t interleaved_pair_column(std::size_t j, std::size_t lanes) {
  const std::size_t lane = j % lanes;
  return 8 * (lane / 4) + 4 * (j / lanes) + lane % 4;
}

#endif

#if XSIMD_WITH_AVX512BW

namespace detail {
/// The AVX-512 parts common to the VNNI and 16-bit forms.
struct Int8DotAvx512 {
  static constexpr std::size_t lanes = 16;
  using Acc = __m512i;
  using Broadcast = __m512i;
  using BVec = __m512i;
  static Acc load(const std::int32_t* p) { return _mm512_loadu_si512(p); }
  static void store_sums(std::int32_t* p, Acc acc) { _mm512_storeu_si512(p, acc); }
  static BVec load_b(const void* p) { return _mm512_loadu_si512(p); }
  /// One step's activations of a row (4 bytes) in every lane.
  static Broadcast broadcast(const void* a) {
    std::int32_t v;
    std::memcpy(&v, a, sizeof v);
    return _mm512_set1_epi32(v);
  }

  /// Requantizes 16 columns and stores the first `count` (1..16) as bytes.
  static void store(Acc acc, const Int8OutputStage& s, std::size_t column, std::uint8_t* out, std::size_t count) {
    store_bytes(requantize(acc, s, column), out, count);
  }
  static constexpr std::size_t pair_column(std::size_t j) { return interleaved_pair_column(j, lanes); }
  /// Requantizes the columns of a and b (pair_column's order, as the stage's arrays are) and
  /// stores the first `count` (1..32) in column order.
  static void store_pair(Acc a, Acc b, const Int8OutputStage& s, std::uint8_t* out, std::size_t count) {
    const __m512i w = words(requantize_centred(a, s, 0), requantize_centred(b, s, lanes), s);
    _mm256_mask_storeu_epi8(out, static_cast<__mmask32>(first_bytes(count)), _mm512_cvtepi16_epi8(w));
  }
  /// store_pair for `rows` rows of sums (two vectors a row, one row after another), ldc bytes
  /// apart in out, with the stage's vectors loaded once: for a stage with high_halves (Form
  /// HighHalves) or two_roundings (TwoRoundings).
  template <class Form>
  static void store_pairs(const std::int32_t* sums, std::size_t rows, const Int8OutputStage& s, std::uint8_t* out,
                          std::size_t ldc, std::size_t count) {
    const Form first(s, 0), second(s, lanes);
    const auto mask = static_cast<__mmask32>(first_bytes(count));
    for (std::size_t r = 0; r < rows; ++r, sums += 2 * lanes, out += ldc)
      _mm256_mask_storeu_epi8(out, mask, _mm512_cvtepi16_epi8(words(first(load(sums)), second(load(sums + lanes)), s)));
  }
  /// Stores the low byte of the first `count` lanes.
  static void store_bytes(Acc values, std::uint8_t* out, std::size_t count) {
    _mm_mask_storeu_epi8(out, static_cast<__mmask16>((1u << count) - 1), _mm512_cvtepi32_epi8(values));
  }
  /// The 16 columns' outputs, one in each int32 lane.
  static __m512i requantize(Acc acc, const Int8OutputStage& s, std::size_t column) {
    return _mm512_min_epi32(
        _mm512_max_epi32(_mm512_add_epi32(requantize_centred(acc, s, column), _mm512_set1_epi32(s.zero_point)),
                         _mm512_set1_epi32(static_cast<std::int32_t>(s.lo + s.zero_point))),
        _mm512_set1_epi32(static_cast<std::int32_t>(s.hi + s.zero_point)));
  }
  /// The outputs of two vectors of values less the zero point, as 16-bit words (see
  /// Int8OutputStage): lane L holds a's lanes 4L to 4L + 3, then b's.
  static __m512i words(__m512i a, __m512i b, const Int8OutputStage& s) {
    const __m512i w = _mm512_adds_epi16(_mm512_packs_epi32(a, b), _mm512_set1_epi16(static_cast<short>(s.zero_point)));
    return _mm512_min_epi16(_mm512_max_epi16(w, _mm512_set1_epi16(static_cast<short>(s.lo + s.zero_point))),
                            _mm512_set1_epi16(static_cast<short>(s.hi + s.zero_point)));
  }
  /// The 16 columns' outputs less the zero point: exact where the products' high halves serve,
  /// else clamped to [lo, hi].
  static __m512i requantize_centred(Acc acc, const Int8OutputStage& s, std::size_t column) {
    if (s.high_halves) return HighHalves(s, column)(acc);
    if (s.two_roundings) return TwoRoundings(s, column)(acc);
    return centred_in_64_bit_lanes(acc, s, column);
  }
  /// A stage's vectors for 16 columns from `column` on, loaded once, and the columns' 64-bit
  /// products: vpmuldq multiplies the low halves of 64-bit lanes, the even columns, and shifted
  /// down 32 bits, the odd ones.
  struct StageVectors {
    __m512i multiplier, odd_multiplier, high_rounding, high_shift;
    StageVectors(const Int8OutputStage& s, std::size_t column)
        : multiplier(_mm512_loadu_si512(s.multiplier + column)),
          odd_multiplier(_mm512_srli_epi64(multiplier, 32)),
          high_rounding(_mm512_loadu_si512(s.high_rounding + column)),
          high_shift(_mm512_loadu_si512(s.high_shift + column)) {}
    __m512i even_products(__m512i acc) const { return _mm512_mul_epi32(acc, multiplier); }
    __m512i odd_products(__m512i acc) const { return _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), odd_multiplier); }
  };
  /// The stage of 16 columns whose right shifts are all 33 or more (high_halves): the products'
  /// high halves, then 32-bit lanes throughout.
  struct HighHalves : StageVectors {
    using StageVectors::StageVectors;
    __m512i operator()(__m512i acc) const {
      const __m512i high =
          _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even_products(acc), 32), odd_products(acc));
      return _mm512_srav_epi32(_mm512_add_epi32(high, high_rounding), high_shift);
    }
  };
  /// The stage of 16 columns that round twice (two_roundings): the products' bits 31 to 62
  /// (rounded at bit 30), then a division by a power of two that rounds halves away from zero, in
  /// 32-bit lanes.
  struct TwoRoundings : StageVectors {
    using StageVectors::StageVectors;
    __m512i operator()(__m512i acc) const {
      const __m512i rounding = _mm512_set1_epi64(std::int64_t{1} << 30), mask = high_rounding;
      const __m512i even = _mm512_add_epi64(even_products(acc), rounding);
      const __m512i odd = _mm512_add_epi64(odd_products(acc), rounding);
      const __m512i x = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 31), _mm512_slli_epi64(odd, 1));
      // Rounded up where the remainder passes half, or reaches it for a positive x.
      const __m512i threshold = _mm512_sub_epi32(_mm512_srli_epi32(mask, 1), _mm512_srai_epi32(x, 31));
      const __mmask16 up = _mm512_cmpgt_epi32_mask(_mm512_and_si512(x, mask), threshold);
      const __m512i quotient = _mm512_srav_epi32(x, high_shift);
      return _mm512_mask_add_epi32(quotient, up, quotient, _mm512_set1_epi32(1));
    }
  };
  /// requantize_centred's exact 64-bit products, rounded, shifted and clamped in 64-bit lanes: the
  /// path of multipliers of 2^-2 and more.
  static __m512i centred_in_64_bit_lanes(Acc acc, const Int8OutputStage& s, std::size_t column) {
    const __m512i multiplier = _mm512_loadu_si512(s.multiplier + column);
    const __m512i even = _mm512_mul_epi32(acc, multiplier);
    const __m512i odd = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), _mm512_srli_epi64(multiplier, 32));
    const __m512i right = _mm512_loadu_si512(s.right_shift + column);
    const __m512i bias = _mm512_loadu_si512(s.product_bias + column);
    const __m512i one = _mm512_set1_epi64(1), lo = _mm512_set1_epi64(s.lo), hi = _mm512_set1_epi64(s.hi);
    const __m512i low_halves = _mm512_set1_epi64(0xffffffff);
    auto in_64_bit_lanes = [&](__m512i product, __m512i r, __m512i b) {
      product = _mm512_add_epi64(product, b);
      product = _mm512_mask_sub_epi64(product, _mm512_cmplt_epi64_mask(product, _mm512_setzero_si512()), product,
                                      _mm512_add_epi64(b, b));
      const __m512i rounding = _mm512_sllv_epi64(one, _mm512_sub_epi64(r, one));
      const __m512i shifted = _mm512_srav_epi64(_mm512_add_epi64(product, rounding), r);
      return _mm512_min_epi64(_mm512_max_epi64(shifted, lo), hi);
    };
    const __m512i even_y =
        in_64_bit_lanes(even, _mm512_and_si512(right, low_halves), _mm512_and_si512(bias, low_halves));
    const __m512i odd_y = in_64_bit_lanes(odd, _mm512_srli_epi64(right, 32), _mm512_srli_epi64(bias, 32));
    return _mm512_mask_blend_epi32(0xAAAA, even_y, _mm512_slli_epi64(odd_y, 32));
  }
  static __mmask64 first_bytes(std::size_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }

  /// The first `count` (up to 16) bytes at x as int32 lanes, zeros after.
  static Acc widen(const std::uint8_t* x, std::size_t count, bool signed_input) {
    const __m128i bytes = _mm_maskz_loadu_epi8(static_cast<__mmask16>(first_bytes(count)), x);
    return signed_input ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
  }
  static Acc splat(std::int32_t v) { return _mm512_set1_epi32(v); }
  static Acc subtract(Acc a, Acc b) { return _mm512_sub_epi32(a, b); }
  static Acc add(Acc a, Acc b) { return _mm512_add_epi32(a, b); }
  static Acc max(Acc a, Acc b) { return _mm512_max_epi32(a, b); }
  static Acc multiply_add(Acc acc, Acc a, Acc b) { return _mm512_add_epi32(acc, _mm512_mullo_epi32(a, b)); }
};
}  // namespace detail

#if defined(__AVX512VNNI__)
struct Int8Dot : detail::Int8DotAvx512 {
  static constexpr std::string_view name = "avx512 vnni: vpdpbusd";
  static constexpr std::size_t depth = 4;
  using AValue = std::uint8_t;
  using BValue = std::int8_t;
  static constexpr std::int32_t offset(bool signed_input) { return signed_input ? 128 : 0; }
  static Acc madd(Acc acc, Broadcast a, BVec b) { return _mm512_dpbusd_epi32(acc, a, b); }
  /// dst[i] = src[i] + offset: a signed byte plus 128 is its top bit flipped.
  static void convert(const std::uint8_t* src, AValue* dst, std::size_t n, bool signed_input) {
    const __m512i flip = _mm512_set1_epi8(signed_input ? static_cast<char>(0x80) : 0);
    for (std::size_t i = 0; i < n; i += 64) {
      const __mmask64 m = first_bytes(n - i);
      _mm512_mask_storeu_epi8(dst + i, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, src + i), flip));
    }
  }
};

/// Depthwise windows four horizontal taps at a time with vpdpbusd. The taps of a block of 64
/// channels, loaded as a vector each, interleave within 128-bit lanes into four vectors of quads:
/// lane d of quad vector v holds the four taps of channel `channel(v, d)`. Weights, biases and
/// output stages are laid out in that order at load; `store` puts the outputs back in channel
/// order. (The 16-bit forms gain too little over a tap at a time to pay for the interleaving.)
struct Int8DepthwiseQuads {
  static constexpr bool available = true;
  static constexpr std::size_t block = 64, taps = 4, vectors = 4, lanes = 16;
  using Vector = __m512i;
  static constexpr std::size_t channel(std::size_t v, std::size_t d) { return 16 * (d / 4) + 4 * v + d % 4; }
  static __mmask64 mask(std::size_t count) { return detail::Int8DotAvx512::first_bytes(count); }
  /// One tap's `mask`ed channels as vpdpbusd's unsigned bytes (signed ones flipped: x + 128).
  static Vector load_tap(const std::uint8_t* p, __mmask64 m, bool signed_input) {
    const __m512i x = _mm512_maskz_loadu_epi8(m, p);
    return signed_input ? _mm512_xor_si512(x, _mm512_set1_epi8(static_cast<char>(0x80))) : x;
  }
  static Vector splat(std::uint8_t byte) { return _mm512_set1_epi8(static_cast<char>(byte)); }
  [[gnu::always_inline]] static void interleave(const Vector (&t)[taps], Vector (&q)[vectors]) {
    const __m512i lo01 = _mm512_unpacklo_epi8(t[0], t[1]), hi01 = _mm512_unpackhi_epi8(t[0], t[1]);
    const __m512i lo23 = _mm512_unpacklo_epi8(t[2], t[3]), hi23 = _mm512_unpackhi_epi8(t[2], t[3]);
    q[0] = _mm512_unpacklo_epi16(lo01, lo23);
    q[1] = _mm512_unpackhi_epi16(lo01, lo23);
    q[2] = _mm512_unpacklo_epi16(hi01, hi23);
    q[3] = _mm512_unpackhi_epi16(hi01, hi23);
  }
  static Vector load(const std::int32_t* p) { return _mm512_loadu_si512(p); }
  /// acc plus, in each lane, its four taps' products with its four weights (w: 64 bytes).
  static Vector dot(Vector acc, Vector quads, const std::int8_t* w) {
    return _mm512_dpbusd_epi32(acc, quads, _mm512_loadu_si512(w));
  }
  /// Requantizes a block's accumulators (stage: from the block's first column, in quad order) and
  /// stores its first `count` channels, of a signed or unsigned type, in channel order. (Inlined,
  /// so that they stay in registers.)
  template <bool Signed>
  [[gnu::always_inline]] static void store(const Vector (&acc)[vectors], const Int8OutputStage& stage,
                                           std::uint8_t* out, std::size_t count) {
    using Dot = detail::Int8DotAvx512;
    Vector centred[vectors];
    for (std::size_t v = 0; v < vectors; ++v) centred[v] = Dot::requantize_centred(acc[v], stage, v * lanes);
    // Lanes 4L to 4L + 3 of vector v hold channels 16L + 4v to 16L + 4v + 3, so packing vectors 0
    // with 1 and 2 with 3, then the two, leaves lane L with channels 16L to 16L + 15. The words are
    // outputs already, which the last pack keeps.
    const Vector w01 = Dot::words(centred[0], centred[1], stage), w23 = Dot::words(centred[2], centred[3], stage);
    _mm512_mask_storeu_epi8(out, mask(count), Signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23));
  }
};
#else
struct Int8Dot : detail::Int8DotAvx512 {
  static constexpr std::string_view name = "avx512: vpmaddwd";
  static constexpr std::size_t depth = 2;
  using AValue = std::int16_t;
  using BValue = std::int16_t;
  static constexpr std::int32_t offset(bool) { return 0; }
  static Acc madd(Acc acc, Broadcast a, BVec b) { return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b)); }
  static void convert(const std::uint8_t* src, AValue* dst, std::size_t n, bool signed_input) {
    for (std::size_t i = 0; i < n; i += 32) {
      const __mmask64 m = first_bytes(n - i);
      const __m256i bytes = _mm256_maskz_loadu_epi8(static_cast<__mmask32>(m), src + i);
      const __m512i words = signed_input ? _mm512_cvtepi8_epi16(bytes) : _mm512_cvtepu8_epi16(bytes);
      _mm512_mask_storeu_epi16(dst + i, static_cast<__mmask32>(m), words);
    }
  }
};
#endif

#elif XSIMD_WITH_AVX2

struct Int8Dot {
  static constexpr std::string_view name = "avx2: vpmaddwd";
  static constexpr std::size_t lanes = 8, depth = 2;
  using AValue = std::int16_t;
  using BValue = std::int16_t;
  using Acc = __m256i;
  using Broadcast = __m256i;
  using BVec = __m256i;
  static constexpr std::int32_t offset(bool) { return 0; }
  static Acc load(const std::int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store_sums(std::int32_t* p, Acc acc) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), acc); }
  static BVec load_b(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static Broadcast broadcast(const void* a) {
    std::int32_t v;
    std::memcpy(&v, a, sizeof v);
    return _mm256_set1_epi32(v);
  }
  static Acc madd(Acc acc, Broadcast a, BVec b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
  static Acc widen(const std::uint8_t* x, std::size_t count, bool signed_input) {
    const __m128i v = count >= lanes ? _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x))
                                     : _mm_cvtsi64_si128(load_first_bytes<std::int64_t>(x, count));
    return signed_input ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
  }
  static Acc splat(std::int32_t v) { return _mm256_set1_epi32(v); }
  static Acc subtract(Acc a, Acc b) { return _mm256_sub_epi32(a, b); }
  static Acc add(Acc a, Acc b) { return _mm256_add_epi32(a, b); }
  static Acc max(Acc a, Acc b) { return _mm256_max_epi32(a, b); }
  static Acc multiply_add(Acc acc, Acc a, Acc b) { return _mm256_add_epi32(acc, _mm256_mullo_epi32(a, b)); }
  static void convert(const std::uint8_t* src, AValue* dst, std::size_t n, bool signed_input) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                          signed_input ? _mm256_cvtepi8_epi16(bytes) : _mm256_cvtepu8_epi16(bytes));
    }
    for (; i < n; ++i) dst[i] = signed_input ? static_cast<std::int8_t>(src[i]) : src[i];
  }

  /// Requantizes 8 columns and stores the first `count` (1..8) as bytes.
  static void store(Acc acc, const Int8OutputStage& s, std::size_t column, std::uint8_t* out, std::size_t count) {
    store_bytes(requantize(acc, s, column), out, count);
  }
  static constexpr std::size_t pair_column(std::size_t j) { return interleaved_pair_column(j, lanes); }
  /// Requantizes the columns of a and b (pair_column's order) and stores the first `count` (1..16)
  /// in column order, narrowed as the AVX-512 form does.
  static void store_pair(Acc a, Acc b, const Int8OutputStage& s, std::uint8_t* out, std::size_t count) {
    const __m256i sums =
        _mm256_adds_epi16(_mm256_packs_epi32(requantize_centred(a, s, 0), requantize_centred(b, s, lanes)),
                          _mm256_set1_epi16(static_cast<short>(s.zero_point)));
    const __m256i w =
        _mm256_min_epi16(_mm256_max_epi16(sums, _mm256_set1_epi16(static_cast<short>(s.lo + s.zero_point))),
                         _mm256_set1_epi16(static_cast<short>(s.hi + s.zero_point)));
    // The low byte of each word: the first 8 bytes of each half, then the halves' first quads.
    const __m256i picked =
        _mm256_shuffle_epi8(w, _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1, 0, 2, 4, 6,
                                                8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1));
    store_first(_mm256_castsi256_si128(_mm256_permute4x64_epi64(picked, 0b1000)), out, count);
  }
  /// Stores the low byte of the first `count` lanes.
  static void store_bytes(Acc y, std::uint8_t* out, std::size_t count) {
    // The low byte of each lane: bytes 0, 4, 8, 12 of each half, then the two halves' first words.
    const __m256i picked =
        _mm256_shuffle_epi8(y, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8,
                                                12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
    store_first(_mm_unpacklo_epi32(_mm256_castsi256_si128(picked), _mm256_extracti128_si256(picked, 1)), out, count);
  }
  /// Stores the first `count` (up to 16) bytes.
  static void store_first(__m128i bytes, std::uint8_t* out, std::size_t count) {
    if (count == 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), bytes);
      return;
    }
    if (count == lanes) {  // store()'s whole vector: a copy of a size known only at run time is slow
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out), bytes);
      return;
    }
    std::uint8_t tail[16];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tail), bytes);
    std::memcpy(out, tail, count);
  }
  /// The 8 columns' outputs, one in each int32 lane.
  static __m256i requantize(Acc acc, const Int8OutputStage& s, std::size_t column) {
    return _mm256_min_epi32(
        _mm256_max_epi32(_mm256_add_epi32(requantize_centred(acc, s, column), _mm256_set1_epi32(s.zero_point)),
                         _mm256_set1_epi32(static_cast<std::int32_t>(s.lo + s.zero_point))),
        _mm256_set1_epi32(static_cast<std::int32_t>(s.hi + s.zero_point)));
  }
  /// The 8 columns' outputs less the zero point (see the AVX-512 form).
  static __m256i requantize_centred(Acc acc, const Int8OutputStage& s, std::size_t column) {
    const __m256i multiplier = load(s.multiplier + column);
    const __m256i even = _mm256_mul_epi32(acc, multiplier);
    const __m256i odd = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), _mm256_srli_epi64(multiplier, 32));
    if (s.high_halves) {
      const __m256i high = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
      return _mm256_srav_epi32(_mm256_add_epi32(high, load(s.high_rounding + column)), load(s.high_shift + column));
    }
    if (s.two_roundings) {  // as the AVX-512 form's TwoRoundings
      const __m256i rounding = _mm256_set1_epi64x(std::int64_t{1} << 30), mask = load(s.high_rounding + column);
      const __m256i x = _mm256_blend_epi32(_mm256_srli_epi64(_mm256_add_epi64(even, rounding), 31),
                                           _mm256_slli_epi64(_mm256_add_epi64(odd, rounding), 1), 0xAA);
      const __m256i threshold = _mm256_sub_epi32(_mm256_srli_epi32(mask, 1), _mm256_srai_epi32(x, 31));
      const __m256i up = _mm256_cmpgt_epi32(_mm256_and_si256(x, mask), threshold);  // -1 where rounded up
      return _mm256_sub_epi32(_mm256_srav_epi32(x, load(s.high_shift + column)), up);
    }
    return centred_in_64_bit_lanes(even, odd, s, column);
  }
  /// As the AVX-512 form's.
  static __m256i centred_in_64_bit_lanes(__m256i even, __m256i odd, const Int8OutputStage& s, std::size_t column) {
    const __m256i right = load(s.right_shift + column), bias = load(s.product_bias + column);
    const __m256i one = _mm256_set1_epi64x(1), zero = _mm256_setzero_si256(), sixty_four = _mm256_set1_epi64x(64);
    const __m256i lo = _mm256_set1_epi64x(s.lo), hi = _mm256_set1_epi64x(s.hi);
    const __m256i low_halves = _mm256_set1_epi64x(0xffffffff);
    auto in_64_bit_lanes = [&](__m256i product, __m256i r, __m256i b) {
      product = _mm256_add_epi64(product, b);
      product = _mm256_sub_epi64(product, _mm256_and_si256(_mm256_cmpgt_epi64(zero, product), _mm256_add_epi64(b, b)));
      const __m256i sum = _mm256_add_epi64(product, _mm256_sllv_epi64(one, _mm256_sub_epi64(r, one)));
      // AVX2 has no 64-bit arithmetic shift: a logical one, with the sign's bits put back on top.
      const __m256i sign = _mm256_cmpgt_epi64(zero, sum);
      __m256i y = _mm256_or_si256(_mm256_srlv_epi64(sum, r), _mm256_sllv_epi64(sign, _mm256_sub_epi64(sixty_four, r)));
      y = _mm256_blendv_epi8(y, lo, _mm256_cmpgt_epi64(lo, y));
      return _mm256_blendv_epi8(y, hi, _mm256_cmpgt_epi64(y, hi));
    };
    const __m256i even_y =
        in_64_bit_lanes(even, _mm256_and_si256(right, low_halves), _mm256_and_si256(bias, low_halves));
    const __m256i odd_y = in_64_bit_lanes(odd, _mm256_srli_epi64(right, 32), _mm256_srli_epi64(bias, 32));
    return _mm256_blend_epi32(even_y, _mm256_slli_epi64(odd_y, 32), 0xAA);
  }
};

#elif XSIMD_WITH_NEON

/// NEON (aarch64, and armv7 with NEON): SDOT where the target has the dot-product extension
/// (armv8.2-a+dotprod: 4 signed byte products a lane; unsigned activations flipped to signed,
/// x - 128), else a 16-bit multiply and a pairwise widening add (SADALP: 2 products a lane, exact:
/// a product of a 16-bit activation in [-128, 255] and a weight in [-128, 127] fits 16 bits).
/// The output stage is vector code: 64-bit products (SMULL), SRSHL by minus the shift (a rounding
/// right shift that rounds half up, as RefBackend does), narrowing with saturation, clamp.
struct Int8Dot {
  static constexpr std::size_t lanes = 4;
  using Acc = int32x4_t;
  /// One step's activations of a row (4 bytes) in every lane.
  static int32x4_t word_in_every_lane(const void* a) {
    std::int32_t v;
    std::memcpy(&v, a, sizeof v);
    return vdupq_n_s32(v);
  }
#if defined(__ARM_FEATURE_DOTPROD)
  static constexpr std::string_view name = "neon dotprod: sdot";
  static constexpr std::size_t depth = 4;
  using AValue = std::int8_t;
  using BValue = std::int8_t;
  using Broadcast = int8x16_t;
  using BVec = int8x16_t;
  static constexpr std::int32_t offset(bool signed_input) { return signed_input ? 0 : -128; }
  static BVec load_b(const void* p) { return vld1q_s8(static_cast<const std::int8_t*>(p)); }
  static Broadcast broadcast(const void* a) { return vreinterpretq_s8_s32(word_in_every_lane(a)); }
  static Acc madd(Acc acc, Broadcast a, BVec b) { return vdotq_s32(acc, a, b); }
  /// dst[i] = src[i] + offset: an unsigned byte less 128 is its top bit flipped.
  static void convert(const std::uint8_t* src, AValue* dst, std::size_t n, bool signed_input) {
    const std::uint8_t flip = signed_input ? 0 : 0x80;
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16)
      vst1q_u8(reinterpret_cast<std::uint8_t*>(dst + i), veorq_u8(vld1q_u8(src + i), vdupq_n_u8(flip)));
    for (; i < n; ++i) dst[i] = static_cast<AValue>(src[i] ^ flip);
  }
#else
  static constexpr std::string_view name = "neon: mul + sadalp";
  static constexpr std::size_t depth = 2;
  using AValue = std::int16_t;
  using BValue = std::int16_t;
  using Broadcast = int16x8_t;
  using BVec = int16x8_t;
  static constexpr std::int32_t offset(bool) { return 0; }
  static BVec load_b(const void* p) { return vld1q_s16(static_cast<const std::int16_t*>(p)); }
  static Broadcast broadcast(const void* a) { return vreinterpretq_s16_s32(word_in_every_lane(a)); }
  static Acc madd(Acc acc, Broadcast a, BVec b) { return vpadalq_s16(acc, vmulq_s16(a, b)); }
  static void convert(const std::uint8_t* src, AValue* dst, std::size_t n, bool signed_input) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const uint8x8_t bytes = vld1_u8(src + i);
      vst1q_s16(dst + i, signed_input ? vmovl_s8(vreinterpret_s8_u8(bytes)) : vreinterpretq_s16_u16(vmovl_u8(bytes)));
    }
    for (; i < n; ++i) dst[i] = signed_input ? static_cast<std::int8_t>(src[i]) : src[i];
  }
#endif
  static Acc load(const std::int32_t* p) { return vld1q_s32(p); }
  static void store_sums(std::int32_t* p, Acc acc) { vst1q_s32(p, acc); }
  static Acc widen(const std::uint8_t* x, std::size_t count, bool signed_input) {
    const uint8x8_t v = vcreate_u8(load_first_bytes<std::uint32_t>(x, count));
    return signed_input ? vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(v))))
                        : vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(v))));
  }
  static Acc splat(std::int32_t v) { return vdupq_n_s32(v); }
  static Acc subtract(Acc a, Acc b) { return vsubq_s32(a, b); }
  static Acc add(Acc a, Acc b) { return vaddq_s32(a, b); }
  static Acc max(Acc a, Acc b) { return vmaxq_s32(a, b); }
  static Acc multiply_add(Acc acc, Acc a, Acc b) { return vmlaq_s32(acc, a, b); }

  /// Requantizes 4 columns and stores the first `count` (1..4) as bytes.
  static void store(Acc acc, const Int8OutputStage& s, std::size_t column, std::uint8_t* out, std::size_t count) {
    store_bytes(requantize(acc, s, column), out, count);
  }
  /// Two vectors of columns in order: a the first `lanes`.
  static constexpr std::size_t pair_column(std::size_t j) { return j; }
  /// Requantizes the columns of a and b and stores the first `count` (1..8).
  static void store_pair(Acc a, Acc b, const Int8OutputStage& s, std::uint8_t* out, std::size_t count) {
    store_first(low_bytes(requantize(a, s, 0), requantize(b, s, lanes)), out, count);
  }
  /// Stores the low byte of the first `count` lanes.
  static void store_bytes(Acc values, std::uint8_t* out, std::size_t count) {
    store_first(low_bytes(values, values), out, count);
  }
  /// The low byte of each lane of a, then of b.
  static uint8x8_t low_bytes(Acc a, Acc b) {
    return vmovn_u16(vreinterpretq_u16_s16(vcombine_s16(vmovn_s32(a), vmovn_s32(b))));
  }
  /// Stores the first `count` (up to 8) bytes.
  static void store_first(uint8x8_t bytes, std::uint8_t* out, std::size_t count) {
    if (count == 2 * lanes) {
      vst1_u8(out, bytes);
      return;
    }
    std::uint8_t tail[2 * lanes];
    vst1_u8(tail, bytes);
    if (count == lanes)  // store()'s whole vector: a copy of a size known only at run time is slow
      std::memcpy(out, tail, lanes);
    else
      std::memcpy(out, tail, count);
  }
  /// The 4 columns' outputs, one in each lane.
  static Acc requantize(Acc acc, const Int8OutputStage& s, std::size_t column) {
    return vaddq_s32(requantize_centred(acc, s, column), vdupq_n_s32(s.zero_point));
  }
  /// The 4 columns' outputs less the zero point, clamped to [lo, hi].
  static Acc requantize_centred(Acc acc, const Int8OutputStage& s, std::size_t column) {
    const int32x4_t multiplier = vld1q_s32(s.multiplier + column);
    const int32x4_t lo = vdupq_n_s32(static_cast<std::int32_t>(s.lo)),
                    hi = vdupq_n_s32(static_cast<std::int32_t>(s.hi));
    if (s.two_roundings) {
      // TensorFlow Lite's own NEON form: SQRDMULH is (2 acc x multiplier + 2^31) >> 32; a negative x
      // less 1, then SRSHL's rounding right shift (halves up), rounds halves away from zero.
      const int32x4_t x = vqrdmulhq_s32(acc, multiplier);
      const int32x4_t minus_exponent = vnegq_s32(vld1q_s32(s.high_shift + column));
      const int32x4_t y = vrshlq_s32(vqaddq_s32(x, vshrq_n_s32(x, 31)), minus_exponent);
      return vminq_s32(vmaxq_s32(y, lo), hi);
    }
    const int32x4_t minus_shift = vnegq_s32(vld1q_s32(s.right_shift + column));
    const int32x4_t bias = vld1q_s32(s.product_bias + column);
    // TensorFlow Lite's bias, subtracted twice where the biased product is negative (its sign, shifted in).
    auto biased = [](int64x2_t product, int32x2_t b) {
      const int64x2_t wide = vmovl_s32(b);
      product = vaddq_s64(product, wide);
      return vsubq_s64(product, vandq_s64(vreinterpretq_s64_u64(vreinterpretq_u64_s64(vshrq_n_s64(product, 63))),
                                          vshlq_n_s64(wide, 1)));
    };
    const int64x2_t low = vrshlq_s64(biased(vmull_s32(vget_low_s32(acc), vget_low_s32(multiplier)), vget_low_s32(bias)),
                                     vmovl_s32(vget_low_s32(minus_shift)));
    const int64x2_t high =
        vrshlq_s64(biased(vmull_s32(vget_high_s32(acc), vget_high_s32(multiplier)), vget_high_s32(bias)),
                   vmovl_s32(vget_high_s32(minus_shift)));
    const int32x4_t y = vcombine_s32(vqmovn_s64(low), vqmovn_s64(high));
    return vminq_s32(vmaxq_s32(y, lo), hi);
  }
};

#else

/// SSE2 (pmaddwd, with a scalar output stage: a signed 32 x 32-bit multiply needs SSE4.1) and any
/// other target (plain C++ lanes, which the compiler may vectorise).
struct Int8Dot {
#if XSIMD_WITH_SSE2
  static constexpr std::string_view name = "sse2: pmaddwd";
#else
  static constexpr std::string_view name = "portable C++";
#endif
  static constexpr std::size_t lanes = 4, depth = 2;
  using AValue = std::int16_t;
  using BValue = std::int16_t;
  static constexpr std::int32_t offset(bool) { return 0; }
#if XSIMD_WITH_SSE2
  using Acc = __m128i;
  using Broadcast = __m128i;
  using BVec = __m128i;
  static Acc load(const std::int32_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static BVec load_b(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
  static Broadcast broadcast(const void* a) {
    std::int32_t v;
    std::memcpy(&v, a, sizeof v);
    return _mm_set1_epi32(v);
  }
  static Acc madd(Acc acc, Broadcast a, BVec b) { return _mm_add_epi32(acc, _mm_madd_epi16(a, b)); }
  static void store_sums(std::int32_t* out, Acc acc) { _mm_storeu_si128(reinterpret_cast<__m128i*>(out), acc); }
  static Acc widen(const std::uint8_t* x, std::size_t count, bool signed_input) {
    const __m128i v = _mm_cvtsi32_si128(load_first_bytes<std::int32_t>(x, count));
    if (!signed_input) {
      const __m128i zero = _mm_setzero_si128();
      return _mm_unpacklo_epi16(_mm_unpacklo_epi8(v, zero), zero);
    }
    const __m128i doubled = _mm_unpacklo_epi8(v, v);  // each byte in both halves of a 16-bit lane
    return _mm_srai_epi32(_mm_unpacklo_epi16(doubled, doubled), 24);
  }
  static Acc splat(std::int32_t v) { return _mm_set1_epi32(v); }
  static Acc subtract(Acc a, Acc b) { return _mm_sub_epi32(a, b); }
  static Acc add(Acc a, Acc b) { return _mm_add_epi32(a, b); }
  static Acc max(Acc a, Acc b) {  // pmaxsd is SSE4.1
    const __m128i a_larger = _mm_cmpgt_epi32(a, b);
    return _mm_or_si128(_mm_and_si128(a_larger, a), _mm_andnot_si128(a_larger, b));
  }
  /// acc + a x b in each lane: the low 32 bits of the unsigned products of the even and odd lanes,
  /// which are those of the signed ones (SSE2 has no pmulld).
  static Acc multiply_add(Acc acc, Acc a, Acc b) {
    const __m128i even = _mm_mul_epu32(a, b), odd = _mm_mul_epu32(_mm_srli_epi64(a, 32), _mm_srli_epi64(b, 32));
    const __m128i product = _mm_unpacklo_epi32(_mm_shuffle_epi32(even, _MM_SHUFFLE(0, 0, 2, 0)),
                                               _mm_shuffle_epi32(odd, _MM_SHUFFLE(0, 0, 2, 0)));
    return _mm_add_epi32(acc, product);
  }
#else
  struct Acc {
    std::int32_t lane[lanes];
  };
  using Broadcast = const AValue*;
  using BVec = const BValue*;
  static Acc load(const std::int32_t* p) {
    Acc a;
    std::memcpy(a.lane, p, sizeof a.lane);
    return a;
  }
  static BVec load_b(const void* p) { return static_cast<const BValue*>(p); }
  static Broadcast broadcast(const void* a) { return static_cast<const AValue*>(a); }
  static Acc madd(Acc acc, Broadcast a, BVec b) {
    for (std::size_t l = 0; l < lanes; ++l) {
      const std::int32_t pair = a[0] * b[l * depth] + a[1] * b[l * depth + 1];  // at most 2 x 255 x 128
      acc.lane[l] =
          static_cast<std::int32_t>(static_cast<std::uint32_t>(acc.lane[l]) + static_cast<std::uint32_t>(pair));
    }
    return acc;
  }
  static void store_sums(std::int32_t* out, Acc acc) { std::memcpy(out, acc.lane, sizeof acc.lane); }
  static Acc widen(const std::uint8_t* x, std::size_t count, bool signed_input) {
    Acc a{};
    for (std::size_t l = 0; l < std::min(count, lanes); ++l)
      a.lane[l] = signed_input ? static_cast<std::int8_t>(x[l]) : std::int32_t{x[l]};
    return a;
  }
  static Acc splat(std::int32_t v) {
    Acc a;
    std::fill(a.lane, a.lane + lanes, v);
    return a;
  }
  static Acc subtract(Acc a, Acc b) {
    for (std::size_t l = 0; l < lanes; ++l) a.lane[l] -= b.lane[l];  // differences of bytes
    return a;
  }
  static Acc add(Acc a, Acc b) {
    for (std::size_t l = 0; l < lanes; ++l) a.lane[l] += b.lane[l];  // sums of bytes, bounded by the caller
    return a;
  }
  static Acc max(Acc a, Acc b) {
    for (std::size_t l = 0; l < lanes; ++l) a.lane[l] = std::max(a.lane[l], b.lane[l]);
    return a;
  }
  static Acc multiply_add(Acc acc, Acc a, Acc b) {
    for (std::size_t l = 0; l < lanes; ++l)
      acc.lane[l] = static_cast<std::int32_t>(static_cast<std::uint32_t>(acc.lane[l]) +
                                              static_cast<std::uint32_t>(a.lane[l] * b.lane[l]));
    return acc;
  }
#endif
  static void convert(const std::uint8_t* src, AValue* dst, std::size_t n, bool signed_input) {
    for (std::size_t i = 0; i < n; ++i) dst[i] = signed_input ? static_cast<std::int8_t>(src[i]) : src[i];
  }
  static void store(Acc acc, const Int8OutputStage& s, std::size_t column, std::uint8_t* out, std::size_t count) {
    store_bytes(requantize(acc, s, column), out, count);
  }
  /// The lanes' outputs, one in each lane: the scalar stage a lane at a time.
  static Acc requantize(Acc acc, const Int8OutputStage& s, std::size_t column) {
    std::int32_t lane[lanes];
    store_sums(lane, acc);
    for (std::size_t j = 0; j < lanes; ++j) lane[j] = s.scalar(lane[j], column + j);
    return load(lane);
  }
  /// Two vectors of columns in order: a the first `lanes`.
  static constexpr std::size_t pair_column(std::size_t j) { return j; }
  static void store_pair(Acc a, Acc b, const Int8OutputStage& s, std::uint8_t* out, std::size_t count) {
    store(a, s, 0, out, std::min(count, lanes));
    if (count > lanes) store(b, s, lanes, out + lanes, count - lanes);
  }
  /// Stores the low byte of the first `count` lanes.
  static void store_bytes(Acc values, std::uint8_t* out, std::size_t count) {
    std::int32_t lane[lanes];
    store_sums(lane, values);
    for (std::size_t j = 0; j < count; ++j) out[j] = static_cast<std::uint8_t>(lane[j]);
  }
};

#endif

#if !(XSIMD_WITH_AVX512BW && defined(__AVX512VNNI__))
/// Elsewhere depthwise layers take a tap at a time, with Int8Dot's lane-wise operations.
struct Int8DepthwiseQuads {
  static constexpr bool available = false;
};
#endif

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
