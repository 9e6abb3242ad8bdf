// SPDX-License-Identifier: Apache-2.0
// TypeList: a compile-time list of types, and the few queries kiln makes of one.
#pragma once

#include <cstddef>
#include <type_traits>
#include <variant>

namespace kiln {

template <class... Ts>
struct TypeList {
  static constexpr std::size_t size = sizeof...(Ts);
};

/// Index of T in a TypeList (a compile error when T is absent).
template <class T, class List> struct index_of;
template <class T, class... Ts>
struct index_of<T, TypeList<Ts...>> {
  static constexpr std::size_t value = [] {
    constexpr bool matches[] = {std::is_same_v<T, Ts>...};
    for (std::size_t i = 0; i < sizeof...(Ts); ++i)
      if (matches[i]) return i;
    return sizeof...(Ts);
  }();
  static_assert(value < sizeof...(Ts), "type is not in the TypeList");
};
template <class T, class List> inline constexpr std::size_t index_of_v = index_of<T, List>::value;

/// Applies a template to the elements of a TypeList: apply_t<std::variant, TypeList<A, B>> = std::variant<A, B>.
template <template <class...> class F, class List> struct apply;
template <template <class...> class F, class... Ts> struct apply<F, TypeList<Ts...>> { using type = F<Ts...>; };
template <template <class...> class F, class List> using apply_t = typename apply<F, List>::type;

}  // namespace kiln
