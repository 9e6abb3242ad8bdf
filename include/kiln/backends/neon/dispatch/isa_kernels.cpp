// SPDX-License-Identifier: Apache-2.0
// The Neon kernels of one instruction set, for the dispatching build (docs/decisions/0009). Meson
// compiles this file once per set with -DKILN_NEON_DISPATCH=1 and the set's flags:
//   sse2: -msse2    avx2: -mavx2 -mfma    avx512: -mavx512f -mavx512cd -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma
// Built by hand, link the three objects in that order, SSE2 first: where two of them carry a copy
// of the same shared inline function, the linker keeps the first, which every CPU runs.
#include "kiln/backends/neon/dispatch/dispatch.hpp"
#include "kiln/backends/neon/kernels.hpp"

namespace kiln::neon::dispatch {
namespace {

template <class Op>
class KernelOfThisIsa final : public AnyKernel<Op> {
 public:
  explicit KernelOfThisIsa(const WorkloadInfo<Op>& info) : kernel_(info) {}
  void run(std::span<const ConstTensor> inputs, std::span<const Tensor> outputs, Context& context) const override {
    kernel_.run(inputs, outputs, context);
  }

 private:
  Kernel<Op> kernel_;
};

template <class Op>
std::unique_ptr<AnyKernel<Op>> create(const WorkloadInfo<Op>& info) {
  return std::make_unique<KernelOfThisIsa<Op>>(info);
}

template <class... Ops>
KernelTable make_table(TypeList<Ops...>) {
  return {xsimd::default_arch::name(), {KernelEntry<Ops>{&workload_supports<Ops, Kernel<Ops>>, &create<Ops>}...}};
}

}  // namespace

// The compile flags decide which set this is; a mismatch with sse2/avx2/avx512 in dispatch.hpp
// leaves that set's table undefined, a link error that names it.
template <>
const KernelTable& kernel_table<xsimd::default_arch>() {
  static const KernelTable table = make_table(kernel_ops{});
  return table;
}

}  // namespace kiln::neon::dispatch
