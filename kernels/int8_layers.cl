// SPDX-License-Identifier: Apache-2.0
// The int8 layers with weights (docs/decisions/0014-int8-arithmetic.md), bit-exact with RefBackend:
// Convolution2d, DepthwiseConvolution2d and FullyConnected on QUANTIZED activations (uchar or char,
// a build option) and char weights. Each work-item sums one output's (x - x_zero) x w in int, which
// the layer checks keep within 2^30, adds its bias in long (a bias fed at run time may take any
// value) and passes the sum through the output stage of its channel: stages[c] = (multiplier, right shift), then the zero point y_zero and the
// clamp [lo, hi]. A tap in the padding adds nothing: padding with the input's zero point.
// Convolutions: dimension 0 the output channel, 1 the output column, 2 the batch and output row.

// The sum of four products of 8-bit integers, exact: the device's integer dot product where it has
// one (cl_khr_integer_dot_product: dot of uchar4 or char4 by char4). KILN_EMULATED_DOT4 (a build
// option, which CI's ops_cl_int8_dot4 sets through KILN_CL_BUILD_OPTIONS) writes the four
// products out instead, so that the dot-product form is tested on devices without it, PoCL's
// among them: there it is slower than the plain loop (1.04 against 0.75 ms on the small u8
// MobileNet-v2), whose work-items PoCL vectorises as they are.
#if defined(cl_khr_integer_dot_product) || defined(__opencl_c_integer_dot_product_input_4x8bit)
#define KILN_DOT4(x, w) dot((x), (w))
#elif defined(KILN_EMULATED_DOT4)
#define KILN_DOT4(x, w) kiln_sum4(convert_int4(x) * convert_int4(w))
inline int kiln_sum4(int4 v) { return (v.x + v.y) + (v.z + v.w); }
#endif

// sum over i < n of (x[i] - x_zero) w[i]. With a dot product, four bytes at a time as the sum of x w
// less x_zero times the sum of w (|x w| <= 2^15: both sums stay within the layer checks' 2^30, as
// the centred one does).
inline int kiln_int8_dot(__global const QUANTIZED* x, __global const char* w, uint n, int x_zero) {
#ifdef KILN_DOT4
  int products = 0, weights = 0;
  uint i = 0;
  for (; i + 4 <= n; i += 4) {
    const char4 w4 = vload4(0, w + i);
    products += KILN_DOT4(vload4(0, x + i), w4);
    weights += KILN_DOT4((char4)(1), w4);
  }
  for (; i < n; ++i) {
    products += x[i] * w[i];
    weights += w[i];
  }
  return products - x_zero * weights;
#else
  int sum = 0;
  for (uint i = 0; i < n; ++i) sum += ((int)x[i] - x_zero) * w[i];
  return sum;
#endif
}

// Convolution2d: weights [O, KH, KW, C / groups]; output channel oc reads the input channels of
// its group. `bias` is read only when has_bias is set.
__kernel void int8_convolution2d(__global const QUANTIZED* x, __global const char* w, __global const int* bias,
                                 __global const int2* stages, __global QUANTIZED* y, uint height, uint width,
                                 uint channels, uint out_height, uint kernel_h, uint kernel_w, uint group_in,
                                 uint group_out, uint stride_h, uint stride_w, uint dilation_h, uint dilation_w,
                                 uint pad_top, uint pad_left, int has_bias, int x_zero, int y_zero, int lo, int hi) {
  const uint oc = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint out_channels = get_global_size(0), out_width = get_global_size(1);
  const uint first_channel = (oc / group_out) * group_in;
  int sum = 0;
  for (uint ky = 0; ky < kernel_h; ++ky) {
    const int iy = (int)(oy * stride_h + ky * dilation_h) - (int)pad_top;
    if (iy < 0 || iy >= (int)height) continue;
    for (uint kx = 0; kx < kernel_w; ++kx) {
      const int ix = (int)(ox * stride_w + kx * dilation_w) - (int)pad_left;
      if (ix < 0 || ix >= (int)width) continue;
      sum += kiln_int8_dot(x + ((n * height + iy) * width + ix) * channels + first_channel,
                           w + ((oc * kernel_h + ky) * kernel_w + kx) * group_in, group_in, x_zero);
    }
  }
  const int2 stage = stages[oc];
  y[((n * out_height + oy) * out_width + ox) * out_channels + oc] =
      (QUANTIZED)kiln_requantize((long)sum + (has_bias ? bias[oc] : 0), stage.x, stage.y, y_zero, lo, hi);
}

// DepthwiseConvolution2d: weights [1, KH, KW, C * M]; output channel oc reads input channel oc / M.
__kernel void int8_depthwise_convolution2d(__global const QUANTIZED* x, __global const char* w,
                                           __global const int* bias, __global const int2* stages,
                                           __global QUANTIZED* y, uint height, uint width, uint channels,
                                           uint out_height, uint kernel_h, uint kernel_w, uint multiplier,
                                           uint stride_h, uint stride_w, uint dilation_h, uint dilation_w,
                                           uint pad_top, uint pad_left, int has_bias, int x_zero, int y_zero, int lo,
                                           int hi) {
  const uint oc = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint out_channels = get_global_size(0), out_width = get_global_size(1);
  const uint ic = oc / multiplier;
  int sum = 0;
  for (uint ky = 0; ky < kernel_h; ++ky) {
    const int iy = (int)(oy * stride_h + ky * dilation_h) - (int)pad_top;
    if (iy < 0 || iy >= (int)height) continue;
    for (uint kx = 0; kx < kernel_w; ++kx) {
      const int ix = (int)(ox * stride_w + kx * dilation_w) - (int)pad_left;
      if (ix < 0 || ix >= (int)width) continue;
      sum += ((int)x[((n * height + iy) * width + ix) * channels + ic] - x_zero) *
             w[(ky * kernel_w + kx) * out_channels + oc];
    }
  }
  const int2 stage = stages[oc];
  y[((n * out_height + oy) * out_width + ox) * out_channels + oc] =
      (QUANTIZED)kiln_requantize((long)sum + (has_bias ? bias[oc] : 0), stage.x, stage.y, y_zero, lo, hi);
}

// FullyConnected: y[r, n] = stage(bias[n] + sum_k (x[r, k] - x_zero) w[n, k]); dimension 0 the
// column n, 1 the row r.
__kernel void int8_fully_connected(__global const QUANTIZED* x, __global const char* w, __global const int* bias,
                                   __global const int2* stages, __global QUANTIZED* y, uint k, int has_bias,
                                   int x_zero, int y_zero, int lo, int hi) {
  const uint n = get_global_id(0), r = get_global_id(1);
  const uint columns = get_global_size(0);
  const int sum = kiln_int8_dot(x + r * k, w + n * k, k, x_zero);
  const int2 stage = stages[n];
  y[r * columns + n] =
      (QUANTIZED)kiln_requantize((long)sum + (has_bias ? bias[n] : 0), stage.x, stage.y, y_zero, lo, hi);
}
