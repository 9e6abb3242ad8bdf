// SPDX-License-Identifier: Apache-2.0
// A Runtime's configuration (an optional OpSet, then its backends): the static checks of it, and
// its description with the types erased, which optimize() and load() walk as plain data.
#pragma once

#include <array>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kiln/backends/backend.hpp"
#include "kiln/backends/workload_table.hpp"

namespace kiln::detail {

/// The template arguments of a Runtime or of optimize(): an optional OpSet, then the backends.
template <class... Config>
struct RuntimeConfig {
  using op_set = AllOps;
  using backends = TypeList<Config...>;
};
template <class... Ops, class... Bs>
struct RuntimeConfig<OpSet<Ops...>, Bs...> {
  using op_set = OpSet<Ops...>;
  using backends = TypeList<Bs...>;
};

/// T<Set, Backends...> for a configuration's OpSet (AllOps when none was given) and backends,
/// so that Runtime<B...> and Runtime<AllOps, B...> take the same OptimizedNetwork.
template <template <class...> class T, class Set, class Backends>
struct apply_config;
template <template <class...> class T, class Set, class... Bs>
struct apply_config<T, Set, TypeList<Bs...>> {
  using type = T<Set, Bs...>;
};
template <template <class...> class T, class... Config>
using with_op_set_t = typename apply_config<T, typename RuntimeConfig<Config...>::op_set,
                                            typename RuntimeConfig<Config...>::backends>::type;

template <class Set>
struct with_mem_copy;
template <class... Ops>
struct with_mem_copy<OpSet<Ops...>> {
  using type = OpSet<Ops..., ops::MemCopy>;
};

/// The ops a Runtime runs: its OpSet, plus MemCopy when a backend has device memory (optimize
/// inserts those copies itself).
template <class Set, class... Bs>
using effective_op_set_t = std::conditional_t<(!has_host_memory_v<Bs> || ...), typename with_mem_copy<Set>::type, Set>;

template <Backend... Bs>
inline constexpr std::array<std::string_view, sizeof...(Bs)> backend_ids{Bs::id...};

/// True when B's context can stand in for its fallback's: inherited workloads run with it.
template <class B>
constexpr bool context_extends_fallback() {
  if constexpr (std::is_void_v<typename B::fallback>)
    return true;
  else
    return std::derived_from<typename B::context, typename B::fallback::context> &&
           context_extends_fallback<typename B::fallback>();
}

template <Backend... Bs>
constexpr bool backend_ids_unique() {
  for (std::size_t i = 0; i < sizeof...(Bs); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (backend_ids<Bs...>[i] == backend_ids<Bs...>[j]) return false;
  return true;
}

/// The static checks every Runtime and optimize() make of their configuration, each with a message
/// that names the mistake.
template <class Set, class... Bs>
constexpr bool check_backend_pack() {
  static_assert(sizeof...(Bs) > 0, "kiln: a Runtime needs at least one backend, e.g. kiln::Runtime<kiln::RefBackend>");
  static_assert((Backend<Bs> && ...),
                "kiln: every Runtime parameter must satisfy the kiln::Backend concept (id, alignment, memory, "
                "context, fallback, available()); see backends/backend.hpp. Only the first may be an OpSet.");
  static_assert(
      op_set_entries_are_ops_v<Set>,
      "kiln: every OpSet entry must be an op descriptor of kiln::ops::op_list, such as kiln::ops::Convolution2d");
  if constexpr (sizeof...(Bs) > 0 && (Backend<Bs> && ...) && op_set_entries_are_ops_v<Set>) {
    static_assert(backend_ids_unique<Bs...>(), "kiln: a backend appears twice in the Runtime's backend list");
    static_assert((context_extends_fallback<Bs>() && ...),
                  "kiln: a backend's context must derive from its fallback's context, because the workloads it "
                  "inherits from the fallback run with it");
    using Last = std::tuple_element_t<sizeof...(Bs) - 1, std::tuple<Bs...>>;
    static_assert(all_ops_supported_v<Last, Set>,
                  "kiln: the last backend of a Runtime is the fallback of last resort and must implement every op "
                  "of its OpSet (end the list with kiln::RefBackend)");
    static_assert(((has_host_memory_v<Bs> || supports_v<ops::MemCopy, Bs>)&&...),
                  "kiln: a backend with device memory must implement MemCopy (host -> device and device -> host), "
                  "which optimize() inserts where a tensor crosses to or from its memory");
    static_assert(has_host_memory_v<Last>, "kiln: the last backend of a Runtime must use host memory (RefBackend)");
  }
  return true;
}

/// check_backend_pack for the template arguments of a Runtime or of optimize().
template <class... Config>
constexpr bool check_config() {
  return []<class... Bs>(TypeList<Bs...>) {
    return check_backend_pack<typename RuntimeConfig<Config...>::op_set, Bs...>();
  }(typename RuntimeConfig<Config...>::backends{});
}

/// The contexts of a list of backends, one each, in order.
template <class Backends>
struct contexts_of;
template <class... Bs>
struct contexts_of<TypeList<Bs...>> {
  using type = std::tuple<typename Bs::context...>;
};

/// One level of a backend's fallback chain: whose workloads it offers, and how the backend's
/// context is seen as that backend's (inherited workloads run with the inheriting backend's context).
struct ChainLevel {
  std::string_view id;
  std::span<const WorkloadEntry> (*entries)(std::size_t op);
  void* (*context)(void* backend_context);
};

/// One backend of a Runtime as optimize() and load() see it.
struct BackendDescription {
  std::string_view id;
  std::string_view memory;  ///< its memory kind's name
  bool host_memory = true;
  std::size_t alignment = 1;
  BackendCapabilities capabilities;
  bool (*available)() = nullptr;
  std::span<const ChainLevel> chain;  ///< the backend itself, then each fallback in turn
  ContextHooks hooks;
};

/// A Runtime's configuration as plain data: its backends in pack order, and the ops it runs.
struct PackDescription {
  std::span<const BackendDescription> backends;
  std::span<const bool, ops::op_count> ops;
};

template <class B>
constexpr std::size_t chain_length() {
  if constexpr (std::is_void_v<typename B::fallback>)
    return 1;
  else
    return 1 + chain_length<typename B::fallback>();
}

/// B's chain, level by level, for a Runtime running Set.
template <class B, class Set>
constexpr auto chain_of() {
  std::array<ChainLevel, chain_length<B>()> chain{};
  std::size_t level = 0;
  auto add = [&]<class L>(auto& self, std::type_identity<L>) -> void {
    chain[level++] = {L::id, &own_entries<L, Set>, [](void* c) -> void* {
                        return static_cast<typename L::context*>(static_cast<typename B::context*>(c));
                      }};
    if constexpr (!std::is_void_v<typename L::fallback>) self(self, std::type_identity<typename L::fallback>{});
  };
  add(add, std::type_identity<B>{});
  return chain;
}

template <class B, class Set>
inline constexpr auto chain_v = chain_of<B, Set>();

template <class Set, class... Bs>
inline constexpr std::array<BackendDescription, sizeof...(Bs)> backend_descriptions{
    BackendDescription{Bs::id, Bs::memory::name, has_host_memory_v<Bs>, Bs::alignment, capabilities_of<Bs>(),
                       [] { return Bs::available(); }, chain_v<Bs, Set>, ContextHooks::of<typename Bs::context>()}...};

/// The description of a Runtime<Config...>, made at compile time.
template <class... Config>
constexpr PackDescription describe() {
  return []<class... Bs>(TypeList<Bs...>) {
    using Set = effective_op_set_t<typename RuntimeConfig<Config...>::op_set, Bs...>;
    return PackDescription{backend_descriptions<Set, Bs...>, Set::contains};
  }(typename RuntimeConfig<Config...>::backends{});
}

}  // namespace kiln::detail
