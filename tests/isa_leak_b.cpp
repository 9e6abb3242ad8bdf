// SPDX-License-Identifier: Apache-2.0
// The baseline half of the program described in isa_leak_a.cpp.
#include <cstdint>
#include <vector>

std::int32_t sum_of_squares_wide(const std::vector<std::int8_t>& v);

int main() { return sum_of_squares_wide(std::vector<std::int8_t>(100, 3)) == 900 ? 0 : 1; }
