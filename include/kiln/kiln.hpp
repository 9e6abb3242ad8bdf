// SPDX-License-Identifier: Apache-2.0
// The umbrella header: the whole public API and every backend this build was configured with.
#pragma once

#include "kiln/backends/enabled_backends.hpp"
#include "kiln/config.hpp"
#include "kiln/core/status.hpp"
#include "kiln/core/tensor.hpp"
#include "kiln/graph/network.hpp"
#include "kiln/memory/planners.hpp"
#include "kiln/optimizer/optimizer.hpp"
#include "kiln/runtime/arena_tensors.hpp"
#include "kiln/runtime/runtime.hpp"

namespace kiln {

namespace detail {
template <class Set, class Backends>
struct default_runtime;
template <class Set, class... Bs>
struct default_runtime<Set, TypeList<Bs...>> {
  using type = Runtime<Set, Bs...>;
};
}  // namespace detail

/// A Runtime over every backend this build has (enabled_backends), for the ops of Set:
/// `kiln::DefaultRuntimeFor<kiln::OpSet<...>>`. Its optimize() takes the same configuration.
template <class Set>
using DefaultRuntimeFor = typename detail::default_runtime<Set, enabled_backends>::type;

/// A Runtime over every backend this build has, for every op.
using DefaultRuntime = DefaultRuntimeFor<AllOps>;

}  // namespace kiln
