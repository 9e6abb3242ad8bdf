// SPDX-License-Identifier: Apache-2.0
// NeonBackend's workloads compiled once for a whole program: part of libkiln, which programs
// built with KILN_COMPILED_LIBRARY=1 (Meson: -Dcompiled_library=true) link instead of compiling
// the workloads in every translation unit (docs/decisions/0012).
#if KILN_COMPILED_LIBRARY
#error "libkiln itself is compiled without KILN_COMPILED_LIBRARY: it is where the workloads are"
#endif
#include "kiln/backends/neon/neon_backend.hpp"
#include "kiln/backends/workload_table.hpp"

template <>
const kiln::WorkloadTable& kiln::compiled_workload_table<kiln::NeonBackend>() {
  static constexpr WorkloadTable table = detail::table_of<NeonBackend, AllOps>();
  return table;
}
