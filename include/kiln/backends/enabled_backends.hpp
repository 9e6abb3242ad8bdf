// SPDX-License-Identifier: Apache-2.0
// The backends this build of kiln has (config.hpp: KILN_WITH_NEON, KILN_WITH_CL), as one type list.
#pragma once

#include "kiln/backends/ref/ref_backend.hpp"
#include "kiln/config.hpp"
#if KILN_WITH_NEON
#include "kiln/backends/neon/neon_backend.hpp"
#endif
#if KILN_WITH_CL
#include "kiln/backends/cl/cl_backend.hpp"
#endif

namespace kiln {

namespace detail {
template <class... Lists>
struct concat;
template <class... Ts>
struct concat<TypeList<Ts...>> {
  using type = TypeList<Ts...>;
};
template <class... Ts, class... Us, class... Rest>
struct concat<TypeList<Ts...>, TypeList<Us...>, Rest...> : concat<TypeList<Ts..., Us...>, Rest...> {};
}  // namespace detail

/// Every backend compiled into this build, in the order a Runtime prefers them: the GPU, the SIMD
/// CPU backend, and RefBackend last. Code that should use whatever a build has names this list
/// (or DefaultRuntime) instead of testing KILN_WITH_* itself.
using enabled_backends = typename detail::concat<
#if KILN_WITH_CL
    TypeList<ClBackend>,
#endif
#if KILN_WITH_NEON
    TypeList<NeonBackend>,
#endif
    TypeList<RefBackend>>::type;

}  // namespace kiln
