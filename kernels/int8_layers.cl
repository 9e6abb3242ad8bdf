// SPDX-License-Identifier: Apache-2.0
// The int8 layers with weights (docs/decisions/0014-int8-arithmetic.md), bit-exact with RefBackend:
// Convolution2d, DepthwiseConvolution2d and FullyConnected on QUANTIZED activations (uchar or char,
// a build option) and char weights. Each work-item sums one output's (x - x_zero) x w in int, which
// the layer checks keep within 2^30, adds its bias in long (a bias fed at run time may take any
// value) and passes the sum through the output stage of its channel: stages[c] = (multiplier, right shift), then the zero point y_zero and the
// clamp [lo, hi]. A tap in the padding adds nothing: padding with the input's zero point.
// Convolutions: dimension 0 the output channel, 1 the output column, 2 the batch and output row.

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
      __global const QUANTIZED* xp = x + ((n * height + iy) * width + ix) * channels + first_channel;
      __global const char* wp = w + ((oc * kernel_h + ky) * kernel_w + kx) * group_in;
      for (uint ic = 0; ic < group_in; ++ic) sum += ((int)xp[ic] - x_zero) * wp[ic];
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
  __global const QUANTIZED* xr = x + r * k;
  __global const char* wn = w + n * k;
  int sum = 0;
  for (uint p = 0; p < k; ++p) sum += ((int)xr[p] - x_zero) * wn[p];
  const int2 stage = stages[n];
  y[r * columns + n] =
      (QUANTIZED)kiln_requantize((long)sum + (has_bias ? bias[n] : 0), stage.x, stage.y, y_zero, lo, hi);
}
