// SPDX-License-Identifier: Apache-2.0
// The Backend concept: what a policy type must state to be plugged into Runtime<Backends...>.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <type_traits>

#include "kiln/memory/device_arena.hpp"

namespace kiln {

/// Memory kind of ordinary CPU-addressable memory. Backends with the same memory kind hand
/// tensors to each other without copies.
struct HostMemory {
  static constexpr std::string_view name = "host";
};

/// What the context of a backend whose tensors live in device memory (`memory` is not HostMemory)
/// provides, so that the runtime can plan, allocate and inspect that memory without knowing the device:
/// the alignment tensor views need (e.g. CL_DEVICE_MEM_BASE_ADDR_ALIGN), an arena per working memory,
/// and a blocking read of one tensor for the debug callback.
template <class C>
concept DeviceMemoryContext = requires(C& context, std::uint64_t bytes, const void* handle, void* host) {
  { context.arena_alignment() } -> std::convertible_to<std::size_t>;
  { context.allocate_arena(bytes) } -> std::same_as<Expected<DeviceArena>>;
  { context.read(handle, host, bytes) } -> std::same_as<Status>;
  { context.finish() } -> std::same_as<Status>;  ///< waits until the device has done all it was given
};

/// When a device ran the work one layer enqueued, as the device measured it: from the first
/// enqueue to the first command's start (microseconds), and from that start to the last command's end.
struct DeviceSpan {
  double enqueue_to_start_us = 0;
  double duration_us = 0;
};

/// What the context of a backend that runs asynchronously on a device provides so that a profiled
/// network records device time rather than the time it took to enqueue: the runtime brackets a
/// layer's run with begin/end on the running thread, and after the inference's last wait asks the
/// returned query (empty when the layer enqueued nothing timed).
template <class C>
concept DeviceTimingContext = requires(C& context) {
  context.begin_device_timing();
  { context.end_device_timing() } -> std::same_as<std::function<std::optional<DeviceSpan>()>>;
};

/// True when B's tensors live in ordinary host memory.
template <class B>
inline constexpr bool has_host_memory_v = std::same_as<typename B::memory, HostMemory>;

/// What a backend can do beyond running workloads, stated at compile time as
/// `static constexpr BackendCapabilities capabilities{...}` (all true when a backend says nothing).
struct BackendCapabilities {
  bool async_execution = true;     ///< workloads may run concurrently on different working memories
  bool profiling = true;           ///< per-workload timing is meaningful
  bool import_host_memory = true;  ///< workloads may read network inputs straight from user buffers
  bool export_host_memory = true;  ///< workloads may write network outputs straight into user buffers
};

/// A backend policy type (see docs/architecture.md, "Adding a backend").
///
/// \code
/// struct MyBackend {
///   using fallback = RefBackend;                     // or void
///   static constexpr std::string_view id = "MyAcc";  // unique BackendId
///   static constexpr std::size_t alignment = 64;     // buffer alignment its kernels need
///   using memory = HostMemory;                       // where its tensors live (a device kind needs
///                                                    // a DeviceMemoryContext and MemCopy workloads)
///   using context = my::Context;                     // per-Runtime state, default-constructible
///   static bool available() noexcept;                // usable on this machine?
/// };
/// \endcode
template <class B>
concept Backend = requires {
  typename B::fallback;
  typename B::memory;
  typename B::context;
  { B::id } -> std::convertible_to<std::string_view>;
  { B::alignment } -> std::convertible_to<std::size_t>;
  { B::available() } -> std::same_as<bool>;
}
&&std::default_initializable<typename B::context> &&
    (std::same_as<typename B::memory, HostMemory> || DeviceMemoryContext<typename B::context>)&&(
        !requires { B::capabilities; } ||
        requires {
          { B::capabilities } -> std::convertible_to<BackendCapabilities>;
        }) &&
    (B::alignment > 0) && ((B::alignment & (B::alignment - 1)) == 0);

/// The capabilities a backend states, or the defaults.
template <class B>
constexpr BackendCapabilities capabilities_of() {
  if constexpr (requires { B::capabilities; })
    return B::capabilities;
  else
    return {};
}

/// What the runtime may ask of a backend's context, with its type erased: the DeviceMemoryContext
/// and DeviceTimingContext members, null where the context has none. `context` is the backend's.
struct ContextHooks {
  std::size_t (*arena_alignment)(void* context) = nullptr;
  Expected<DeviceArena> (*allocate_arena)(void* context, std::uint64_t bytes) = nullptr;
  Status (*read)(void* context, const void* handle, void* host, std::uint64_t bytes) = nullptr;
  /// Wraps host memory for the device to read in place.
  Expected<DeviceImport> (*import_host)(void* context, const void* host, std::uint64_t bytes) = nullptr;
  Status (*finish)(void* context) = nullptr;
  void (*begin_device_timing)(void* context) = nullptr;
  std::function<std::optional<DeviceSpan>()> (*end_device_timing)(void* context) = nullptr;

  template <class Context>
  static constexpr ContextHooks of() {
    ContextHooks hooks;
    if constexpr (DeviceMemoryContext<Context>) {
      hooks.arena_alignment = [](void* c) -> std::size_t { return static_cast<Context*>(c)->arena_alignment(); };
      hooks.allocate_arena = [](void* c, std::uint64_t bytes) {
        return static_cast<Context*>(c)->allocate_arena(bytes);
      };
      hooks.read = [](void* c, const void* handle, void* host, std::uint64_t bytes) {
        return static_cast<Context*>(c)->read(handle, host, bytes);
      };
      hooks.finish = [](void* c) { return static_cast<Context*>(c)->finish(); };
      if constexpr (requires(Context & c, const void* host, std::uint64_t bytes) {
                      { c.import_host(host, bytes) } -> std::same_as<Expected<DeviceImport>>;
                    })
        hooks.import_host = [](void* c, const void* host, std::uint64_t bytes) {
          return static_cast<Context*>(c)->import_host(host, bytes);
        };
    }
    if constexpr (DeviceTimingContext<Context>) {
      hooks.begin_device_timing = [](void* c) { static_cast<Context*>(c)->begin_device_timing(); };
      hooks.end_device_timing = [](void* c) { return static_cast<Context*>(c)->end_device_timing(); };
    }
    return hooks;
  }
};

}  // namespace kiln
