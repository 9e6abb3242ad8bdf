// SPDX-License-Identifier: Apache-2.0
// Softmax, LayerNormalization and Reduce: one work-item per independent row, which it walks in full.

// Softmax over an axis of `length` elements `inner` apart: dimension 0 the inner index, 1 the outer.
__kernel void softmax(__global const REAL* x, __global REAL* y, uint length, float beta, int log_softmax) {
  const uint i = get_global_id(0), o = get_global_id(1);
  const uint inner = get_global_size(0);
  const uint base = o * length * inner + i;
  float largest = -INFINITY;
  for (uint j = 0; j < length; ++j) largest = fmax(largest, beta * LOAD(x, base + j * inner));
  float sum = 0.0f;
  for (uint j = 0; j < length; ++j) sum += exp(beta * LOAD(x, base + j * inner) - largest);
  const float log_sum = log(sum);
  for (uint j = 0; j < length; ++j) {
    const float shifted = beta * LOAD(x, base + j * inner) - largest;
    STORE(y, base + j * inner, log_softmax ? shifted - log_sum : exp(shifted) / sum);
  }
}

// LayerNormalization: one work-item per row of `length` elements, which it walks three times: the
// mean, the variance (two passes, as RefBackend), then (x - mean) / sqrt(variance + epsilon) x scale
// (+ bias). With `statistics`, each row's mean and 1 / sqrt(variance + epsilon) too.
__kernel void layer_normalization(__global const REAL* x, __global const REAL* scale, __global const REAL* bias,
                                  __global REAL* y, __global REAL* means, __global REAL* inverses, uint length,
                                  float epsilon, int has_bias, int statistics) {
  const uint first = get_global_id(0) * length;
  // The sum taken from the row's first element: one float chain over a long row far from zero
  // would lose the mean's last digits (768 values near 40 lose 4e-5 of a unit variance).
  const float origin = LOAD(x, first);
  float sum = 0.0f;
  for (uint i = 1; i < length; ++i) sum += LOAD(x, first + i) - origin;
  const float mean = origin + sum / (float)length;
  float squares = 0.0f;
  for (uint i = 0; i < length; ++i) {
    const float d = LOAD(x, first + i) - mean;
    squares = fma(d, d, squares);
  }
  const float inverse = 1.0f / sqrt(squares / (float)length + epsilon);
  if (statistics) {
    STORE(means, get_global_id(0), mean);
    STORE(inverses, get_global_id(0), inverse);
  }
  for (uint i = 0; i < length; ++i)
    STORE(y, first + i, (LOAD(x, first + i) - mean) * inverse * LOAD(scale, i) + (has_bias ? LOAD(bias, i) : 0.0f));
}

// Reduce: output element o starts at kiln_offset(o, kept_dims, kept_strides) in x and gathers the
// `count` elements kiln_offset(r, reduced_dims, reduced_strides) from there. Values of
// ops::ReduceOperation: 0 sum, 1 mean, 2 max, 3 min, 4 product; max and min propagate NaN.
__kernel void reduce(__global const REAL* x, __global REAL* y, uint8 kept_dims, int8 kept_strides,
                     uint8 reduced_dims, int8 reduced_strides, uint count, int op) {
  const uint o = get_global_id(0);
  __global const REAL* base = x + kiln_offset(o, kept_dims, kept_strides);
  float acc = op == 2 ? -INFINITY : op == 3 ? INFINITY : op == 4 ? 1.0f : 0.0f;
  for (uint r = 0; r < count; ++r) {
    const float v = LOAD(base, kiln_offset(r, reduced_dims, reduced_strides));
    if (op <= 1) acc += v;
    else if (op == 2) acc = (isnan(v) || v > acc) ? v : acc;
    else if (op == 3) acc = (isnan(v) || v < acc) ? v : acc;
    else acc *= v;
  }
  STORE(y, o, op == 1 ? acc / (float)count : acc);
}

#ifdef QUANTIZED
// int8 Softmax (quantized::SoftmaxStage), rows as softmax's: exponentials[d] = round(2^22 exp(-beta sx d))
// for an element d below its row's largest; its probability floor(e 2^30 / sum) in fixed point,
// requantized by the output stage (multiplier, right shift).
__kernel void int8_softmax(__global const QUANTIZED* x, __global QUANTIZED* y, __global const uint* exponentials,
                           uint length, int2 stage, int y_zero, int lo, int hi) {
  const uint i = get_global_id(0), o = get_global_id(1);
  const uint inner = get_global_size(0);
  const uint base = o * length * inner + i;
  int largest = x[base];
  for (uint j = 1; j < length; ++j) largest = max(largest, (int)x[base + j * inner]);
  ulong sum = 0;
  for (uint j = 0; j < length; ++j) sum += exponentials[largest - x[base + j * inner]];
  for (uint j = 0; j < length; ++j) {
    const ulong e = exponentials[largest - x[base + j * inner]];
    y[base + j * inner] = (QUANTIZED)kiln_requantize((long)((e << 30) / sum), stage.x, stage.y, y_zero, lo, hi);
  }
}

// int8 Reduce (quantized::ReduceStage), walked as reduce: the sum of x - zx (Sum, Mean) or its max
// or min, in 64 bits, requantized by the stage (multiplier, right shift); zeros = (zx, zy).
__kernel void int8_reduce(__global const QUANTIZED* x, __global QUANTIZED* y, uint8 kept_dims, int8 kept_strides,
                          uint8 reduced_dims, int8 reduced_strides, uint count, int op, int2 zeros, int2 stage, int lo,
                          int hi) {
  const uint o = get_global_id(0);
  __global const QUANTIZED* base = x + kiln_offset(o, kept_dims, kept_strides);
  long acc = op == 2 ? LONG_MIN : op == 3 ? LONG_MAX : 0;
  for (uint r = 0; r < count; ++r) {
    const long v = (long)base[kiln_offset(r, reduced_dims, reduced_strides)] - zeros.x;
    acc = op <= 1 ? acc + v : op == 2 ? max(acc, v) : min(acc, v);
  }
  y[o] = (QUANTIZED)kiln_requantize(acc, stage.x, stage.y, zeros.y, lo, hi);
}
#endif
