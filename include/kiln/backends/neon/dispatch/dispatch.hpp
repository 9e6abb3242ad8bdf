// SPDX-License-Identifier: Apache-2.0
// The dispatching build: Neon kernels compiled for several instruction sets of x86-64 or aarch64,
// one chosen at run time. neon_backend.hpp includes this with KILN_NEON_DISPATCH set.
#pragma once

#include <array>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include <xsimd/xsimd.hpp>

#include "kiln/backends/workload_table.hpp"

#if defined(__aarch64__)
#include <sys/auxv.h>
#elif !(defined(__x86_64__) || defined(_M_X64))
#error \
    "kiln: the dispatching NeonBackend build is for x86-64 and aarch64; elsewhere the compile target's kernels are all there is"
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
  bool float16_arithmetic = false;  ///< whether its Float16 layers compute in Float16 (KILN_NEON_HALF_ARITHMETIC)
};

/// The instruction sets compiled in, by the names KILN_NEON_ISA takes: xsimd's architectures, and
/// those xsimd 8.1 does not know, which differ only in the int8 kernels (Int8Dot): AVX-512 with
/// VNNI, aarch64 with the dot product and half-precision arithmetic.
#if defined(__aarch64__)
using asimd = xsimd::neon64;
struct dotprod_fp16 {};
#else
using sse2 = xsimd::sse2;
using avx2 = xsimd::fma3<xsimd::avx2>;
using avx512 = xsimd::avx512bw;
struct avx512vnni {};
#endif

template <class Arch>
const IsaKernels& isa_kernels();
#if defined(__aarch64__)
template <>
const IsaKernels& isa_kernels<asimd>();
template <>
const IsaKernels& isa_kernels<dotprod_fp16>();
#else
template <>
const IsaKernels& isa_kernels<sse2>();
template <>
const IsaKernels& isa_kernels<avx2>();
template <>
const IsaKernels& isa_kernels<avx512>();
template <>
const IsaKernels& isa_kernels<avx512vnni>();
#endif

/// A compiled-in set, and whether this CPU (and OS) runs it.
struct Candidate {
  std::string_view name;
  bool available;
  const IsaKernels& (*kernels)();
};

#if defined(__aarch64__)
/// aarch64's sets for a CPU whose AT_HWCAP is `hwcap`, widest first: armv8.2-a's dot product (SDOT,
/// asimddp) with its half-precision arithmetic (FMLA on 8 halves, asimdhp and fphp), optional
/// features that the cores with one have both of, in one set; and Advanced SIMD, which every
/// aarch64 CPU has.
inline std::array<Candidate, 2> candidates_for(unsigned long hwcap) {
  constexpr unsigned long required = HWCAP_ASIMDDP | HWCAP_ASIMDHP | HWCAP_FPHP;
  return {{{"dotprod_fp16", (hwcap & required) == required, &isa_kernels<dotprod_fp16>},
           {"asimd", true, &isa_kernels<asimd>}}};
}
inline std::array<Candidate, 2> candidates() { return candidates_for(getauxval(AT_HWCAP)); }
#else
/// Whether this CPU has AVX512-VNNI (vpdpbusd), which xsimd 8.1 does not detect.
inline bool cpu_has_avx512_vnni() {
#if defined(__GNUC__)
  return __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

/// Whether this CPU has F16C (vcvtph2ps, vcvtps2ph), which the AVX2 and AVX-512 sets' Float16
/// conversions use and xsimd 8.1 does not detect. Every CPU with AVX2 has it, but it is a CPUID bit
/// of its own.
inline bool cpu_has_f16c() {
#if defined(__GNUC__)
  return __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

/// x86-64's sets, widest first, as xsimd finds them (and VNNI and F16C as the CPU reports them).
inline std::array<Candidate, 4> candidates() {
  const auto cpu = xsimd::available_architectures();
  const bool f16c = cpu_has_f16c();
  return {{{"avx512vnni", cpu.avx512bw != 0 && f16c && cpu_has_avx512_vnni(), &isa_kernels<avx512vnni>},
           {"avx512", cpu.avx512bw != 0 && f16c, &isa_kernels<avx512>},
           {"avx2", cpu.fma3_avx2 != 0 && f16c, &isa_kernels<avx2>},
           {"sse2", cpu.sse2 != 0, &isa_kernels<sse2>}}};
}
#endif

/// Chooses the kernels among sets listed widest first: the one named `forced` (the environment
/// variable KILN_NEON_ISA, for tests and benchmarks), else the widest this CPU runs.
inline Expected<const IsaKernels*> choose_kernels(std::span<const Candidate> sets, const char* forced) {
  for (const Candidate& c : sets) {
    if (forced != nullptr && c.name != forced) continue;
    if (c.available) return &c.kernels();
    if (forced != nullptr)
      return Status::error(ErrorCode::Unsupported, "KILN_NEON_ISA=", c.name,
                           " names an instruction set this CPU lacks");
  }
  std::string names;
  for (const Candidate& c : sets) names += (names.empty() ? "" : ", ") + std::string(c.name);
  if (forced != nullptr)
    return Status::error(ErrorCode::InvalidArgument, "KILN_NEON_ISA=", forced,
                         " is not one of the compiled-in instruction sets: ", names);
  return Status::error(ErrorCode::Unsupported, "this CPU runs none of NeonBackend's instruction sets: ", names);
}

/// The kernels every NeonBackend workload of this process uses, chosen on first use.
inline const Expected<const IsaKernels*>& selected_kernels() {
  static const Expected<const IsaKernels*> chosen = choose_kernels(candidates(), std::getenv("KILN_NEON_ISA"));
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
