// SPDX-License-Identifier: Apache-2.0
// ClBackend's workloads compiled once for a whole program: part of libkiln, which programs
// built with KILN_COMPILED_LIBRARY=1 (Meson: -Dcompiled_library=true) link instead of compiling
// the workloads in every translation unit (docs/decisions/0012).
#if KILN_COMPILED_LIBRARY
#error "libkiln itself is compiled without KILN_COMPILED_LIBRARY: it is where the workloads are"
#endif
#include "kiln/backends/cl/cl_backend.hpp"
#include "kiln/backends/workload_table.hpp"

template <>
const kiln::WorkloadTable& kiln::compiled_workload_table<kiln::ClBackend>() {
  static constexpr WorkloadTable table = detail::table_of<ClBackend, AllOps>();
  return table;
}
