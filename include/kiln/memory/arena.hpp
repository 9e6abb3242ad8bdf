// SPDX-License-Identifier: Apache-2.0
// AlignedBuffer: an owned, aligned block of memory from an allocator (arenas and constant storage).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include "kiln/memory/allocator.hpp"

namespace kiln {

/// Owns `size` bytes aligned to `alignment` from `allocator`, or nothing when allocation failed
/// (check data(); a zero-byte buffer has no data either).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(std::uint64_t size, std::size_t alignment, detail::ErasedAllocator allocator = {})
      : size_(size), alignment_(alignment), allocator_(allocator) {
    // On a 32-bit target a plan can ask for more than the address space holds: no buffer, rather
    // than a truncated one.
    if (size == 0 || size > std::numeric_limits<std::size_t>::max()) {
      size_ = 0;
      return;
    }
    data_ = static_cast<std::byte*>(allocator_.allocate(static_cast<std::size_t>(size), alignment));
    if (data_ == nullptr) size_ = 0;
  }
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        alignment_(other.alignment_),
        allocator_(other.allocator_) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      alignment_ = other.alignment_;
      allocator_ = other.allocator_;
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { release(); }

  std::byte* data() const noexcept { return data_; }
  std::uint64_t size() const noexcept { return size_; }
  /// Returns the memory to the allocator now.
  void release() noexcept {
    if (data_ != nullptr) allocator_.deallocate(data_, static_cast<std::size_t>(size_), alignment_);
    data_ = nullptr;
    size_ = 0;
  }

 private:
  std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
  std::size_t alignment_ = 1;
  detail::ErasedAllocator allocator_;
};

}  // namespace kiln
