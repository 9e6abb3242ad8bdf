// SPDX-License-Identifier: Apache-2.0
// NeonBackend with every Neon workload: include this to run networks on the SIMD CPU backend.
#pragma once

#include "kiln/backends/neon/neon_kernel.hpp"
#include "kiln/backends/neon/ops/activation.hpp"
#include "kiln/backends/neon/ops/batch_normalization.hpp"
#include "kiln/backends/neon/ops/convolution2d.hpp"
#include "kiln/backends/neon/ops/depthwise_convolution2d.hpp"
#include "kiln/backends/neon/ops/elementwise_binary.hpp"
#include "kiln/backends/neon/ops/elementwise_unary.hpp"
#include "kiln/backends/neon/ops/fully_connected.hpp"
#include "kiln/backends/neon/ops/pooling2d.hpp"
#include "kiln/backends/neon/ops/softmax.hpp"
#include "kiln/backends/ref/ref_backend.hpp"

static_assert(kiln::Backend<kiln::NeonBackend>);
static_assert(kiln::all_ops_supported_v<kiln::NeonBackend>);
