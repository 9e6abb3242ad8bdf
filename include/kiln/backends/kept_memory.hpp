// SPDX-License-Identifier: Apache-2.0
// KeptMemory: where a workload keeps what it computes once at load, and KeptArray, what it keeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

#include "kiln/core/status.hpp"

namespace kiln {

/// An array a workload computes at load and reads at every run (a requantization table), held on
/// the heap or in memory a compiled network planned for it. A copy of one held in such memory
/// reads the same memory: it does not change after load.
template <class T>
class KeptArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  KeptArray() = default;
  KeptArray(const KeptArray& other) : heap_(other.heap_), items_(heap_.empty() ? other.items_ : std::span<T>(heap_)) {}
  KeptArray& operator=(const KeptArray& other) {
    if (this != &other) {
      heap_ = other.heap_;
      items_ = heap_.empty() ? other.items_ : std::span<T>(heap_);
    }
    return *this;
  }
  // A vector's move keeps its buffer, so the moved span stays valid.
  KeptArray(KeptArray&&) noexcept = default;
  KeptArray& operator=(KeptArray&&) noexcept = default;

  std::size_t size() const noexcept { return items_.size(); }
  const T& operator[](std::size_t i) const { return items_[i]; }
  T& operator[](std::size_t i) { return items_[i]; }
  auto begin() const noexcept { return std::span<const T>(items_).begin(); }
  auto end() const noexcept { return std::span<const T>(items_).end(); }

 private:
  friend class KeptMemory;
  std::vector<T> heap_;
  std::span<T> items_;
};

/// Where the workloads of a layer keep what they compute at load (KeptArray): the heap, for the
/// dynamic Runtime, or a region of a compiled network's arena planned for the layer, so that a
/// compiled network never allocates (docs/firmware.md). Either way it counts the bytes, laid out
/// as they would be in a region: `kiln compile` plans each layer's region from the count.
class KeptMemory {
 public:
  /// What a region's start is aligned to, and the most an element kept in it may need.
  static constexpr std::size_t alignment = 16;

  /// The heap.
  KeptMemory() = default;
  /// `region`, aligned to `alignment`.
  explicit KeptMemory(std::span<std::byte> region) : region_(region), in_region_(true) {}

  /// An array of `count` elements, value-initialised; an error when a region has no room for it.
  template <class T>
  Expected<KeptArray<T>> array(std::size_t count) {
    static_assert(alignof(T) <= alignment, "kiln: a kept element may need at most KeptMemory::alignment");
    const std::uint64_t start = (bytes_ + alignof(T) - 1) / alignof(T) * alignof(T);
    const std::uint64_t end = start + std::uint64_t{count} * sizeof(T);
    KeptArray<T> kept;
    if (!in_region_) {
      kept.heap_.resize(count);
      kept.items_ = kept.heap_;
    } else if (end > region_.size()) {
      return Status::error(ErrorCode::Unsupported, "its workload keeps at least ", end,
                           " bytes from load on; the compiled network planned ", region_.size(),
                           " (was it compiled for another backend? run kiln compile again)");
    } else {
      T* items = reinterpret_cast<T*>(region_.data() + start);
      for (std::size_t i = 0; i < count; ++i) ::new (items + i) T();
      kept.items_ = std::span<T>(items, count);
    }
    bytes_ = end;
    return kept;
  }

  /// The bytes kept so far, with the padding a region would give them.
  std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  std::span<std::byte> region_;
  bool in_region_ = false;
  std::uint64_t bytes_ = 0;
};

/// An array of `count` elements kept in `memory`, or on the heap when it is null (the workload was
/// not told where to keep it).
template <class T>
Expected<KeptArray<T>> keep_array(KeptMemory* memory, std::size_t count) {
  KeptMemory heap;
  return (memory ? *memory : heap).array<T>(count);
}

}  // namespace kiln
