// SPDX-License-Identifier: Apache-2.0
// The umbrella header: the whole public API and every backend this build was configured with.
#pragma once

#include "kiln/config.hpp"
#include "kiln/core/status.hpp"
#include "kiln/core/tensor.hpp"
#include "kiln/graph/network.hpp"
#include "kiln/memory/planners.hpp"
#include "kiln/optimizer/optimizer.hpp"
#include "kiln/runtime/arena_tensors.hpp"
#include "kiln/runtime/runtime.hpp"
#include "kiln/backends/ref/ref_backend.hpp"
#if KILN_WITH_NEON
#include "kiln/backends/neon/neon_backend.hpp"
#endif
#if KILN_WITH_CL
#include "kiln/backends/cl/cl_backend.hpp"
#endif
