// SPDX-License-Identifier: Apache-2.0
// With isa_leak_b.cpp: the mistake tests/check_isa_symbols.py exists to catch. This file is compiled
// with a wider instruction set (-mavx2; -march=armv8.2-a+dotprod+fp16), so the shared inline function it
// emits holds that set's code, which every other object calling that function would run too; the
// `isa_leak` test expects the check to fail on this program.
#include "isa_leak.hpp"

std::int32_t sum_of_squares_wide(const std::vector<std::int8_t>& v) { return sum_of_squares(v); }
