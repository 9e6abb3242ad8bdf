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

/// True when T is an element of a TypeList.
template <class T, class List>
inline constexpr bool contains_v = false;
template <class T, class... Ts>
inline constexpr bool contains_v<T, TypeList<Ts...>> = (std::is_same_v<T, Ts> || ...);

/// Index of T in a TypeList (a compile error when T is absent).
template <class T, class List>
struct index_of;
template <class T, class... Ts>
struct index_of<T, TypeList<Ts...>> {
  static_assert(contains_v<T, TypeList<Ts...>>, "type is not in the TypeList");
  static constexpr std::size_t value = [] {
    constexpr bool matches[] = {std::is_same_v<T, Ts>...};
    for (std::size_t i = 0; i < sizeof...(Ts); ++i)
      if (matches[i]) return i;
    return sizeof...(Ts);
  }();
};
template <class T, class List>
inline constexpr std::size_t index_of_v = index_of<T, List>::value;

/// The element of a TypeList at index I.
template <std::size_t I, class List>
struct type_at;
template <std::size_t I, class T, class... Ts>
struct type_at<I, TypeList<T, Ts...>> : type_at<I - 1, TypeList<Ts...>> {};
template <class T, class... Ts>
struct type_at<0, TypeList<T, Ts...>> {
  using type = T;
};
template <std::size_t I, class List>
using type_at_t = typename type_at<I, List>::type;

/// Applies a template to the elements of a TypeList: apply_t<std::variant, TypeList<A, B>> = std::variant<A, B>.
template <template <class...> class F, class List>
struct apply;
template <template <class...> class F, class... Ts>
struct apply<F, TypeList<Ts...>> {
  using type = F<Ts...>;
};
template <template <class...> class F, class List>
using apply_t = typename apply<F, List>::type;

}  // namespace kiln
