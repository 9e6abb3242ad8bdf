// SPDX-License-Identifier: Apache-2.0
// Mutex: the runtime's lock, std::mutex where the platform has threads and a lock that excludes
// nothing where it has none (bare-metal firmware, whose C++ library has no std::mutex), chosen at
// compile time.
#pragma once

#include <mutex>  // std::lock_guard and std::unique_lock exist without threads too

/// 1 where the C++ implementation runs threads (it defines __STDCPP_THREADS__), else 0. A build for
/// an RTOS whose C++ library has std::mutex without that macro may define it as 1.
#ifndef KILN_THREADS
#if defined(__STDCPP_THREADS__)
#define KILN_THREADS 1
#else
#define KILN_THREADS 0
#endif
#endif

namespace kiln::detail {

#if KILN_THREADS
using Mutex = std::mutex;
#else
/// With one thread of execution there is nothing to exclude: locking compiles to nothing.
struct Mutex {
  constexpr void lock() noexcept {}
  constexpr bool try_lock() noexcept { return true; }
  constexpr void unlock() noexcept {}
};
#endif

}  // namespace kiln::detail
