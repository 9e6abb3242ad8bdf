// SPDX-License-Identifier: Apache-2.0
// The dispatching build: Neon kernels compiled for several x86 instruction sets, one chosen at run time.
// neon_backend.hpp includes this with KILN_NEON_DISPATCH set.
#pragma once

#include <cstdlib>
#include <string_view>

#include <xsimd/xsimd.hpp>

#include "kiln/backends/workload_table.hpp"

#if !(defined(__x86_64__) || defined(_M_X64))
#error "kiln: the dispatching NeonBackend build is for x86-64; elsewhere the compile target's kernels are all there is"
#endif

namespace kiln {
struct NeonBackend;
}  // namespace kiln

namespace kiln::neon::dispatch {

/// NeonBackend's workloads compiled for one instruction set (src/neon_dispatch/isa_kernels.cpp,
/// compiled once per set).
struct IsaKernels {
  std::string_view isa;  ///< xsimd's name of the instruction set
  WorkloadTable table;
};

/// The instruction sets compiled in, by the names KILN_NEON_ISA takes: xsimd's architectures, and
/// AVX-512 with VNNI, which xsimd 8.1 does not know (only the int8 kernels differ: Int8Dot).
using sse2 = xsimd::sse2;
using avx2 = xsimd::fma3<xsimd::avx2>;
using avx512 = xsimd::avx512bw;
struct avx512vnni {};

template <class Arch>
const IsaKernels& isa_kernels();
template <>
const IsaKernels& isa_kernels<sse2>();
template <>
const IsaKernels& isa_kernels<avx2>();
template <>
const IsaKernels& isa_kernels<avx512>();
template <>
const IsaKernels& isa_kernels<avx512vnni>();

/// Whether this CPU has AVX512-VNNI (vpdpbusd), which xsimd 8.1 does not detect.
inline bool cpu_has_avx512_vnni() {
#if defined(__GNUC__)
  return __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

/// Chooses the kernels: those named by the environment variable KILN_NEON_ISA (sse2, avx2, avx512 or
/// avx512vnni, for tests and benchmarks), else the widest set this CPU runs.
inline Expected<const IsaKernels*> choose_kernels(const char* forced) {
  const auto cpu = xsimd::available_architectures();
  struct Candidate {
    std::string_view name;
    bool available;
    const IsaKernels& (*kernels)();
  };
  const Candidate candidates[] = {{"avx512vnni", cpu.avx512bw != 0 && cpu_has_avx512_vnni(), &isa_kernels<avx512vnni>},
                                  {"avx512", cpu.avx512bw != 0, &isa_kernels<avx512>},
                                  {"avx2", cpu.fma3_avx2 != 0, &isa_kernels<avx2>},
                                  {"sse2", cpu.sse2 != 0, &isa_kernels<sse2>}};
  for (const Candidate& c : candidates) {
    if (forced != nullptr && c.name != forced) continue;
    if (c.available) return &c.kernels();
    return Status::error(ErrorCode::Unsupported, "KILN_NEON_ISA=", c.name, " names an instruction set this CPU lacks");
  }
  if (forced != nullptr)
    return Status::error(ErrorCode::InvalidArgument, "KILN_NEON_ISA=", forced,
                         " is not one of the compiled-in instruction sets: avx512vnni, avx512, avx2, sse2");
  return Status::error(ErrorCode::Unsupported, "NeonBackend needs at least SSE2");
}

/// The kernels every NeonBackend workload of this process uses, chosen on first use.
inline const Expected<const IsaKernels*>& selected_kernels() {
  static const Expected<const IsaKernels*> chosen = choose_kernels(std::getenv("KILN_NEON_ISA"));
  return chosen;
}

/// Whether a set was chosen; when not, NeonBackend is not available and selected_kernels() says why.
inline bool kernels_available() { return selected_kernels().has_value(); }

}  // namespace kiln::neon::dispatch

namespace kiln {

/// In the dispatching build, NeonBackend's workloads are those of the chosen instruction set.
template <>
inline const WorkloadTable& compiled_workload_table<NeonBackend>() {
  static constexpr WorkloadTable none{};
  const auto& chosen = neon::dispatch::selected_kernels();
  return chosen.has_value() ? (*chosen)->table : none;
}

}  // namespace kiln
