// SPDX-License-Identifier: Apache-2.0
// ClBackend with every OpenCL workload: include this to run networks on an OpenCL device.
#pragma once

#include "kiln/backends/cl/cl_kernel.hpp"
#include "kiln/backends/cl/ops/activation.hpp"
#include "kiln/backends/cl/ops/batch_mat_mul.hpp"
#include "kiln/backends/cl/ops/batch_normalization.hpp"
#include "kiln/backends/cl/ops/concat.hpp"
#include "kiln/backends/cl/ops/convolution2d.hpp"
#include "kiln/backends/cl/ops/depthwise_convolution2d.hpp"
#include "kiln/backends/cl/ops/elementwise_binary.hpp"
#include "kiln/backends/cl/ops/elementwise_unary.hpp"
#include "kiln/backends/cl/ops/fully_connected.hpp"
#include "kiln/backends/cl/ops/gather.hpp"
#include "kiln/backends/cl/ops/mem_copy.hpp"
#include "kiln/backends/cl/ops/pad.hpp"
#include "kiln/backends/cl/ops/pooling2d.hpp"
#include "kiln/backends/cl/ops/reduce.hpp"
#include "kiln/backends/cl/ops/reshape.hpp"
#include "kiln/backends/cl/ops/resize.hpp"
#include "kiln/backends/cl/ops/softmax.hpp"
#include "kiln/backends/cl/ops/split.hpp"
#include "kiln/backends/cl/ops/strided_slice.hpp"
#include "kiln/backends/cl/ops/transpose.hpp"
#include "kiln/backends/cl/ops/transpose_convolution2d.hpp"

static_assert(kiln::Backend<kiln::ClBackend>);
