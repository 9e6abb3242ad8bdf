// SPDX-License-Identifier: Apache-2.0
// Runner of the op tests in the dispatching NeonBackend build: reports the instruction set that
// KILN_NEON_ISA chose, and skips (exit status 77) where this CPU lacks it.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "kiln/backends/neon/neon_backend.hpp"

int main(int argc, char* argv[]) {
  const auto& kernels = kiln::neon::dispatch::selected_kernels();
  if (!kernels.has_value()) {
    std::printf("skipped: %s\n", kernels.status().message().c_str());
    return 77;
  }
  std::printf("NeonBackend kernels: %s\n", std::string((*kernels)->isa).c_str());
  return Catch::Session().run(argc, argv);
}
