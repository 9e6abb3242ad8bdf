// SPDX-License-Identifier: Apache-2.0
// Every Neon kernel, compiled for this translation unit's instruction set (see isa.hpp): the list of
// Neon op files, written once. Ops without a file here run NeonBackend's RefBackend fallback's workload.
#pragma once

#include "kiln/backends/neon/ops/activation.hpp"
#include "kiln/backends/neon/ops/attention.hpp"
#include "kiln/backends/neon/ops/batch_mat_mul.hpp"
#include "kiln/backends/neon/ops/batch_normalization.hpp"
#include "kiln/backends/neon/ops/cast.hpp"
#include "kiln/backends/neon/ops/concat.hpp"
#include "kiln/backends/neon/ops/convolution2d.hpp"
#include "kiln/backends/neon/ops/depthwise_convolution2d.hpp"
#include "kiln/backends/neon/ops/elementwise_binary.hpp"
#include "kiln/backends/neon/ops/elementwise_unary.hpp"
#include "kiln/backends/neon/ops/fully_connected.hpp"
#include "kiln/backends/neon/ops/layer_normalization.hpp"
#include "kiln/backends/neon/ops/pad.hpp"
#include "kiln/backends/neon/ops/pooling2d.hpp"
#include "kiln/backends/neon/ops/quantize.hpp"
#include "kiln/backends/neon/ops/recurrent.hpp"
#include "kiln/backends/neon/ops/reduce.hpp"
#include "kiln/backends/neon/ops/resize.hpp"
#include "kiln/backends/neon/ops/softmax.hpp"
#include "kiln/backends/neon/ops/split.hpp"
#include "kiln/backends/neon/ops/strided_slice.hpp"
#include "kiln/backends/neon/ops/transpose.hpp"
#include "kiln/backends/neon/ops/transpose_convolution2d.hpp"
// After every op: Float16 runs the Float32 kernels above.
#include "kiln/backends/neon/float16.hpp"
