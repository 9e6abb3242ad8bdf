// SPDX-License-Identifier: Apache-2.0
// With isa_leak_b.cpp: the mistake tests/check_isa_symbols.py exists to catch. This file is compiled
// with -mavx2, so the shared inline function it emits holds AVX code, which every other object
// calling that function would run too; the `isa_leak` test expects the check to fail on this program.
#include "isa_leak.hpp"

float sum_of_squares_avx2(const std::vector<float>& v) { return sum_of_squares(v); }
