// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels: Activation, ElementwiseBinary, ElementwiseUnary, BatchNormalization. One work-item per
// output element.

__kernel void activation(__global const float* x, __global float* y, int function, float a, float b) {
  const uint i = get_global_id(0);
  y[i] = kiln_activate(x[i], function, a, b);
}

// Values of ops::BinaryOperation.
inline float binary(int op, float a, float b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return isnan(a) || isnan(b) ? NAN : fmax(a, b);  // numpy maximum propagates NaN
    case 5: return isnan(a) || isnan(b) ? NAN : fmin(a, b);
    default: return pow(a, b);
  }
}

__kernel void binary_same_shape(__global const float* a, __global const float* b, __global float* y, int op,
                                int function, float fa, float fb) {
  const uint i = get_global_id(0);
  y[i] = kiln_activate(binary(op, a[i], b[i]), function, fa, fb);
}

// numpy broadcasting: a_strides and b_strides are 0 along the dimensions an input is broadcast in.
__kernel void binary_broadcast(__global const float* a, __global const float* b, __global float* y, uint8 dims,
                               int8 a_strides, int8 b_strides, int op, int function, float fa, float fb) {
  const uint i = get_global_id(0);
  const float value = binary(op, a[kiln_offset(i, dims, a_strides)], b[kiln_offset(i, dims, b_strides)]);
  y[i] = kiln_activate(value, function, fa, fb);
}

// Values of ops::UnaryOperation.
__kernel void unary(__global const float* x, __global float* y, int op) {
  const uint i = get_global_id(0);
  const float v = x[i];
  float r;
  switch (op) {
    case 0: r = fabs(v); break;
    case 1: r = -v; break;
    case 2: r = exp(v); break;
    case 3: r = log(v); break;
    case 4: r = sqrt(v); break;
    case 5: r = 1.0f / sqrt(v); break;
    case 6: r = 1.0f / v; break;
    default: r = erf(v); break;
  }
  y[i] = r;
}

// Channels are the innermost dimension.
__kernel void batch_normalization(__global const float* x, __global const float* mean, __global const float* variance,
                                  __global const float* beta, __global const float* gamma, __global float* y,
                                  uint channels, float epsilon) {
  const uint i = get_global_id(0);
  const uint c = i % channels;
  y[i] = gamma[c] * (x[i] - mean[c]) / sqrt(variance[c] + epsilon) + beta[c];
}
