// SPDX-License-Identifier: Apache-2.0
// AlignedBuffer: an owned, aligned block of host memory (arenas and constant storage).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

namespace kiln {

/// Owns `size` bytes aligned to `alignment`, or nothing when allocation failed (check data()).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(std::uint64_t size, std::size_t alignment) : size_(size), alignment_(alignment) {
    if (size == 0) return;
    data_ = static_cast<std::byte*>(::operator new(static_cast<std::size_t>(size), std::align_val_t{alignment}, std::nothrow));
    if (data_ == nullptr) size_ = 0;
  }
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)), alignment_(other.alignment_) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      alignment_ = other.alignment_;
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { release(); }

  std::byte* data() const noexcept { return data_; }
  std::uint64_t size() const noexcept { return size_; }

 private:
  void release() noexcept {
    if (data_ != nullptr) ::operator delete(data_, std::align_val_t{alignment_}, std::nothrow);
    data_ = nullptr;
  }

  std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
  std::size_t alignment_ = 1;
};

}  // namespace kiln
