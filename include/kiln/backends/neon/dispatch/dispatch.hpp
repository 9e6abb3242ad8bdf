// SPDX-License-Identifier: Apache-2.0
// The dispatching build: Neon kernels compiled for several x86 instruction sets, one chosen at run time.
#pragma once

#include <cstdlib>
#include <memory>
#include <span>
#include <string_view>
#include <tuple>

#include <xsimd/xsimd.hpp>

#include "kiln/backends/neon/kernel_list.hpp"
#include "kiln/backends/neon/neon_kernel.hpp"

#if !(defined(__x86_64__) || defined(_M_X64))
#error "kiln: the dispatching NeonBackend build is for x86-64; elsewhere the compile target's kernels are all there is"
#endif

namespace kiln::neon::dispatch {

/// A kernel of whichever instruction set was chosen, behind one virtual call per layer run.
template <class Op>
class AnyKernel {
 public:
  virtual ~AnyKernel() = default;
  virtual void run(std::span<const ConstTensor> inputs, std::span<const Tensor> outputs, Context& context) const = 0;
};

/// What one instruction set's build offers for one op.
template <class Op>
struct KernelEntry {
  Status (*is_supported)(const WorkloadInfo<Op>& info);
  std::unique_ptr<AnyKernel<Op>> (*create)(const WorkloadInfo<Op>& info);
};

template <class... Ops>
using KernelEntries = std::tuple<KernelEntry<Ops>...>;

/// Every kernel of one instruction set (defined in isa_kernels.cpp, compiled once per set).
struct KernelTable {
  std::string_view isa;  ///< xsimd's name of the instruction set
  apply_t<KernelEntries, kernel_ops> entries;

  template <class Op>
  const KernelEntry<Op>& get() const { return std::get<KernelEntry<Op>>(entries); }
};

/// The instruction sets compiled in, by the names KILN_NEON_ISA takes.
using sse2 = xsimd::sse2;
using avx2 = xsimd::fma3<xsimd::avx2>;
using avx512 = xsimd::avx512bw;

template <class Arch>
const KernelTable& kernel_table();
template <> const KernelTable& kernel_table<sse2>();
template <> const KernelTable& kernel_table<avx2>();
template <> const KernelTable& kernel_table<avx512>();

/// Chooses the kernels: those named by the environment variable KILN_NEON_ISA (sse2, avx2 or avx512,
/// for tests and benchmarks), else the widest set this CPU runs.
inline Expected<const KernelTable*> choose_kernels(const char* forced) {
  const auto cpu = xsimd::available_architectures();
  struct Candidate {
    std::string_view name;
    bool available;
    const KernelTable& (*table)();
  };
  const Candidate candidates[] = {{"avx512", cpu.avx512bw != 0, &kernel_table<avx512>},
                                  {"avx2", cpu.fma3_avx2 != 0, &kernel_table<avx2>},
                                  {"sse2", cpu.sse2 != 0, &kernel_table<sse2>}};
  for (const Candidate& c : candidates) {
    if (forced != nullptr && c.name != forced) continue;
    if (c.available) return &c.table();
    return Status::error(ErrorCode::Unsupported, "KILN_NEON_ISA=", c.name, " names an instruction set this CPU lacks");
  }
  if (forced != nullptr)
    return Status::error(ErrorCode::InvalidArgument, "KILN_NEON_ISA=", forced,
                         " is not one of the compiled-in instruction sets: avx512, avx2, sse2");
  return Status::error(ErrorCode::Unsupported, NeonBackend::id, " needs at least SSE2");
}

/// The kernels every NeonBackend workload of this process uses, chosen on first use.
inline const Expected<const KernelTable*>& selected_kernels() {
  static const Expected<const KernelTable*> chosen = choose_kernels(std::getenv("KILN_NEON_ISA"));
  return chosen;
}

}  // namespace kiln::neon::dispatch

namespace kiln {

/// NeonBackend's workload in the dispatching build: the chosen instruction set's kernel.
template <class Op>
  requires neon::has_kernel<Op>
struct Workload<Op, NeonBackend> {
  static Status is_supported(const WorkloadInfo<Op>& info) {
    const auto& kernels = neon::dispatch::selected_kernels();
    if (!kernels.has_value()) return kernels.status();
    return (*kernels)->template get<Op>().is_supported(info);
  }

  explicit Workload(const WorkloadInfo<Op>& info)
      : kernel_((*neon::dispatch::selected_kernels())->template get<Op>().create(info)) {}

  void run(std::span<const ConstTensor> inputs, std::span<const Tensor> outputs, neon::Context& context) const {
    kernel_->run(inputs, outputs, context);
  }

 private:
  std::unique_ptr<neon::dispatch::AnyKernel<Op>> kernel_;
};

}  // namespace kiln
