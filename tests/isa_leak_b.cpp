// SPDX-License-Identifier: Apache-2.0
// The baseline half of the program described in isa_leak_a.cpp.
#include <vector>

float sum_of_squares_avx2(const std::vector<float>& v);

int main() { return sum_of_squares_avx2(std::vector<float>(100, 1.0f)) == 100.0f ? 0 : 1; }
