// SPDX-License-Identifier: Apache-2.0
// C++ source for values known at run time: what `kiln compile` writes an op's parameters and a
// constant's elements with. Parameters are aggregates, written as braced lists of their fields in
// order, whatever the op: a new op needs nothing here.
#pragma once

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <kiln/core/inline_vector.hpp>

namespace kiln::tool {

/// The qualified name of T as the compiler spells it ("kiln::ops::Activation::Params").
template <class T>
constexpr std::string_view type_name() {
  const std::string_view signature = __PRETTY_FUNCTION__;  // GCC and Clang: "... [with T = NAME; ...]" / "[T = NAME]"
  const std::size_t start = signature.find("T = ") + 4;
  return signature.substr(start, signature.find_first_of(";]", start) - start);
}

namespace detail {

/// Converts to any field type: counts an aggregate's fields by how many of it brace-initialise one.
struct AnyField {
  template <class T>
  operator T() const;
};
template <class T, class... Fields>
constexpr std::size_t field_count() {
  if constexpr (requires { T{std::declval<Fields>()..., std::declval<AnyField>()}; })
    return field_count<T, Fields..., AnyField>();
  else
    return sizeof...(Fields);
}

/// Calls f(fields...) with the fields of aggregate `value`, in declaration order.
template <class T, class F>
decltype(auto) with_fields(const T& value, F&& f) {
  constexpr std::size_t n = field_count<T>();
  static_assert(n <= 10, "kiln compile writes parameters of at most 10 fields; add a case to with_fields");
  // clang-format off
  if constexpr (n == 0) { return f(); }
  else if constexpr (n == 1) { const auto& [a] = value; return f(a); }
  else if constexpr (n == 2) { const auto& [a, b] = value; return f(a, b); }
  else if constexpr (n == 3) { const auto& [a, b, c] = value; return f(a, b, c); }
  else if constexpr (n == 4) { const auto& [a, b, c, d] = value; return f(a, b, c, d); }
  else if constexpr (n == 5) { const auto& [a, b, c, d, e] = value; return f(a, b, c, d, e); }
  else if constexpr (n == 6) { const auto& [a, b, c, d, e, g] = value; return f(a, b, c, d, e, g); }
  else if constexpr (n == 7) { const auto& [a, b, c, d, e, g, h] = value; return f(a, b, c, d, e, g, h); }
  else if constexpr (n == 8) { const auto& [a, b, c, d, e, g, h, i] = value; return f(a, b, c, d, e, g, h, i); }
  else if constexpr (n == 9) { const auto& [a, b, c, d, e, g, h, i, j] = value; return f(a, b, c, d, e, g, h, i, j); }
  else { const auto& [a, b, c, d, e, g, h, i, j, k] = value; return f(a, b, c, d, e, g, h, i, j, k); }
  // clang-format on
}

template <class T>
inline constexpr bool is_optional_v = false;
template <class T>
inline constexpr bool is_optional_v<std::optional<T>> = true;
template <class T>
inline constexpr bool is_inline_vector_v = false;
template <class T, std::size_t N>
inline constexpr bool is_inline_vector_v<InlineVector<T, N>> = true;

}  // namespace detail

/// A float as a literal that reads back to the same float ("0.1f", "-3e-08f", infinities by name).
inline std::string float_literal(float value) {
  if (std::isnan(value)) return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<float>::infinity()" : "-std::numeric_limits<float>::infinity()";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(value));
  std::string literal = text;
  if (literal.find_first_of(".e") == std::string::npos) literal += ".0";
  return literal + "f";
}

/// `value` as a C++ expression of its type: numbers and enumerators as literals, optionals and
/// InlineVectors as their contents, aggregates as braced lists of their fields.
template <class T>
std::string to_cpp(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, float>) {
    return float_literal(value);
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else if constexpr (std::is_enum_v<T>) {
    if constexpr (requires { to_string(value); })
      return std::string(type_name<T>()) + "::" + std::string(to_string(value));
    else
      return std::string(type_name<T>()) + "{" + std::to_string(static_cast<std::underlying_type_t<T>>(value)) + "}";
  } else if constexpr (detail::is_optional_v<T>) {
    return value ? std::string(type_name<typename T::value_type>()) + to_cpp(*value) : "std::nullopt";
  } else if constexpr (detail::is_inline_vector_v<T>) {
    std::string list = "{";
    for (const auto& item : value) list += (list.size() > 1 ? ", " : "") + to_cpp(item);
    return list + "}";
  } else {
    static_assert(std::is_aggregate_v<T>,
                  "kiln compile writes numbers, enumerators, optionals, InlineVectors and aggregates of them");
    return detail::with_fields(value, [](const auto&... fields) {
      std::string list = "{";
      ((list += (list.size() > 1 ? ", " : "") + to_cpp(fields)), ...);
      return list + "}";
    });
  }
}

}  // namespace kiln::tool
