// SPDX-License-Identifier: Apache-2.0
// A shared inline function, kept out of line so that each object emits its own copy: a loop the
// compiler vectorises with the wider set's instructions (vpmaddwd with AVX2, sdot with the Arm dot
// product).
#pragma once

#include <cstdint>
#include <vector>

[[gnu::noinline]] inline std::int32_t sum_of_squares(const std::vector<std::int8_t>& v) {
  std::int32_t sum = 0;
  for (std::int8_t x : v) sum += x * x;
  return sum;
}
