// SPDX-License-Identifier: Apache-2.0
// How Neon kernels split work over the context's threads: fixed chunks, so results never depend on them.
#pragma once

#include <algorithm>
#include <cstddef>

#include "kiln/backends/neon/kernel_base.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Elements per chunk of a streaming kernel: large enough that a chunk outweighs its dispatch,
/// and a multiple of every vector width so that only the last chunk has a tail.
inline constexpr std::size_t stream_chunk = 16384;

/// Calls f(begin, end) over [0, n) in chunks of `chunk`, spread over the context's threads.
/// Chunk bounds depend only on n and chunk, never on the thread count. `cost_per_element`: the
/// work of one element (see Context::parallel_for); a transcendental function costs ~16.
template <class F>
void parallel_chunks(Context& context, std::size_t n, F&& f, std::size_t chunk = stream_chunk,
                     std::size_t cost_per_element = 16) {
  const std::size_t count = (n + chunk - 1) / chunk;
  context.parallel_for(
      count, [&](std::size_t i) { f(i * chunk, std::min(n, (i + 1) * chunk)); }, chunk * cost_per_element);
}

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
