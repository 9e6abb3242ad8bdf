// SPDX-License-Identifier: Apache-2.0
// Allocators: where kiln's arenas, constants and working memory come from, and how users supply their own.
#pragma once

#include <concepts>
#include <cstddef>
#include <new>

namespace kiln {

/// A source of aligned memory for one memory kind (`memory`, e.g. HostMemory).
///
/// \code
/// struct CountingAllocator {
///   using memory = kiln::HostMemory;
///   std::size_t live = 0;
///   void* allocate(std::size_t size, std::size_t alignment) { live += size; return ...; }
///   void deallocate(void* p, std::size_t size, std::size_t alignment) { live -= size; ... }
/// };
/// CountingAllocator counting;
/// kiln::Runtime<kiln::RefBackend> runtime({.host_allocator = kiln::AllocatorRef<kiln::HostMemory>(counting)});
/// \endcode
/// allocate returns nullptr when it cannot serve a request (kiln reports OutOfMemory).
template <class A>
concept Allocator = requires(A& a, std::size_t size, std::size_t alignment, void* p) {
  typename A::memory;
  { a.allocate(size, alignment) } -> std::same_as<void*>;
  a.deallocate(p, size, alignment);
};

namespace detail {
/// An allocator with its type erased: the state pointer and two functions. Default-constructed,
/// it uses aligned operator new.
class ErasedAllocator {
 public:
  constexpr ErasedAllocator() = default;

  void* allocate(std::size_t size, std::size_t alignment) const {
    if (allocate_ != nullptr) return allocate_(state_, size, alignment);
    return ::operator new (size, std::align_val_t{alignment}, std::nothrow);
  }
  void deallocate(void* p, std::size_t size, std::size_t alignment) const {
    if (deallocate_ != nullptr) return deallocate_(state_, p, size, alignment);
    ::operator delete (p, std::align_val_t{alignment}, std::nothrow);
  }

 protected:
  void* state_ = nullptr;
  void* (*allocate_)(void*, std::size_t, std::size_t) = nullptr;
  void (*deallocate_)(void*, void*, std::size_t, std::size_t) = nullptr;
};
}  // namespace detail

/// A non-owning reference to an Allocator of memory kind `Memory`; the allocator must outlive the
/// runtime and everything it loaded. Default-constructed, it uses aligned operator new. Handing
/// in an allocator of another memory kind does not compile.
/// \tparam Memory the memory kind (HostMemory, or a device backend's)
template <class Memory>
class AllocatorRef : public detail::ErasedAllocator {
 public:
  constexpr AllocatorRef() = default;
  template <Allocator A>
  requires std::same_as<typename A::memory, Memory>
  explicit AllocatorRef(A& allocator) {
    state_ = &allocator;
    allocate_ = [](void* state, std::size_t size, std::size_t alignment) {
      return static_cast<A*>(state)->allocate(size, alignment);
    };
    deallocate_ = [](void* state, void* p, std::size_t size, std::size_t alignment) {
      static_cast<A*>(state)->deallocate(p, size, alignment);
    };
  }
};

}  // namespace kiln
