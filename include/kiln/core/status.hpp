// SPDX-License-Identifier: Apache-2.0
// Status and Expected<T>: how every fallible kiln call reports failure, without exceptions.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "kiln/detail/str_cat.hpp"

namespace kiln {

/// What kind of failure a Status reports; the message says the rest.
enum class ErrorCode : unsigned char {
  Ok,
  InvalidArgument,  ///< a value the caller passed is wrong (bad descriptor, wrong buffer size...)
  InvalidNetwork,   ///< the graph is malformed (unconnected input, cycle, shape mismatch...)
  NotFound,         ///< an id (network, binding, backend) does not exist
  Unsupported,      ///< no chosen backend can run this
  OutOfMemory,      ///< an allocator returned nothing
  DeviceError,      ///< a backend's device reported a failure
};

constexpr std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::Ok: return "ok";
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::InvalidNetwork: return "invalid network";
    case ErrorCode::NotFound: return "not found";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::OutOfMemory: return "out of memory";
    case ErrorCode::DeviceError: return "device error";
  }
  return "unknown";
}

/// The result of a call that returns nothing: ok, or an error code with a message a person can act on.
class [[nodiscard]] Status {
 public:
  constexpr Status() = default;
  // The message is taken as a view: GCC 12 cannot evaluate by-value std::string parameters in
  // constant expressions, and Status must work there (constexpr graph validation).
  constexpr Status(ErrorCode code, std::string_view message) : code_(code), message_(message) {}

  static constexpr Status ok() { return {}; }
  /// Builds an error whose message is the concatenation of `pieces` (strings and numbers).
  template <class... Pieces>
  static constexpr Status error(ErrorCode code, const Pieces&... pieces) {
    return Status(code, detail::str_cat(pieces...));
  }

  constexpr bool is_ok() const noexcept { return code_ == ErrorCode::Ok; }
  constexpr explicit operator bool() const noexcept { return is_ok(); }
  constexpr ErrorCode code() const noexcept { return code_; }
  constexpr const std::string& message() const noexcept { return message_; }

  /// Returns a copy whose message starts with `context` ("layer 'conv1': ...").
  constexpr Status with_context(std::string_view context) const {
    if (is_ok()) return *this;
    return Status(code_, detail::str_cat(context, ": ", message_));
  }

 private:
  ErrorCode code_ = ErrorCode::Ok;
  std::string message_;
};

/// A value of type T, or the Status that explains why there is none.
template <class T>
class [[nodiscard]] Expected {
  static_assert(!std::is_reference_v<T> && !std::is_same_v<std::remove_cv_t<T>, Status>,
                "Expected<T> holds a value type other than Status");

 public:
  // References rather than by-value parameters: GCC 12 rejects by-value objects holding a
  // std::string in constant expressions.
  constexpr Expected(const T& value) : storage_(std::in_place_index<0>, value) {}
  constexpr Expected(T&& value) : storage_(std::in_place_index<0>, std::move(value)) {}
  constexpr Expected(const Status& status) : storage_(std::in_place_index<1>, status) { assert(!status.is_ok()); }
  constexpr Expected(Status&& status) : storage_(std::in_place_index<1>, std::move(status)) {
    assert(!std::get_if<1>(&storage_)->is_ok() && "an Expected without a value needs an error Status");
  }

  constexpr bool has_value() const noexcept { return storage_.index() == 0; }
  constexpr explicit operator bool() const noexcept { return has_value(); }

  /// The value; only call when has_value() (checked by assert in debug builds).
  constexpr T& value() & {
    assert(has_value());
    return *std::get_if<0>(&storage_);
  }
  constexpr const T& value() const& {
    assert(has_value());
    return *std::get_if<0>(&storage_);
  }
  constexpr T&& value() && {
    assert(has_value());
    return std::move(*std::get_if<0>(&storage_));
  }
  constexpr T& operator*() & { return value(); }
  constexpr const T& operator*() const& { return value(); }
  constexpr T&& operator*() && { return std::move(*this).value(); }
  constexpr T* operator->() { return &value(); }
  constexpr const T* operator->() const { return &value(); }

  /// The error; Status::ok() when a value is present.
  constexpr Status status() const { return has_value() ? Status::ok() : *std::get_if<1>(&storage_); }

 private:
  std::variant<T, Status> storage_;
};

}  // namespace kiln
