// SPDX-License-Identifier: Apache-2.0
// The engine compiled once: the optimizer, the loader and execution, for programs built with
// KILN_COMPILED_LIBRARY=1, whose headers only declare them (kiln/detail/compilation.hpp).
#define KILN_BUILDING_LIBRARY 1
#include "kiln/optimizer/optimizer.hpp"
#include "kiln/runtime/runtime.hpp"
