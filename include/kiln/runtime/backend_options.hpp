// SPDX-License-Identifier: Apache-2.0
// BackendOptions: typed settings for each backend of a Runtime (threads, fast-math, a tuning file...).
#pragma once

#include <tuple>
#include <type_traits>

#include "kiln/backends/backend.hpp"

namespace kiln {

/// What a backend that declares no `options` type is configured with.
struct NoBackendOptions {};

namespace detail {
template <class B>
struct options_of {
  using type = NoBackendOptions;
};
template <class B>
requires requires { typename B::options; }
struct options_of<B> {
  using type = typename B::options;
};
}  // namespace detail

/// The options type of backend B: its nested `options` struct, or NoBackendOptions.
template <class B>
using backend_options_t = typename detail::options_of<B>::type;

/// One typed options value per backend of a Runtime, handed to Runtime's constructor. Each
/// backend context with a `configure(const options&)` member receives its backend's options.
///
/// \code
/// kiln::BackendOptions<MyBackend, kiln::RefBackend> options;
/// options.get<MyBackend>().threads = 2;     // a field MyBackend::options does not have fails to compile
/// kiln::Runtime<MyBackend, kiln::RefBackend> runtime({}, options);
/// \endcode
template <class... Backends>
class BackendOptions {
 public:
  template <class B>
  backend_options_t<B>& get() {
    static_assert((std::is_same_v<B, Backends> || ...),
                  "kiln: BackendOptions::get<B>() names a backend this Runtime does not have");
    return std::get<index_of<B>()>(values_);
  }
  template <class B>
  const backend_options_t<B>& get() const {
    static_assert((std::is_same_v<B, Backends> || ...),
                  "kiln: BackendOptions::get<B>() names a backend this Runtime does not have");
    return std::get<index_of<B>()>(values_);
  }

 private:
  template <class B>
  static constexpr std::size_t index_of() {
    std::size_t index = 0, found = 0;
    ((std::is_same_v<B, Backends> ? (found = index, ++index) : ++index), ...);
    return found;
  }
  std::tuple<backend_options_t<Backends>...> values_;
};

}  // namespace kiln
