// SPDX-License-Identifier: Apache-2.0
// Must not compile with KILN_SHOULD_FAIL: a backend with device memory must implement MemCopy.
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>

struct DeviceMemory {
  static constexpr std::string_view name = "device";
};

struct DeviceContext {
  std::size_t arena_alignment() { return 256; }
  kiln::Expected<kiln::DeviceArena> allocate_arena(std::uint64_t) {
    return kiln::Status::error(kiln::ErrorCode::OutOfMemory, "no memory");
  }
  kiln::Status read(const void*, void*, std::uint64_t) { return kiln::Status::ok(); }
  kiln::Status finish() { return kiln::Status::ok(); }
};

struct Accelerator {
  using fallback = void;
  static constexpr std::string_view id = "Accelerator";
  static constexpr std::size_t alignment = 64;
#ifdef KILN_SHOULD_FAIL
  using memory = DeviceMemory;  // but no Workload<ops::MemCopy, Accelerator>
#else
  using memory = kiln::HostMemory;
#endif
  using context = DeviceContext;
  static bool available() noexcept { return true; }
};

kiln::Runtime<Accelerator, kiln::RefBackend> runtime;
