// SPDX-License-Identifier: Apache-2.0
// GEMM for NeonBackend, in Float32 (and Float16 where the target has half-precision arithmetic):
// weights packed once into column panels, an MR x NR register-tile micro-kernel.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "kiln/backends/neon/simd/half_arithmetic.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// The register tile: gemm_mr rows of C by gemm_nr columns (two vectors) held in registers. Rows
/// are broadcast from A, the two B vectors are loaded once per k and reused gemm_mr times.
/// 14 x 32 uses 28 of AVX-512's 32 registers for accumulators; 6 x 2 vectors fits 16-register SSE/AVX2
/// (and aarch64). 32-bit Arm NEON has no fused multiply-add by a lane, so each row's broadcast takes
/// a register too: GCC 12 spills an accumulator of a 6 x 2 tile in its loop, never one of 4 x 2.
inline constexpr std::size_t gemm_nr = 2 * lanes;
inline constexpr std::size_t gemm_mr = lanes >= 16 ? 14 : (XSIMD_WITH_NEON && !XSIMD_WITH_NEON64) ? 4 : 6;

/// The vector a GEMM on elements E computes with: Vec for float, HalfVec (8 halves) for Float16
/// where the target has half-precision arithmetic. The tile is gemm_mr rows by two such vectors.
template <class E>
struct GemmVector {
  static_assert(sizeof(E) == 0, "NeonBackend's GEMM computes in float, or in Float16 with half-precision arithmetic");
};
template <>
struct GemmVector<float> {
  using type = Vec;
};
#if KILN_NEON_HALF_ARITHMETIC
template <>
struct GemmVector<Half> {
  using type = HalfVec;
};
#endif
template <class E>
using GemmVec = typename GemmVector<E>::type;
/// Columns in a panel of elements E: two vectors.
template <class E>
inline constexpr std::size_t panel_width = 2 * GemmVec<E>::size;

/// The B operand of C = A B (+ bias) in elements E, packed at load: for every group, panels of
/// panel_width<E> columns, each K x panel_width<E> contiguous, zero-padded past the last column;
/// the bias padded the same way.
///
/// \code
/// PackedWeights w(weights, bias, groups, n_per_group, k);  // once, at load
/// gemm(context, DenseRows{a, lda}, m, w, 0, c, ldc, {}, {});   // every inference
/// \endcode
template <class E>
class BasicPackedWeights {
  static constexpr std::size_t nr = panel_width<E>;

 public:
  BasicPackedWeights() = default;
  /// Room for `groups` groups of n columns of k values, to be filled with set_columns; the
  /// padding past column n, which the micro-kernel multiplies but never stores, and the bias are
  /// zero.
  BasicPackedWeights(std::size_t groups, std::size_t n, std::size_t k)
      : groups_(groups),
        n_(n),
        k_(k),
        panels_((n + nr - 1) / nr),
        data_(groups * panels_ * k * 2),
        bias_(groups * panels_ * 2, GemmVec<E>(0.0f)) {
    if (n % nr == 0) return;
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t p = 0; p < k; ++p) {
        E* row = elements(data_) + ((g * panels_ + panels_ - 1) * k + p) * nr;
        std::fill(row + n % nr, row + nr, E{});
      }
  }
  /// weights[(g * n + j) * k + p] is B[p][j] of group g (OHWI convolution weights and [N, K]
  /// fully-connected weights both read this way); bias may be null.
  BasicPackedWeights(const E* weights, const E* bias, std::size_t groups, std::size_t n, std::size_t k)
      : BasicPackedWeights(groups, n, k) {
    for (std::size_t g = 0; g < groups; ++g)
      set_columns(g, 0, n, weights + g * n * k, k, bias ? bias + g * n : nullptr);
  }

  /// Columns [first, first + count) of group g's B, column first + j's k values at
  /// values[j * stride + p], and their biases (zero if bias is null).
  void set_columns(std::size_t group, std::size_t first, std::size_t count, const E* values, std::size_t stride,
                   const E* bias) {
    // A panel's rows are nr elements apart, so a column written whole touches k cache lines;
    // in blocks of rows the lines written stay in L1 while every column of the panel fills them.
    constexpr std::size_t rows_per_block = 64;
    for (std::size_t j = 0; j < count;) {
      const std::size_t panel = (first + j) / nr, offset = (first + j) % nr;
      const std::size_t columns = std::min(nr - offset, count - j);
      E* dst = elements(data_) + (group * panels_ + panel) * k_ * nr + offset;
      for (std::size_t p0 = 0; p0 < k_; p0 += rows_per_block) {
        const std::size_t rows = std::min(rows_per_block, k_ - p0);
        for (std::size_t c = 0; c < columns; ++c) {
          const E* column = values + (j + c) * stride + p0;
          for (std::size_t p = 0; p < rows; ++p) dst[(p0 + p) * nr + c] = column[p];
        }
      }
      for (std::size_t c = 0; c < columns; ++c)
        elements(bias_)[(group * panels_ + panel) * nr + offset + c] = bias ? bias[j + c] : E{};
      j += columns;
    }
  }

  std::size_t groups() const noexcept { return groups_; }
  std::size_t n() const noexcept { return n_; }
  std::size_t k() const noexcept { return k_; }
  std::size_t panels() const noexcept { return panels_; }
  const E* panel(std::size_t group, std::size_t p) const { return elements(data_) + (group * panels_ + p) * k_ * nr; }
  const E* bias(std::size_t group, std::size_t p) const { return elements(bias_) + (group * panels_ + p) * nr; }

 private:
  std::size_t groups_ = 0, n_ = 0, k_ = 0, panels_ = 0;
  /// Leaves the vectors uninitialised: every packed value is written once, and zeroing tens of
  /// megabytes first was a second pass over them at load.
  template <class T>
  struct uninitialized_allocator : std::allocator<T> {
    template <class U>
    struct rebind {
      using other = uninitialized_allocator<U>;
    };
    template <class U>
    void construct(U* p) noexcept {
      ::new (static_cast<void*>(p)) U;
    }
  };
  using Storage = std::vector<GemmVec<E>, uninitialized_allocator<GemmVec<E>>>;
  // Stored as vectors (two per panel row) for their alignment; xsimd's aligned_allocator would
  // throw, which firmware builds with -fno-exceptions cannot compile.
  static E* elements(Storage& v) { return reinterpret_cast<E*>(v.data()); }
  static const E* elements(const Storage& v) { return reinterpret_cast<const E*>(v.data()); }
  Storage data_, bias_;
};
using PackedWeights = BasicPackedWeights<float>;

/// A rows of a plain row-major matrix of elements E: row m starts at a + m * lda; one tap of K values.
template <class E>
struct BasicDenseRows {
  using Element = E;
  const E* a;
  std::size_t lda;
  std::size_t taps() const noexcept { return 1; }
  const E* row(std::size_t m, std::size_t) const noexcept { return a + m * lda; }
  /// The same rows from column `first` on.
  BasicDenseRows from_column(std::size_t first) const noexcept { return {a + first, lda}; }
};
using DenseRows = BasicDenseRows<float>;

/// What the micro-kernel does to a tile before storing it: clamp in registers (ReLU, ReLU6 and the
/// other bounded ReLUs), and any other fused activation on the stored rows.
struct Epilogue {
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
  std::optional<ops::Activation::Params> activation;

  static Epilogue from(const std::optional<ops::Activation::Params>& fused) {
    using A = ops::ActivationFunction;
    Epilogue e;
    if (fused && fused->function == A::ReLU)
      e.min = 0.0f;
    else if (fused && fused->function == A::BoundedReLU)
      e.min = fused->b, e.max = fused->a;
    else
      e.activation = fused;
    return e;
  }
};

namespace detail {

inline constexpr std::size_t cache_line = 64;
/// How many k steps ahead gemm_tile asks for the panel's lines. A panel of a few hundred k is
/// larger than L1 and every row tile streams it from L2 (or memory, the first time); the hardware
/// prefetcher alone left AVX-512's tile waiting: 150-170 GFLOP/s of a 250 peak on bench_neon's
/// shapes, 170-200 with the lines asked for 16-24 steps (2-3 KiB) ahead.
inline constexpr std::size_t prefetch_steps = 24;

/// Asks for the cache lines of the `bytes` bytes that start `distance` bytes after p. The address
/// is computed as an integer: it may lie past the end of p's array, where a prefetch is harmless
/// but pointer arithmetic would not be.
[[gnu::always_inline]] inline void prefetch_ahead(const void* p, std::size_t distance, std::size_t bytes) {
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(p) + distance;
#pragma GCC unroll 2
  for (std::size_t line = 0; line < bytes; line += cache_line)
    __builtin_prefetch(reinterpret_cast<const void*>(first + line));
}

/// C[rows x columns] = bias + sum over taps t and channels p of A(row, t)[p] * B[t * channels + p],
/// for the first Vectors vectors of a panel (one where the panel's columns fit in one: half the
/// multiply-adds of a full tile, for layers with 16 or fewer output channels left over).
/// Each C element is one chain of fused multiply-adds in k order, whatever tile or thread computes
/// it, in the source's element type (Float16 accumulates in Float16, as Arm NN's Neon backend does).
template <std::size_t Rows, std::size_t Vectors, class Source, class E = typename Source::Element>
void gemm_tile(const Source& a, std::size_t first_row, std::size_t channels, const E* b, const E* bias, E* c,
               std::size_t ldc, std::size_t columns, const Epilogue& epilogue) {
  using V = GemmVec<E>;
  constexpr std::size_t width = V::size, nr = panel_width<E>;
  static_assert(Vectors >= 1 && Vectors * width <= nr, "a tile spans one or two vectors of a panel");
  V acc[Rows][Vectors];
#pragma GCC unroll 16
  for (std::size_t r = 0; r < Rows; ++r)
#pragma GCC unroll 2
    for (std::size_t v = 0; v < Vectors; ++v) acc[r][v] = V::load_aligned(bias + v * width);
  for (std::size_t t = 0; t < a.taps(); ++t) {
    const E* rows[Rows];
#pragma GCC unroll 16
    for (std::size_t r = 0; r < Rows; ++r) rows[r] = a.row(first_row + r, t);
    for (std::size_t p = 0; p < channels; ++p, b += nr) {
      prefetch_ahead(b, prefetch_steps * nr * sizeof(E), nr * sizeof(E));
      V bv[Vectors];
#pragma GCC unroll 2
      for (std::size_t v = 0; v < Vectors; ++v) bv[v] = V::load_aligned(b + v * width);
#pragma GCC unroll 16
      for (std::size_t r = 0; r < Rows; ++r) {
        const V ar = broadcast_element(rows[r] + p);
#pragma GCC unroll 2
        for (std::size_t v = 0; v < Vectors; ++v) acc[r][v] = multiply_add(ar, bv[v], acc[r][v]);
      }
    }
  }
  const V lo(epilogue.min), hi(epilogue.max);
#pragma GCC unroll 16
  for (std::size_t r = 0; r < Rows; ++r)
#pragma GCC unroll 2
    for (std::size_t v = 0; v < Vectors; ++v) {
      const V clamped = clamp_lanes(acc[r][v], lo, hi);
      E* out = c + r * ldc + v * width;
      if (columns >= (v + 1) * width)
        clamped.store_unaligned(out);
      else if (columns > v * width)
        store_tail(out, clamped, columns - v * width);
    }
  // One switch on the function per tile; the rows are still in L1.
  if (epilogue.activation)
    visit_activation(*epilogue.activation, [&](auto f) {
      for (std::size_t r = 0; r < Rows; ++r) map(c + r * ldc, c + r * ldc, columns, f);
    });
}

/// The tile kernels for 1..gemm_mr rows, spanning Vectors vectors of a panel.
template <class Source, std::size_t Vectors, std::size_t... Rows>
constexpr auto tile_kernels(std::index_sequence<Rows...>) {
  using E = typename Source::Element;
  using Fn = void (*)(const Source&, std::size_t, std::size_t, const E*, const E*, E*, std::size_t, std::size_t,
                      const Epilogue&);
  return std::array<Fn, sizeof...(Rows)>{&gemm_tile<Rows + 1, Vectors, Source>...};
}

/// kernels[vectors - 1][rows - 1]: a tile as wide as the panel's columns need, as tall as the rows left.
template <class Source>
inline constexpr std::array tile_kernel_table{tile_kernels<Source, 1>(std::make_index_sequence<gemm_mr>{}),
                                              tile_kernels<Source, 2>(std::make_index_sequence<gemm_mr>{})};

}  // namespace detail

/// m rows as tiles of at most gemm_mr rows, as few as that allows and as even as can be: a
/// remainder of one row would be a tile of two multiply-add chains, waiting on their latency
/// (37 rows at gemm_mr 6: five tiles of 5 and two of 6, not six of 6 and one of 1).
struct RowTiles {
  std::size_t count, base, extra;  // tiles, rows of the smaller ones, tiles with one row more
  static constexpr RowTiles of(std::size_t m) {
    const std::size_t count = (m + gemm_mr - 1) / gemm_mr;
    return count == 0 ? RowTiles{0, 0, 0} : RowTiles{count, m / count, m % count};
  }
  constexpr std::size_t first_row(std::size_t tile) const { return tile * base + std::min(tile, extra); }
  constexpr std::size_t rows(std::size_t tile) const { return base + (tile < extra ? 1 : 0); }
};

/// C[m x n] = A[m x K] B for one group of packed weights, on the calling thread: for kernels that
/// split their work over threads themselves and multiply a block that stays in cache. Panels
/// outside, so that each passes through L1 once while A's rows stay in L2.
inline void gemm_on_this_thread(const DenseRows& a, std::size_t m, const PackedWeights& b, std::size_t group, float* c,
                                std::size_t ldc, const Epilogue& epilogue) {
  static constexpr auto& kernels = detail::tile_kernel_table<DenseRows>;
  const RowTiles tiles = RowTiles::of(m);
  for (std::size_t p = 0; p < b.panels(); ++p) {
    const std::size_t columns = std::min(gemm_nr, b.n() - p * gemm_nr);
    for (std::size_t t = 0; t < tiles.count; ++t) {
      const std::size_t first_row = tiles.first_row(t);
      kernels[columns > lanes ? 1 : 0][tiles.rows(t) - 1](a, first_row, b.k(), b.panel(group, p), b.bias(group, p),
                                                          c + first_row * ldc + p * gemm_nr, ldc, columns, epilogue);
    }
  }
}

/// c[n] = x[K] B + bias for one row x and group 0 of packed weights, on the calling thread: four
/// panels at a time, so that eight chains of multiply-adds hide their latency where a one-row tile
/// has two (a recurrent layer's step, a GEMV, waits on them). The same arithmetic as gemm_tile:
/// each element the bias, then one fused multiply-add per k in k order.
inline void gemv_on_this_thread(const float* x, const PackedWeights& b, float* c) {
  constexpr std::size_t together = 4;
  const std::size_t k = b.k(), n = b.n();
  for (std::size_t first = 0; first < b.panels(); first += together) {
    const std::size_t panels = std::min(together, b.panels() - first);
    Vec acc[together][2];
    const float* w[together];
    for (std::size_t q = 0; q < together; ++q) {
      const std::size_t p = first + std::min(q, panels - 1);  // a short group repeats its last panel
      w[q] = b.panel(0, p);
      acc[q][0] = Vec::load_aligned(b.bias(0, p));
      acc[q][1] = Vec::load_aligned(b.bias(0, p) + lanes);
    }
    for (std::size_t i = 0; i < k; ++i) {
      const Vec xi(x[i]);
#pragma GCC unroll 4
      for (std::size_t q = 0; q < together; ++q) {
        acc[q][0] = multiply_add(xi, Vec::load_aligned(w[q] + i * gemm_nr), acc[q][0]);
        acc[q][1] = multiply_add(xi, Vec::load_aligned(w[q] + i * gemm_nr + lanes), acc[q][1]);
      }
    }
    for (std::size_t q = 0; q < panels; ++q) {
      const std::size_t column = (first + q) * gemm_nr, columns = std::min(gemm_nr, n - column);
      store_upto(c + column, acc[q][0], std::min(lanes, columns));
      if (columns > lanes) store_upto(c + column + lanes, acc[q][1], columns - lanes);
    }
  }
}

/// Taps with fewer channels than this are gathered into a dense tile (up to gather_max_k values a row).
inline constexpr std::size_t min_tap_channels = 8, gather_max_k = 1024;

/// Whether gemm gathers the rows of a source with `taps` taps and `k` values a row into a dense tile.
constexpr bool gemm_gathers(std::size_t taps, std::size_t k) {
  return taps > 1 && k / taps < min_tap_channels && k <= gather_max_k;
}
/// The scratch gemm needs per thread for such a source of elements E: one gathered tile (whole
/// cache lines, so that threads never share one), or none.
template <class E = float>
constexpr std::size_t gemm_scratch_elements(std::size_t taps, std::size_t k) {
  constexpr std::size_t per_line = 64 / sizeof(E);
  return gemm_gathers(taps, k) ? (gemm_mr * k + per_line - 1) / per_line * per_line : 0;
}

/// C[m x n] = A[m x K] B (+ bias) for every group of packed weights, written with row stride ldc,
/// split over the context's threads: group g reads A from column g * a_group_columns on and writes
/// C from column g * n on. `scratch` holds gemm_scratch_elements<E>(a.taps(), K) elements for each
/// of the context's threads. Loop order keeps the smaller operand in cache: row tiles outside when A
/// is the larger (its tile stays in L1 while every panel passes), panels outside when B is (a
/// panel stays in L2 while every row tile passes). The groups share one task space, so that many
/// small groups keep every thread busy. A source whose taps hold fewer channels than
/// min_tap_channels (a first layer's RGB, say) is gathered into a dense tile first, so that the
/// kernel's inner loop is not a few steps long.
template <class Source, class E = typename Source::Element>
void gemm(Context& context, const Source& a, std::size_t m, const BasicPackedWeights<E>& b, E* c, std::size_t ldc,
          const Epilogue& epilogue, std::span<E> scratch, std::size_t a_group_columns = 0) {
  static constexpr auto& kernels = detail::tile_kernel_table<Source>;
  static constexpr auto& dense_kernels = detail::tile_kernel_table<BasicDenseRows<E>>;
  constexpr std::size_t width = GemmVec<E>::size, nr = panel_width<E>;
  const std::size_t k = b.k(), channels = k / a.taps();
  const bool gather = gemm_gathers(a.taps(), k);
  assert(!gather || scratch.size() >= context.threads() * gemm_scratch_elements<E>(a.taps(), k));
  const RowTiles tiles = RowTiles::of(m);
  const std::size_t row_tiles = tiles.count, panels = b.panels();
  const bool panels_outside = m < b.n();
  const std::size_t outer = panels_outside ? panels : row_tiles, inner = panels_outside ? row_tiles : panels;
  // Whole inner loops per task when the groups and the outer loop alone keep every thread busy.
  const std::size_t wanted = 4 * std::size_t{context.threads()}, spread = b.groups() * outer;
  const std::size_t inner_block = spread >= wanted ? inner : std::max<std::size_t>(1, inner * spread / wanted);
  const std::size_t inner_blocks = (inner + inner_block - 1) / inner_block;
  // Calls visit(group, first_row, rows, panel) for the tiles of one task, in its loop order.
  auto for_each_tile = [&](std::size_t task, auto&& visit) {
    const std::size_t group = task / (outer * inner_blocks), o = task / inner_blocks % outer,
                      block = task % inner_blocks;
    for (std::size_t i = block * inner_block; i < std::min(inner, (block + 1) * inner_block); ++i) {
      const std::size_t row_tile = panels_outside ? i : o, p = panels_outside ? o : i;
      visit(group, tiles.first_row(row_tile), tiles.rows(row_tile), p);
    }
  };
  auto output = [&](std::size_t group, std::size_t first_row, std::size_t p) {
    return c + first_row * ldc + group * b.n() + p * nr;
  };
  auto columns = [&](std::size_t p) { return std::min(nr, b.n() - p * nr); };
  auto vectors = [&](std::size_t p) { return columns(p) > width ? 2 : 1; };
  const std::size_t tasks = b.groups() * outer * inner_blocks, task_cost = gemm_mr * inner_block * nr * k;
  if (!gather) {
    context.parallel_for(
        tasks,
        [&](std::size_t task) {
          for_each_tile(task, [&](std::size_t group, std::size_t first_row, std::size_t rows, std::size_t p) {
            kernels[vectors(p) - 1][rows - 1](a.from_column(group * a_group_columns), first_row, channels,
                                              b.panel(group, p), b.bias(group, p), output(group, first_row, p), ldc,
                                              columns(p), epilogue);
          });
        },
        task_cost);
    return;
  }
  context.parallel_for(
      tasks,
      [&](std::size_t task, unsigned thread) {
        E* tile = scratch.data() + thread * gemm_scratch_elements<E>(a.taps(), k);
        std::size_t gathered = m, gathered_group = 0;  // the tile in `tile`: none yet
        for_each_tile(task, [&](std::size_t group, std::size_t first_row, std::size_t rows, std::size_t p) {
          if (gathered != first_row || gathered_group != group) {
            const Source rows_of_group = a.from_column(group * a_group_columns);
            for (std::size_t r = 0; r < rows; ++r)
              for (std::size_t t = 0; t < a.taps(); ++t) {
                const E* src = rows_of_group.row(first_row + r, t);
                E* dst = tile + r * k + t * channels;
                for (std::size_t ch = 0; ch < channels; ++ch) dst[ch] = src[ch];  // a few values: no memcpy call
              }
            gathered = first_row, gathered_group = group;
          }
          dense_kernels[vectors(p) - 1][rows - 1](BasicDenseRows<E>{tile, k}, 0, k, b.panel(group, p), b.bias(group, p),
                                                  output(group, first_row, p), ldc, columns(p), epilogue);
        });
      },
      task_cost);
}

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
