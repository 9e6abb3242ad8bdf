// SPDX-License-Identifier: Apache-2.0
// Compile-time walks over a pack of backends: visit by run-time index, and the pack's static checks.
#pragma once

#include <array>
#include <string_view>
#include <type_traits>
#include <utility>

#include "kiln/backends/backend.hpp"
#include "kiln/backends/workload.hpp"

namespace kiln::detail {

/// Calls f(std::type_identity<B>{}) for the backend at `index` of the pack.
template <Backend... Bs, class F>
constexpr void visit_backend(std::size_t index, F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((index == I ? (f(std::type_identity<Bs>{}), 0) : 0), ...);
  }(std::index_sequence_for<Bs...>{});
}

template <Backend... Bs>
inline constexpr std::array<std::string_view, sizeof...(Bs)> backend_ids{Bs::id...};

/// True when B's context can stand in for its fallback's: inherited workloads run with it.
template <class B>
constexpr bool context_extends_fallback() {
  if constexpr (std::is_void_v<typename B::fallback>) return true;
  else return std::derived_from<typename B::context, typename B::fallback::context> &&
              context_extends_fallback<typename B::fallback>();
}

template <Backend... Bs>
constexpr bool backend_ids_unique() {
  for (std::size_t i = 0; i < sizeof...(Bs); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (backend_ids<Bs...>[i] == backend_ids<Bs...>[j]) return false;
  return true;
}

/// The static checks every Runtime and optimize() makes of its backend pack, each with a message
/// that names the mistake.
template <class... Bs>
constexpr bool check_backend_pack() {
  static_assert(sizeof...(Bs) > 0, "kiln: a Runtime needs at least one backend, e.g. kiln::Runtime<kiln::RefBackend>");
  static_assert((Backend<Bs> && ...),
                "kiln: every Runtime parameter must satisfy the kiln::Backend concept (id, alignment, memory, "
                "context, fallback, available()); see backends/backend.hpp");
  if constexpr (sizeof...(Bs) > 0 && (Backend<Bs> && ...)) {
    static_assert(backend_ids_unique<Bs...>(), "kiln: a backend appears twice in the Runtime's backend list");
    static_assert((context_extends_fallback<Bs>() && ...),
                  "kiln: a backend's context must derive from its fallback's context, because the workloads it "
                  "inherits from the fallback run with it");
    using Last = std::tuple_element_t<sizeof...(Bs) - 1, std::tuple<Bs...>>;
    static_assert(all_ops_supported_v<Last>,
                  "kiln: the last backend of a Runtime is the fallback of last resort and must implement every op "
                  "(end the list with kiln::RefBackend)");
    static_assert(((has_host_memory_v<Bs> || supports_v<ops::MemCopy, Bs>) && ...),
                  "kiln: a backend with device memory must implement MemCopy (host -> device and device -> host), "
                  "which optimize() inserts where a tensor crosses to or from its memory");
    static_assert(has_host_memory_v<Last>, "kiln: the last backend of a Runtime must use host memory (RefBackend)");
  }
  return true;
}

}  // namespace kiln::detail
