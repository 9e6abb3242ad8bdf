// SPDX-License-Identifier: Apache-2.0
// How the dispatching NeonBackend chooses its instruction set, on made-up CPUs: the widest set
// the CPU runs, the one KILN_NEON_ISA forces, and errors that say what is wrong.
#include <catch2/catch.hpp>

#include "kiln/backends/neon/neon_backend.hpp"

namespace {

using kiln::neon::dispatch::Candidate;
using kiln::neon::dispatch::IsaKernels;

const IsaKernels& wide_kernels() {
  static const IsaKernels kernels{"wide", {}};
  return kernels;
}
const IsaKernels& middle_kernels() {
  static const IsaKernels kernels{"middle", {}};
  return kernels;
}
const IsaKernels& narrow_kernels() {
  static const IsaKernels kernels{"narrow", {}};
  return kernels;
}

std::array<Candidate, 3> cpu_with(bool wide, bool middle) {
  return {{{"wide", wide, &wide_kernels}, {"middle", middle, &middle_kernels}, {"narrow", true, &narrow_kernels}}};
}

}  // namespace

TEST_CASE("dispatch chooses the widest instruction set the CPU runs", "[dispatch]") {
  CHECK((*kiln::neon::dispatch::choose_kernels(cpu_with(true, true), nullptr))->isa == "wide");
  // A CPU without the widest set (an x86 one without VNNI, an Arm one without the dot product).
  CHECK((*kiln::neon::dispatch::choose_kernels(cpu_with(false, true), nullptr))->isa == "middle");
  CHECK((*kiln::neon::dispatch::choose_kernels(cpu_with(false, false), nullptr))->isa == "narrow");
}

TEST_CASE("dispatch takes the set KILN_NEON_ISA names, and refuses one the CPU lacks or that is not there",
          "[dispatch]") {
  CHECK((*kiln::neon::dispatch::choose_kernels(cpu_with(true, true), "narrow"))->isa == "narrow");
  const auto lacking = kiln::neon::dispatch::choose_kernels(cpu_with(false, true), "wide");
  REQUIRE_FALSE(lacking.has_value());
  CHECK(lacking.status().message().find("KILN_NEON_ISA=wide names an instruction set this CPU lacks") !=
        std::string::npos);
  const auto unknown = kiln::neon::dispatch::choose_kernels(cpu_with(true, true), "sve2");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.status().message().find("KILN_NEON_ISA=sve2 is not one of the compiled-in instruction sets: wide, "
                                        "middle, narrow") != std::string::npos);
}

#if defined(__aarch64__)
TEST_CASE("aarch64 takes dotprod_fp16 only where AT_HWCAP has the dot product and half-precision arithmetic",
          "[dispatch]") {
  const auto available = [](unsigned long hwcap) { return kiln::neon::dispatch::candidates_for(hwcap)[0].available; };
  CHECK(available(HWCAP_ASIMD | HWCAP_ASIMDDP | HWCAP_ASIMDHP | HWCAP_FPHP));
  CHECK_FALSE(available(HWCAP_ASIMD | HWCAP_ASIMDDP));  // a dot product without Float16 arithmetic
  CHECK_FALSE(available(HWCAP_ASIMD | HWCAP_ASIMDHP | HWCAP_FPHP));
  CHECK_FALSE(available(HWCAP_ASIMD | HWCAP_ASIMDDP | HWCAP_ASIMDHP));  // vector halves, no scalar ones
  CHECK(kiln::neon::dispatch::candidates_for(0)[1].available);          // Advanced SIMD: every aarch64 CPU
}
#endif
