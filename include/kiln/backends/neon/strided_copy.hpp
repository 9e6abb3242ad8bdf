// SPDX-License-Identifier: Apache-2.0
// StridedCopy: the engine of Neon's data-movement kernels, planned at load, run over the threads.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Element strides per dimension; negative for a reversed StridedSlice.
using SignedStrides = std::array<std::int64_t, TensorShape::max_rank>;

/// Copies a box of elements between two strided layouts: Transpose, StridedSlice, Concat, Split and
/// Pad are each one or a few of these. The plan is made once at load: dimensions of size 1 are
/// dropped and neighbours that are contiguous on both sides merged, so most copies become runs of
/// `memcpy`; when the innermost destination dimension reads the source with a stride (a transpose),
/// the two dimensions are copied in square tiles so that both sides stay in cache.
class StridedCopy {
 public:
  StridedCopy() = default;

  /// `dims`: the box; `from`, `to`: element strides of the source and the destination per
  /// dimension; `element`: 1, 2 or 4 bytes (the sizes of kiln's data types).
  StridedCopy(std::span<const std::uint32_t> dims, const SignedStrides& from, const SignedStrides& to,
              std::size_t element)
      : element_(element) {
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == 0) {
        empty_ = true;
        return;
      }
      if (dims[d] == 1) continue;
      if (rank_ > 0 && from_[rank_ - 1] == from[d] * dims[d] && to_[rank_ - 1] == to[d] * dims[d]) {
        dims_[rank_ - 1] *= dims[d];  // contiguous with the previous one on both sides: one dimension
        from_[rank_ - 1] = from[d];
        to_[rank_ - 1] = to[d];
        continue;
      }
      dims_[rank_] = dims[d];
      from_[rank_] = from[d];
      to_[rank_] = to[d];
      ++rank_;
    }
    if (rank_ == 0) {
      run_ = 1;  // a single element
    } else if (from_[rank_ - 1] == 1 && to_[rank_ - 1] == 1) {
      run_ = dims_[--rank_];
    } else if (rank_ >= 2 && to_[rank_ - 1] == 1) {
      for (std::size_t d = 0; d + 1 < rank_; ++d)
        if (from_[d] == 1) tile_row_ = d;
      if (tile_row_ != no_tile) split_tile_rows();
    }
    // The walked dimensions: all but the inner run, or all but the one or two copied per step.
    const std::size_t last = rank_ == 0 ? 0 : rank_ - 1;
    for (std::size_t d = 0; d < rank_; ++d) {
      walked_[d] = !(run_ == 0 && d == last) && d != tile_row_;
      if (walked_[d]) outer_ *= dims_[d];
    }
    inner_ = run_ != 0 ? run_ : std::uint64_t{dims_[last]} * (tile_row_ != no_tile ? dims_[tile_row_] : 1);
  }

  /// Copies from `source` to `destination` (offsets, if any, already applied by the caller).
  void run(Context& context, const std::byte* source, std::byte* destination) const {
    if (empty_) return;
    // Tasks of at least ~16 KiB each: smaller ones cost more to hand out than to copy.
    const std::uint64_t per_task = std::max<std::uint64_t>(1, (16384 / element_ + inner_ - 1) / inner_);
    const std::uint64_t tasks = (outer_ + per_task - 1) / per_task;
    context.parallel_for(
        tasks,
        [&](std::size_t task) {
          const std::uint64_t begin = task * per_task;
          const std::uint64_t end = std::min(outer_, begin + per_task);
          switch (element_) {  // the sizes of kiln's data types
            case 1: return walk<1>(source, destination, begin, end);
            case 2: return walk<2>(source, destination, begin, end);
            default: return walk<4>(source, destination, begin, end);
          }
        },
        per_task * inner_);
  }

 private:
  static constexpr std::size_t no_tile = TensorShape::max_rank;

  // Copies outer indices [begin, end), keeping their coordinates like an odometer.
  template <std::size_t Element>
  void walk(const std::byte* source, std::byte* destination, std::uint64_t begin, std::uint64_t end) const {
    const std::size_t last = rank_ == 0 ? 0 : rank_ - 1;
    std::array<std::uint32_t, TensorShape::max_rank> coords{};
    std::int64_t from = 0, to = 0;
    std::uint64_t index = begin;
    for (std::size_t d = rank_; d-- > 0;)
      if (walked_[d]) {
        coords[d] = static_cast<std::uint32_t>(index % dims_[d]);
        index /= dims_[d];
        from += coords[d] * from_[d];
        to += coords[d] * to_[d];
      }
    constexpr auto element = static_cast<std::int64_t>(Element);
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::byte* s = source + from * element;
      std::byte* t = destination + to * element;
      if (run_ != 0)
        std::memcpy(t, s, run_ * Element);
      else if (tile_row_ != no_tile)
        copy_tiles<Element>(s, t);
      else
        copy_strided<Element>(s, t, dims_[last], from_[last], to_[last]);
      for (std::size_t d = rank_; d-- > 0;) {  // next coordinates
        if (!walked_[d]) continue;
        from += from_[d];
        to += to_[d];
        if (++coords[d] < dims_[d]) break;
        from -= std::int64_t{dims_[d]} * from_[d];
        to -= std::int64_t{dims_[d]} * to_[d];
        coords[d] = 0;
      }
    }
  }

  // A transpose's tiled dimension is copied whole by each outer step: an image's NCHW -> NHWC
  // (rows of 3) would be a single step for one thread. Where its size has a divisor that makes
  // blocks of 4 to 16 KiB, it becomes two dimensions, blocks (walked) of rows (tiled), so that the
  // blocks are tasks of their own.
  void split_tile_rows() {
    if (rank_ == TensorShape::max_rank) return;
    const std::uint32_t rows = dims_[tile_row_];
    const std::uint64_t row_bytes = std::uint64_t{dims_[rank_ - 1]} * element_;
    const std::uint64_t most = std::max<std::uint64_t>(1, 16384 / row_bytes), least = most / 4;
    std::uint64_t block = 0;
    for (std::uint64_t b = std::min<std::uint64_t>(most, rows / 2); b > least && block == 0; --b)
      if (rows % b == 0) block = b;
    if (block == 0) return;
    for (std::size_t d = rank_; d > tile_row_; --d) {
      dims_[d] = dims_[d - 1];
      from_[d] = from_[d - 1];
      to_[d] = to_[d - 1];
    }
    ++rank_;
    dims_[tile_row_] = static_cast<std::uint32_t>(rows / block);  // the blocks, walked
    from_[tile_row_] = from_[tile_row_ + 1] * static_cast<std::int64_t>(block);
    to_[tile_row_] = to_[tile_row_ + 1] * static_cast<std::int64_t>(block);
    dims_[++tile_row_] = static_cast<std::uint32_t>(block);  // the rows of a block, tiled
  }

  template <std::size_t Element>
  static void copy_strided(const std::byte* s, std::byte* t, std::uint32_t count, std::int64_t from, std::int64_t to) {
    constexpr auto element = static_cast<std::int64_t>(Element);
    for (std::uint32_t j = 0; j < count; ++j) std::memcpy(t + j * to * element, s + j * from * element, Element);
  }

  // The source is contiguous along tile_row_, the destination along the last dimension: square
  // tiles keep both sides in cache. With 2 to 4 destination columns (NCHW -> NHWC of an RGB image,
  // a channel shuffle of 2 groups) each destination row is gathered whole instead, its column
  // count known to the compiler: a tile's bookkeeping would cost more than its few elements.
  template <std::size_t Element>
  void copy_tiles(const std::byte* s, std::byte* t) const {
    switch (dims_[rank_ - 1]) {
      case 2: return gather_rows<Element, 2>(s, t);
      case 3: return gather_rows<Element, 3>(s, t);
      case 4: return gather_rows<Element, 4>(s, t);
      default: break;
    }
    constexpr std::uint32_t tile = 16;
    constexpr auto element = static_cast<std::int64_t>(Element);
    const std::size_t last = rank_ - 1;
    const std::uint32_t rows = dims_[tile_row_], columns = dims_[last];
    for (std::uint32_t r0 = 0; r0 < rows; r0 += tile)
      for (std::uint32_t c0 = 0; c0 < columns; c0 += tile) {
        const std::uint32_t r1 = std::min(rows, r0 + tile), c1 = std::min(columns, c0 + tile);
        for (std::uint32_t r = r0; r < r1; ++r)
          copy_strided<Element>(s + (r * from_[tile_row_] + c0 * from_[last]) * element,
                                t + (r * to_[tile_row_] + c0 * to_[last]) * element, c1 - c0, from_[last], to_[last]);
      }
  }

  template <std::size_t Element, std::uint32_t Columns>
  void gather_rows(const std::byte* s, std::byte* t) const {
    const std::size_t last = rank_ - 1;
    const std::int64_t to_row = to_[tile_row_] * static_cast<std::int64_t>(Element);
    const std::int64_t from_column = from_[last] * static_cast<std::int64_t>(Element);
    const std::uint32_t rows = dims_[tile_row_];
    std::uint32_t r = 0;
    if constexpr (Element == sizeof(float) && Columns == 2)
      if (to_row == 2 * Element) {  // two floats a row, rows packed: the interleave of a 2-group channel shuffle
        r = static_cast<std::uint32_t>(interleave_vectors(reinterpret_cast<const float*>(s),
                                                          reinterpret_cast<const float*>(s + from_column),
                                                          reinterpret_cast<float*>(t), rows));
        s += r * Element, t += r * to_row;
      }
    for (; r < rows; ++r, s += Element, t += to_row)  // from_[tile_row_] is 1
      for (std::uint32_t c = 0; c < Columns; ++c) std::memcpy(t + c * Element, s + c * from_column, Element);
  }

  std::size_t element_ = 4;
  bool empty_ = false;
  std::size_t rank_ = 0;
  std::array<std::uint32_t, TensorShape::max_rank> dims_{};
  std::array<std::int64_t, TensorShape::max_rank> from_{}, to_{};
  std::uint64_t run_ = 0;  // elements contiguous on both sides, copied by memcpy; 0: element by element
  std::size_t tile_row_ = no_tile;
  std::array<bool, TensorShape::max_rank> walked_{};  // dimensions walked by the outer loop
  std::uint64_t outer_ = 1, inner_ = 1;               // outer steps, and elements copied per step
};

/// Row-major element strides of a shape, signed for StridedCopy.
inline SignedStrides element_strides(const TensorShape& shape) {
  const ref::Strides unsigned_strides = ref::strides_of(shape);
  SignedStrides strides{};
  std::ranges::copy(unsigned_strides, strides.begin());
  return strides;
}

/// Concat and Split: one StridedCopy per piece of `whole` along `axis`, and where the piece starts in it.
struct AxisPieces {
  AxisPieces(const TensorShape& whole, std::span<const TensorInfo> pieces, std::size_t axis, bool into_whole) {
    const auto whole_strides = element_strides(whole);
    const std::size_t element = size_of(pieces[0].type);
    std::int64_t start = 0;
    for (const TensorInfo& piece : pieces) {
      const SignedStrides piece_strides = element_strides(piece.shape);
      copies.push_back(into_whole ? StridedCopy(piece.shape.dims(), piece_strides, whole_strides, element)
                                  : StridedCopy(piece.shape.dims(), whole_strides, piece_strides, element));
      offsets.push_back(start * whole_strides[axis] * static_cast<std::int64_t>(element));
      start += piece.shape[axis];
    }
  }

  std::vector<StridedCopy> copies;
  std::vector<std::int64_t> offsets;  ///< in bytes
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
