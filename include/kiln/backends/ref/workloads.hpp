// SPDX-License-Identifier: Apache-2.0
// Every RefBackend workload: the list of reference op files, written once (ref_backend.hpp includes it).
#pragma once

#include "kiln/backends/ref/ops/activation.hpp"
#include "kiln/backends/ref/ops/batch_mat_mul.hpp"
#include "kiln/backends/ref/ops/batch_normalization.hpp"
#include "kiln/backends/ref/ops/cast.hpp"
#include "kiln/backends/ref/ops/concat.hpp"
#include "kiln/backends/ref/ops/convolution2d.hpp"
#include "kiln/backends/ref/ops/depthwise_convolution2d.hpp"
#include "kiln/backends/ref/ops/elementwise_binary.hpp"
#include "kiln/backends/ref/ops/elementwise_unary.hpp"
#include "kiln/backends/ref/ops/fully_connected.hpp"
#include "kiln/backends/ref/ops/gather.hpp"
#include "kiln/backends/ref/ops/mem_copy.hpp"
#include "kiln/backends/ref/ops/pad.hpp"
#include "kiln/backends/ref/ops/pooling2d.hpp"
#include "kiln/backends/ref/ops/quantize.hpp"
#include "kiln/backends/ref/ops/reduce.hpp"
#include "kiln/backends/ref/ops/reshape.hpp"
#include "kiln/backends/ref/ops/resize.hpp"
#include "kiln/backends/ref/ops/softmax.hpp"
#include "kiln/backends/ref/ops/split.hpp"
#include "kiln/backends/ref/ops/strided_slice.hpp"
#include "kiln/backends/ref/ops/transpose.hpp"
#include "kiln/backends/ref/ops/transpose_convolution2d.hpp"
// After every op: Float16 runs the Float32 workloads above.
#include "kiln/backends/ref/float16.hpp"
