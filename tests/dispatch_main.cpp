// SPDX-License-Identifier: Apache-2.0
// Runner of the op tests in the dispatching NeonBackend build: reports the instruction set that
// KILN_NEON_ISA (or the CPU) chose, skips (exit status 77) where this CPU lacks the forced one, and
// fails where KILN_TEST_EXPECT_ISA names another set than the one chosen (the tests of run-time
// detection, under QEMU CPU models with and without a feature).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/backends/neon/neon_backend.hpp"

int main(int argc, char* argv[]) {
  const auto& kernels = kiln::neon::dispatch::selected_kernels();
  if (!kernels.has_value()) {
    std::printf("skipped: %s\n", kernels.status().message().c_str());
    return 77;
  }
  const std::string isa((*kernels)->isa);
  std::printf("NeonBackend kernels: %s\n", isa.c_str());
  if (const char* expected = std::getenv("KILN_TEST_EXPECT_ISA"); expected != nullptr && isa != expected) {
    std::printf("expected the kernels %s on this CPU\n", expected);
    return 1;
  }
  return Catch::Session().run(argc, argv);
}
