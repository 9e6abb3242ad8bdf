// SPDX-License-Identifier: Apache-2.0
// A shared inline function, kept out of line so that each object emits its own copy.
#pragma once

#include <vector>

[[gnu::noinline]] inline float sum_of_squares(const std::vector<float>& v) {
  float sum = 0.0f;
  for (float x : v) sum += x * x;
  return sum;
}
