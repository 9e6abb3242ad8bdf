// SPDX-License-Identifier: Apache-2.0
// int8 GEMM for NeonBackend's int8 layers (decision 0014): weights packed once with each column's
// output stage, activation rows packed per tile, an MR x NR register tile of integer dot products.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/backends/neon/kernel_base.hpp"
#include "kiln/backends/neon/simd/int8_dot.hpp"
#include "kiln/backends/quantized_layer.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// The register tile: int8_mr rows by int8_nr columns (two accumulator vectors), as for Float32.
inline constexpr std::size_t int8_nr = 2 * Int8Dot::lanes;
inline constexpr std::size_t int8_mr = Int8Dot::lanes >= 16 ? 14 : 6;

/// A run of bytes of a row of A: `length` bytes at base + offset, or padding (offset < 0), which
/// reads the input's zero point.
struct Int8Run {
  std::ptrdiff_t offset;
  std::size_t length;
};

/// The rows of A an int8 GEMM reads, as bytes: row m is runs[first[m]] to runs[first[m + 1]] one
/// after another; with no runs, row m at base + m * lda.
struct Int8Rows {
  const std::uint8_t* base;
  std::size_t lda = 0;
  const Int8Run* runs = nullptr;
  const std::size_t* first = nullptr;
};

/// A convolution's windows as runs: window_offsets' `taps` offsets a pixel (-1 for padding) of
/// `channels` bytes each, taps next to each other in memory (a kernel row, with one group) or both
/// padding merged into one run.
struct Int8Windows {
  std::vector<Int8Run> runs;
  std::vector<std::size_t> first;

  Int8Windows() = default;
  Int8Windows(std::span<const std::ptrdiff_t> offsets, std::size_t taps, std::size_t channels) {
    const std::size_t pixels = offsets.size() / taps;
    first.reserve(pixels + 1);
    for (std::size_t m = 0; m < pixels; ++m) {
      first.push_back(runs.size());
      for (std::size_t t = 0; t < taps; ++t) {
        const std::ptrdiff_t offset = offsets[m * taps + t];
        Int8Run* last = runs.size() > first.back() ? &runs.back() : nullptr;
        const bool joins =
            last != nullptr && (last->offset < 0 ? offset < 0 : offset == last->offset + std::ptrdiff_t(last->length));
        if (joins)
          last->length += channels;
        else
          runs.push_back({offset < 0 ? -1 : offset, channels});
      }
    }
    first.push_back(runs.size());
  }
  Int8Rows rows(const std::uint8_t* base) const { return {base, 0, runs.data(), first.data()}; }
};

/// Each output column's stage as Int8OutputStage reads it, made at load: the multiplier and right
/// shift of its channel, the layer's clamp and zero point. Columns never set hold a multiplier of 0.
class Int8OutputStages {
 public:
  Int8OutputStages() = default;
  Int8OutputStages(const quantized::OutputStage& stage, std::size_t columns)
      : Int8OutputStages(stage.lo(), stage.hi(), stage.zero_point(), columns) {}
  /// Outputs in [lo, hi] with `zero_point`.
  Int8OutputStages(std::int32_t lo, std::int32_t hi, std::int32_t zero_point, std::size_t columns)
      : multiplier_(columns, 0),
        right_shift_(columns, high_halves_from),
        high_rounding_(columns, 1),
        high_shift_(columns, 1),
        product_bias_(columns, 0),
        lo_(std::int64_t{lo} - zero_point),
        hi_(std::int64_t{hi} - zero_point),
        zero_point_(zero_point) {}

  void set(std::size_t column, const Requantization& r) {
    const std::int32_t right_shift = 31 - r.shift;
    multiplier_[column] = r.multiplier;
    right_shift_[column] = right_shift;
    product_bias_[column] = static_cast<std::int32_t>(r.product_bias());
    high_halves_ = high_halves_ && right_shift >= high_halves_from && !r.round_twice;
    two_roundings_ = two_roundings_ && right_shift >= 32 && r.round_twice;
    if (r.round_twice && right_shift >= 32) {  // Int8OutputStage::two_roundings' divisor, 2^(right_shift - 31)
      high_rounding_[column] = static_cast<std::int32_t>((std::int64_t{1} << (right_shift - 31)) - 1);
      high_shift_[column] = right_shift - 31;
    } else if (right_shift >= high_halves_from) {
      high_rounding_[column] = std::int32_t{1} << (right_shift - high_halves_from);
      high_shift_[column] = right_shift - 32;
    }
  }
  /// The stage of the columns from `first` on.
  Int8OutputStage from(std::size_t first) const {
    return {multiplier_.data() + first,
            right_shift_.data() + first,
            high_rounding_.data() + first,
            high_shift_.data() + first,
            product_bias_.data() + first,
            high_halves_,
            two_roundings_,
            lo_,
            hi_,
            zero_point_};
  }

 private:
  static constexpr std::int32_t high_halves_from = 33;
  std::vector<std::int32_t> multiplier_, right_shift_, high_rounding_, high_shift_, product_bias_;
  bool high_halves_ = true, two_roundings_ = true;
  std::int64_t lo_ = 0, hi_ = 0;
  std::int32_t zero_point_ = 0;
};

/// The B operand of an int8 layer, packed at load for Int8Dot: for every group, panels of int8_nr
/// columns, each a run of steps of int8_nr x depth weights (K rounded up to whole steps, zeros
/// past K and past the last column); and per column the bias, with the input zero point's share
/// folded in, and the output stage's multiplier and shift. A panel of more than Int8Dot::lanes
/// columns, which Int8Dot::store_pair stores, holds them in its pair_column order.
class PackedInt8Weights {
 public:
  using AValue = Int8Dot::AValue;
  using BValue = Int8Dot::BValue;
  static constexpr std::size_t depth = Int8Dot::depth;

  PackedInt8Weights() = default;
  /// weights[(g * n + j) * k + p] is B[p][j] of group g, whose output channel is g * n + j (OHWI
  /// convolution weights and [N, K] fully-connected weights read this way); bias may be null.
  PackedInt8Weights(const std::int8_t* weights, const std::int32_t* bias, std::size_t groups, std::size_t n,
                    std::size_t k, const quantized::OutputStage& stage, DataType input_type,
                    std::int32_t input_zero_point)
      : groups_(groups),
        n_(n),
        k_(k),
        steps_((k + depth - 1) / depth),
        panels_((n + int8_nr - 1) / int8_nr),
        signed_input_(input_type == DataType::QAsymmS8),
        padding_value_(static_cast<AValue>(input_zero_point + Int8Dot::offset(signed_input_))),
        data_(groups * panels_ * steps_ * int8_nr * depth, BValue{0}),
        bias_(groups * panels_ * int8_nr, 0),
        stages_(stage, groups * panels_ * int8_nr) {
    std::array<std::size_t, int8_nr> pair_slot{};
    for (std::size_t slot = 0; slot < int8_nr; ++slot) pair_slot[Int8Dot::pair_column(slot)] = slot;
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t j = 0; j < n; ++j) {
        const bool paired = n - j / int8_nr * int8_nr > Int8Dot::lanes;
        const std::size_t channel = g * n + j, panel = g * panels_ + j / int8_nr;
        const std::size_t column = paired ? pair_slot[j % int8_nr] : j % int8_nr;
        const std::int8_t* w = weights + channel * k;
        BValue* dst = data_.data() + panel * steps_ * int8_nr * depth + column * depth;
        // A step's depth weights at a time, and the sum apart, where it vectorizes: a byte at a
        // time, packing was a third of the time a quantized MobileNet-v2 took to make its workloads.
        const std::size_t whole_steps = k / depth;
        for (std::size_t s = 0; s < whole_steps; ++s)
          for (std::size_t d = 0; d < depth; ++d) dst[s * int8_nr * depth + d] = w[s * depth + d];
        for (std::size_t p = whole_steps * depth; p < k; ++p) dst[whole_steps * int8_nr * depth + p % depth] = w[p];
        std::int64_t sum = 0;
        for (std::size_t p = 0; p < k; ++p) sum += w[p];
        // The kernel sums (x + offset) w; the layer wants (x - zero point) w. In int64, then
        // wrapped to int32 as the kernel's sums are: decision 0014 bounds the result.
        const std::int64_t corrected = (bias ? bias[channel] : 0) - std::int64_t{padding_value_} * sum;
        bias_[panel * int8_nr + column] = static_cast<std::int32_t>(corrected);
        stages_.set(panel * int8_nr + column, stage.multiplier(channel));
      }
  }

  std::size_t groups() const noexcept { return groups_; }
  std::size_t n() const noexcept { return n_; }
  std::size_t k() const noexcept { return k_; }
  std::size_t panels() const noexcept { return panels_; }
  std::size_t steps() const noexcept { return steps_; }
  bool signed_input() const noexcept { return signed_input_; }
  /// What a padding tap reads: the input's zero point as a packed activation.
  AValue padding_value() const noexcept { return padding_value_; }
  const BValue* panel(std::size_t group, std::size_t p) const {
    return data_.data() + (group * panels_ + p) * steps_ * int8_nr * depth;
  }
  const std::int32_t* bias(std::size_t group, std::size_t p) const {
    return bias_.data() + (group * panels_ + p) * int8_nr;
  }
  Int8OutputStage stage(std::size_t group, std::size_t p) const {
    return stages_.from((group * panels_ + p) * int8_nr);
  }
  /// The scratch one thread's packed rows of A take, in whole cache lines.
  std::size_t scratch_bytes_per_thread() const noexcept {
    return (int8_mr * steps_ * depth * sizeof(AValue) + 63) / 64 * 64;
  }

 private:
  std::size_t groups_ = 0, n_ = 0, k_ = 0, steps_ = 0, panels_ = 0;
  bool signed_input_ = false;
  AValue padding_value_ = 0;
  std::vector<BValue> data_;
  std::vector<std::int32_t> bias_;
  Int8OutputStages stages_;
};

namespace detail {

/// An Int8Dot with store_pairs: store_pair over rows for a stage with high halves or two
/// roundings, its vectors loaded once.
template <class Dot>
concept StoresRowsOfPairs = requires(const std::int32_t* sums, const Int8OutputStage& s, std::uint8_t* out,
                                     std::size_t n) {
  Dot::template store_pairs<typename Dot::HighHalves>(sums, n, s, out, n, n);
  Dot::template store_pairs<typename Dot::TwoRoundings>(sums, n, s, out, n, n);
};

/// The output stage of a tile's Rows x Vectors accumulator vectors, from memory (sums: a row's
/// vectors one after another) to rows of C. Out of line and through memory on purpose: inlined
/// after the products' loop, the stage's temporaries and constants made GCC 12 spill accumulators
/// inside that loop, and the GEMM three times slower.
template <std::size_t Rows, std::size_t Vectors, class Dot = Int8Dot>  // Dot: dependent, for StoresRowsOfPairs
[[gnu::noinline]] void int8_tile_store(const std::int32_t* sums, const Int8OutputStage& stage, std::uint8_t* c,
                                       std::size_t ldc, std::size_t columns) {
  constexpr std::size_t lanes = Dot::lanes;
  // Copied: the byte stores could alias the caller's, which would be read again after each.
  const Int8OutputStage own_stage = stage;
  if constexpr (Vectors == 2 && StoresRowsOfPairs<Dot>) {
    if (own_stage.high_halves) {
      Dot::template store_pairs<typename Dot::HighHalves>(sums, Rows, own_stage, c, ldc, columns);
      return;
    }
    if (own_stage.two_roundings) {
      Dot::template store_pairs<typename Dot::TwoRoundings>(sums, Rows, own_stage, c, ldc, columns);
      return;
    }
  }
  for (std::size_t r = 0; r < Rows; ++r, sums += Vectors * lanes)
    if constexpr (Vectors == 2)
      Dot::store_pair(Dot::load(sums), Dot::load(sums + lanes), own_stage, c + r * ldc, columns);
    else
      Dot::store(Dot::load(sums), own_stage, 0, c + r * ldc, columns);
}

/// C[rows x columns] = the output stage of bias + sum over steps of A's rows (packed, lda values
/// apart) times B's panel, for the first Vectors accumulator vectors of the panel.
template <std::size_t Rows, std::size_t Vectors>
void int8_tile(const Int8Dot::AValue* a, std::size_t lda, std::size_t steps, const Int8Dot::BValue* b,
               const std::int32_t* bias, const Int8OutputStage& stage, std::uint8_t* c, std::size_t ldc,
               std::size_t columns) {
  constexpr std::size_t lanes = Int8Dot::lanes, depth = Int8Dot::depth;
  typename Int8Dot::Acc acc[Rows][Vectors];
#pragma GCC unroll 16
  for (std::size_t r = 0; r < Rows; ++r)
#pragma GCC unroll 2
    for (std::size_t v = 0; v < Vectors; ++v) acc[r][v] = Int8Dot::load(bias + v * lanes);
  for (std::size_t s = 0; s < steps; ++s, b += int8_nr * depth) {
    typename Int8Dot::BVec bv[Vectors];
#pragma GCC unroll 2
    for (std::size_t v = 0; v < Vectors; ++v) bv[v] = Int8Dot::load_b(b + v * lanes * depth);
#pragma GCC unroll 16
    for (std::size_t r = 0; r < Rows; ++r) {
      const auto ar = Int8Dot::broadcast(a + r * lda + s * depth);
#pragma GCC unroll 2
      for (std::size_t v = 0; v < Vectors; ++v) acc[r][v] = Int8Dot::madd(acc[r][v], ar, bv[v]);
    }
  }
  alignas(64) std::int32_t sums[Rows * Vectors * lanes];
#pragma GCC unroll 16
  for (std::size_t r = 0; r < Rows; ++r)
#pragma GCC unroll 2
    for (std::size_t v = 0; v < Vectors; ++v) Int8Dot::store_sums(sums + (r * Vectors + v) * lanes, acc[r][v]);
  int8_tile_store<Rows, Vectors>(sums, stage, c, ldc, columns);
}

template <std::size_t Vectors, std::size_t... Rows>
constexpr auto int8_tile_kernels(std::index_sequence<Rows...>) {
  using Fn = void (*)(const Int8Dot::AValue*, std::size_t, std::size_t, const Int8Dot::BValue*, const std::int32_t*,
                      const Int8OutputStage&, std::uint8_t*, std::size_t, std::size_t);
  return std::array<Fn, sizeof...(Rows)>{&int8_tile<Rows + 1, Vectors>...};
}

/// kernels[vectors - 1][rows - 1], as for Float32.
inline constexpr std::array int8_tile_kernel_table{int8_tile_kernels<1>(std::make_index_sequence<int8_mr>{}),
                                                   int8_tile_kernels<2>(std::make_index_sequence<int8_mr>{})};

}  // namespace detail

/// Packs row m of A (from byte `column` of each run on) as the kernel reads it: shifted to the
/// instruction's domain, padding holding the zero point, and K's last step filled with zeros
/// (against zero weights).
inline void pack_row(const Int8Rows& a, std::size_t m, std::size_t column, const PackedInt8Weights& b,
                     Int8Dot::AValue* dst, std::size_t lda) {
  Int8Dot::AValue* const end = dst + lda;
  if (a.runs == nullptr) {
    Int8Dot::convert(a.base + m * a.lda + column, dst, b.k(), b.signed_input());
    dst += b.k();
  } else {
    for (std::size_t r = a.first[m]; r < a.first[m + 1]; ++r) {
      const Int8Run run = a.runs[r];
      if (run.offset < 0)
        std::fill_n(dst, run.length, b.padding_value());
      else
        Int8Dot::convert(a.base + run.offset + column, dst, run.length, b.signed_input());
      dst += run.length;
    }
  }
  while (dst < end) *dst++ = 0;
}

/// C[m x n] = the int8 layer of A's rows and B, for every group of packed weights, with row stride
/// ldc (bytes), split over the context's threads: group g reads A from byte g * a_group_columns
/// of each row on and writes C from column g * n on. `scratch` holds
/// b.scratch_bytes_per_thread() for each of the context's threads. A task packs one tile of A's
/// rows (gathering taps, shifting to the instruction's domain, padding with the zero point) and
/// multiplies it by a block of panels: all of them unless row tiles are too few to keep every
/// thread busy.
inline void int8_gemm(Context& context, const Int8Rows& a, std::size_t m, const PackedInt8Weights& b, std::uint8_t* c,
                      std::size_t ldc, std::span<std::byte> scratch, std::size_t a_group_columns = 0) {
  static constexpr auto& kernels = detail::int8_tile_kernel_table;
  using AValue = Int8Dot::AValue;
  const std::size_t lda = b.steps() * Int8Dot::depth;
  assert(scratch.size() >= context.threads() * b.scratch_bytes_per_thread());
  const std::size_t row_tiles = (m + int8_mr - 1) / int8_mr, panels = b.panels();
  const std::size_t wanted = 4 * std::size_t{context.threads()}, spread = b.groups() * row_tiles;
  const std::size_t panel_block = spread >= wanted ? panels : std::max<std::size_t>(1, panels * spread / wanted);
  const std::size_t panel_blocks = (panels + panel_block - 1) / panel_block;
  const std::size_t tasks = spread * panel_blocks, task_cost = int8_mr * panel_block * int8_nr * b.k() / 4;
  // Rows that are already what the kernel reads (bytes the instruction takes unshifted: unsigned
  // ones for vpdpbusd, signed ones for sdot; one tap, K whole steps) are read in place.
  const bool direct =
      sizeof(AValue) == 1 && Int8Dot::offset(b.signed_input()) == 0 && a.runs == nullptr && b.k() % Int8Dot::depth == 0;
  context.parallel_for(
      tasks,
      [&](std::size_t task, unsigned thread) {
        const std::size_t group = task / (row_tiles * panel_blocks), row_tile = task / panel_blocks % row_tiles,
                          block = task % panel_blocks;
        const std::size_t first_row = row_tile * int8_mr, rows = std::min(int8_mr, m - first_row);
        const AValue* tile = nullptr;
        std::size_t tile_stride = lda;
        if (direct) {
          tile = reinterpret_cast<const AValue*>(a.base + first_row * a.lda + group * a_group_columns);
          tile_stride = a.lda;
        } else {
          auto* packed = reinterpret_cast<AValue*>(scratch.data() + thread * b.scratch_bytes_per_thread());
          for (std::size_t r = 0; r < rows; ++r)
            pack_row(a, first_row + r, group * a_group_columns, b, packed + r * lda, lda);
          tile = packed;
        }
        for (std::size_t p = block * panel_block; p < std::min(panels, (block + 1) * panel_block); ++p) {
          const std::size_t columns = std::min(int8_nr, b.n() - p * int8_nr);
          kernels[columns > Int8Dot::lanes ? 1 : 0][rows - 1](
              tile, tile_stride, b.steps(), b.panel(group, p), b.bias(group, p), b.stage(group, p),
              c + first_row * ldc + group * b.n() + p * int8_nr, ldc, columns);
        }
      },
      task_cost);
}

/// Base of Neon's int8 layers on the int8 GEMM (Derived: Convolution2d, FullyConnected): the layer
/// must be one decision 0014 defines, with constant weights and bias, which Derived's constructor
/// packs with the output stage made here.
template <class Op, class Derived>
class Int8GemmKernel {
 public:
  static constexpr std::size_t inputs_read_at_run = 1;  // the constants after it are packed at load
  static Status is_supported(const WorkloadInfo<Op>& info) {
    if (auto s = quantized::check_layer(info); !s) return s;
    return require_constants(info, inputs_read_at_run);
  }
  static Expected<Derived> create(const WorkloadInfo<Op>& info, Context&) {
    auto stage = quantized::OutputStage::make(info);
    if (!stage) return stage.status();
    return Derived(info, *stage);
  }
  ScratchSize scratch(const Context& context) const {
    return {context.threads() * weights_.scratch_bytes_per_thread(), 64};
  }

 protected:
  /// Packs weights [groups x n output channels, k] and the bias, inputs 1 and 2.
  Int8GemmKernel(const WorkloadInfo<Op>& info, const quantized::OutputStage& stage, std::size_t groups, std::size_t n,
                 std::size_t k)
      : weights_(static_cast<const std::int8_t*>(info.constants[1]),
                 info.inputs.size() > 2 ? static_cast<const std::int32_t*>(info.constants[2]) : nullptr, groups, n, k,
                 stage, info.inputs[0].type, info.inputs[0].quantization.offset) {}

  PackedInt8Weights weights_;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
