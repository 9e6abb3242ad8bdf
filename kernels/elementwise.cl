// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels: Activation, ElementwiseBinary, ElementwiseUnary, BatchNormalization. One work-item per
// output element. Built with QUANTIZED (uchar or char), the int8 ElementwiseBinary instead.

#ifndef QUANTIZED

__kernel void activation(__global const REAL* x, __global REAL* y, int function, float a, float b) {
  const uint i = get_global_id(0);
  STORE(y, i, kiln_activate(LOAD(x, i), function, a, b));
}

// int8 Activation: each input byte, whichever 8-bit type it is, through the layer's 256-entry table
// (quantized::ActivationTable); the program needs no QUANTIZED build for it.
__kernel void int8_table(__global const uchar* x, __global const uchar* table, __global uchar* y) {
  const uint i = get_global_id(0);
  y[i] = table[x[i]];
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
    case 6: return pow(a, b);
    case 7: return a >= 0.0f ? a : a * b;  // PRelu
    case 8: {  // Mod: the remainder takes the divisor's sign
      const float r = fmod(a, b);
      return r != 0.0f && (r < 0.0f) != (b < 0.0f) ? r + b : r;
    }
    default: return fmod(a, b);  // FMod
  }
}

__kernel void binary_same_shape(__global const REAL* a, __global const REAL* b, __global REAL* y, int op,
                                int function, float fa, float fb) {
  const uint i = get_global_id(0);
  STORE(y, i, kiln_activate(binary(op, LOAD(a, i), LOAD(b, i)), function, fa, fb));
}

// numpy broadcasting: a_strides and b_strides are 0 along the dimensions an input is broadcast in.
__kernel void binary_broadcast(__global const REAL* a, __global const REAL* b, __global REAL* y, uint8 dims,
                               int8 a_strides, int8 b_strides, int op, int function, float fa, float fb) {
  const uint i = get_global_id(0);
  const float value = binary(op, LOAD(a, kiln_offset(i, dims, a_strides)), LOAD(b, kiln_offset(i, dims, b_strides)));
  STORE(y, i, kiln_activate(value, function, fa, fb));
}

// Values of ops::UnaryOperation.
__kernel void unary(__global const REAL* x, __global REAL* y, int op) {
  const uint i = get_global_id(0);
  const float v = LOAD(x, i);
  float r;
  switch (op) {
    case 0: r = fabs(v); break;
    case 1: r = -v; break;
    case 2: r = exp(v); break;
    case 3: r = log(v); break;
    case 4: r = sqrt(v); break;
    case 5: r = 1.0f / sqrt(v); break;
    case 6: r = 1.0f / v; break;
    case 7: r = erf(v); break;
    case 8: r = sin(v); break;
    case 9: r = cos(v); break;
    case 10: r = tan(v); break;
    case 11: r = asin(v); break;
    case 12: r = acos(v); break;
    case 13: r = atan(v); break;
    case 14: r = sinh(v); break;
    case 15: r = cosh(v); break;
    case 16: r = asinh(v); break;
    case 17: r = acosh(v); break;
    case 18: r = atanh(v); break;
    case 19: r = v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v; break;  // 0, -0 and NaN stay themselves
    case 20: r = floor(v); break;
    case 21: r = ceil(v); break;
    default: r = rint(v); break;  // halves to even
  }
  STORE(y, i, r);
}

// Channels are the innermost dimension.
__kernel void batch_normalization(__global const REAL* x, __global const REAL* mean, __global const REAL* variance,
                                  __global const REAL* beta, __global const REAL* gamma, __global REAL* y,
                                  uint channels, float epsilon) {
  const uint i = get_global_id(0);
  const uint c = i % channels;
  STORE(y, i, LOAD(gamma, c) * (LOAD(x, i) - LOAD(mean, c)) / sqrt(LOAD(variance, c) + epsilon) + LOAD(beta, c));
}
#else
// int8 Add and Sub (op 0, 1): each input's (q - z) x 2^20 rescaled to a common scale by its stage,
// the two added or subtracted; Mul (op 2): (qa - za)(qb - zb); then the output stage
// (quantized::ElementwiseStage). A stage is (multiplier, right shift). numpy broadcasting as above.
__kernel void int8_binary(__global const QUANTIZED* a, __global const QUANTIZED* b, __global QUANTIZED* y, uint8 dims,
                          int8 a_strides, int8 b_strides, int op, int a_zero, int b_zero, int2 a_stage, int2 b_stage,
                          int2 out_stage, int y_zero, int lo, int hi) {
  const uint i = get_global_id(0);
  const int da = (int)a[kiln_offset(i, dims, a_strides)] - a_zero;
  const int db = (int)b[kiln_offset(i, dims, b_strides)] - b_zero;
  int acc = da * db;
  if (op != 2) {
    const int ra = kiln_requantize(da * (1 << 20), a_stage.x, a_stage.y, 0, INT_MIN, INT_MAX);
    const int rb = kiln_requantize(db * (1 << 20), b_stage.x, b_stage.y, 0, INT_MIN, INT_MAX);
    acc = op == 0 ? ra + rb : ra - rb;
  }
  y[i] = (QUANTIZED)kiln_requantize(acc, out_stage.x, out_stage.y, y_zero, lo, hi);
}
#endif
