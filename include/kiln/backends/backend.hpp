// SPDX-License-Identifier: Apache-2.0
// The Backend concept: what a policy type must state to be plugged into Runtime<Backends...>.
#pragma once

#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace kiln {

/// Memory kind of ordinary CPU-addressable memory. Backends with the same memory kind hand
/// tensors to each other without copies.
struct HostMemory {
  static constexpr std::string_view name = "host";
};

/// What a backend can do beyond running workloads, stated at compile time as
/// `static constexpr BackendCapabilities capabilities{...}` (all true when a backend says nothing).
struct BackendCapabilities {
  bool async_execution = true;  ///< workloads may run concurrently on different working memories
  bool profiling = true;        ///< per-workload timing is meaningful
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
///   using memory = HostMemory;                       // where its tensors live
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
} && std::default_initializable<typename B::context>
    && (!requires { B::capabilities; } || requires { { B::capabilities } -> std::convertible_to<BackendCapabilities>; }) && (B::alignment > 0) && ((B::alignment & (B::alignment - 1)) == 0);

/// The capabilities a backend states, or the defaults.
template <class B>
constexpr BackendCapabilities capabilities_of() {
  if constexpr (requires { B::capabilities; }) return B::capabilities;
  else return {};
}

}  // namespace kiln
