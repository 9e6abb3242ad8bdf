// SPDX-License-Identifier: Apache-2.0
// Helpers shared by every kernel family: ClBackend prepends this file to each family's source.
// OpenCL C 1.2 only.

// The elements of a float layer's tensors: float, or, in a program built with KILN_HALF, binary16
// halves read with vload_half and written with vstore_half_rte. Those are core OpenCL (no
// cl_khr_fp16), so every device runs Float16 layers, and the arithmetic stays in float with one
// rounding per result, to nearest even: RefBackend's Float16 (decision 0024).
#ifdef KILN_HALF
#define REAL half
#define LOAD(p, i) vload_half((i), (p))
#define LOAD8(p) vload_half8(0, (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#define STORE8(p, v) vstore_half8_rte((v), 0, (p))
#else
#define REAL float
#define LOAD(p, i) ((p)[i])
#define LOAD8(p) vload8(0, (p))
#define STORE(p, i, v) ((p)[i] = (v))
#define STORE8(p, v) vstore8((v), 0, (p))
#endif

// Values of ops::ActivationFunction; KILN_NO_ACTIVATION when a layer has no fused activation.
#define KILN_NO_ACTIVATION (-1)
#define KILN_RELU 0
#define KILN_BOUNDED_RELU 1
#define KILN_LEAKY_RELU 2
#define KILN_ELU 3
#define KILN_SIGMOID 4
#define KILN_TANH 5
#define KILN_HARD_SIGMOID 6
#define KILN_HARD_SWISH 7
#define KILN_GELU 8
#define KILN_SILU 9
#define KILN_SOFTPLUS 10
#define KILN_MISH 11
#define KILN_SOFTSIGN 12
#define KILN_SELU 13
#define KILN_CELU 14
#define KILN_THRESHOLDED_RELU 15
#define KILN_SHRINK 16

// log(1 + exp(x)) without overflow (ops::Activation::softplus).
inline float kiln_softplus(float x) { return fmax(x, 0.0f) + log1p(exp(-fabs(x))); }

// The activation `function` with parameters a and b, as RefBackend defines it.
inline float kiln_activate(float x, int function, float a, float b) {
  switch (function) {
    case KILN_RELU: return fmax(0.0f, x);
    case KILN_BOUNDED_RELU: return fmin(a, fmax(b, x));
    case KILN_LEAKY_RELU: return x >= 0.0f ? x : a * x;
    case KILN_ELU: return x >= 0.0f ? x : a * expm1(x);
    case KILN_SIGMOID: return 1.0f / (1.0f + exp(-x));
    case KILN_TANH: return tanh(x);
    case KILN_HARD_SIGMOID: return fmax(0.0f, fmin(1.0f, a * x + b));
    case KILN_HARD_SWISH: return x * fmax(0.0f, fmin(6.0f, x + 3.0f)) / 6.0f;
    case KILN_GELU:
      if (a != 0.0f) return 0.5f * x * (1.0f + tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
      return 0.5f * x * (1.0f + erf(x * 0.7071067811865476f));
    case KILN_SILU: return x / (1.0f + exp(-x));
    case KILN_SOFTPLUS: return kiln_softplus(x);
    case KILN_MISH: return x * tanh(kiln_softplus(x));
    case KILN_SOFTSIGN: return x / (1.0f + fabs(x));
    case KILN_SELU: return b * (x > 0.0f ? x : a * expm1(x));
    case KILN_CELU: return fmax(0.0f, x) + fmin(0.0f, a * expm1(x / a));
    case KILN_THRESHOLDED_RELU: return x > a ? x : 0.0f;
    case KILN_SHRINK: return x < -a ? x + b : x > a ? x - b : 0.0f;
    default: return x;
  }
}

// round(acc x multiplier x 2^-right) + zero_point, saturated to [lo, hi], with acc first saturated
// to int: the exact 64-bit product shifted right once, ties up (quantized::saturate_to_int32, then
// Requantization::apply and requantize). The low 7 bits of `shift` are the right shift, in [1, 62];
// bit 7 asks for TensorFlow Lite's two roundings, which for right shifts of 32 or more move the
// product 2^30 away from -2^30 first (Requantization::product_bias).
inline int kiln_requantize(long acc, int multiplier, int shift, int zero_point, int lo, int hi) {
  const int right = shift & 127;
  long product = clamp(acc, (long)INT_MIN, (long)INT_MAX) * multiplier;
  if ((shift & 128) && right >= 32) product += product < -(1L << 30) ? -(1L << 30) : (1L << 30);
  return (int)clamp(((product + ((long)1 << (right - 1))) >> right) + zero_point, (long)lo, (long)hi);
}

// Element offset, through `strides`, of element `index` of a row-major tensor of dimensions
// `dims`. Both hold six entries, outermost first; lower ranks are padded at the front with
// dimension 1. A stride of 0 broadcasts a dimension; negative strides walk backwards.
inline int kiln_offset(uint index, uint8 dims, int8 strides) {
  int offset = 0;
  uint c;
  c = index % dims.s5; index /= dims.s5; offset += (int)c * strides.s5;
  c = index % dims.s4; index /= dims.s4; offset += (int)c * strides.s4;
  c = index % dims.s3; index /= dims.s3; offset += (int)c * strides.s3;
  c = index % dims.s2; index /= dims.s2; offset += (int)c * strides.s2;
  c = index % dims.s1; index /= dims.s1; offset += (int)c * strides.s1;
  offset += (int)index * strides.s0;
  return offset;
}

// Stores eight sums of one row of a tile at `y`, each plus its bias (when has_bias) and through
// the activation: the last step of the tiled convolution and GEMM kernels.
inline void kiln_store8(__global REAL* y, float8 sums, __global const REAL* bias, int has_bias, int function,
                        float fa, float fb) {
  float v[8];
  vstore8(sums, 0, v);
  for (int j = 0; j < 8; ++j) v[j] = kiln_activate(v[j] + (has_bias ? LOAD(bias, j) : 0.0f), function, fa, fb);
  STORE8(y, vload8(0, v));
}
