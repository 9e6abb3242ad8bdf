// SPDX-License-Identifier: Apache-2.0
// Convolution2d, DepthwiseConvolution2d and TransposeConvolution2d, NHWC, one work-item per output
// element: dimension 0 the output channel, 1 the output column, 2 the batch and output row.

// Convolution2d: weights [O, KH, KW, C / groups]; output channel oc reads the input channels of
// its group. `bias` is read only when has_bias is set.
__kernel void convolution2d(__global const float* x, __global const float* w, __global const float* bias,
                            __global float* y, uint height, uint width, uint channels, uint out_height,
                            uint kernel_h, uint kernel_w, uint group_in, uint group_out, uint stride_h,
                            uint stride_w, uint dilation_h, uint dilation_w, uint pad_top, uint pad_left,
                            int has_bias, int function, float fa, float fb) {
  const uint oc = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint out_channels = get_global_size(0), out_width = get_global_size(1);
  const uint first_channel = (oc / group_out) * group_in;
  float sum = has_bias ? bias[oc] : 0.0f;
  for (uint ky = 0; ky < kernel_h; ++ky) {
    const int iy = (int)(oy * stride_h + ky * dilation_h) - (int)pad_top;
    if (iy < 0 || iy >= (int)height) continue;
    for (uint kx = 0; kx < kernel_w; ++kx) {
      const int ix = (int)(ox * stride_w + kx * dilation_w) - (int)pad_left;
      if (ix < 0 || ix >= (int)width) continue;
      __global const float* xp = x + ((n * height + iy) * width + ix) * channels + first_channel;
      __global const float* wp = w + ((oc * kernel_h + ky) * kernel_w + kx) * group_in;
      for (uint ic = 0; ic < group_in; ++ic) sum = fma(xp[ic], wp[ic], sum);
    }
  }
  y[((n * out_height + oy) * out_width + ox) * out_channels + oc] = kiln_activate(sum, function, fa, fb);
}

// DepthwiseConvolution2d: weights [1, KH, KW, C * M]; output channel oc reads input channel oc / M.
__kernel void depthwise_convolution2d(__global const float* x, __global const float* w, __global const float* bias,
                                      __global float* y, uint height, uint width, uint channels, uint out_height,
                                      uint kernel_h, uint kernel_w, uint multiplier, uint stride_h, uint stride_w,
                                      uint dilation_h, uint dilation_w, uint pad_top, uint pad_left, int has_bias,
                                      int function, float fa, float fb) {
  const uint oc = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint out_channels = get_global_size(0), out_width = get_global_size(1);
  const uint ic = oc / multiplier;
  float sum = has_bias ? bias[oc] : 0.0f;
  for (uint ky = 0; ky < kernel_h; ++ky) {
    const int iy = (int)(oy * stride_h + ky * dilation_h) - (int)pad_top;
    if (iy < 0 || iy >= (int)height) continue;
    for (uint kx = 0; kx < kernel_w; ++kx) {
      const int ix = (int)(ox * stride_w + kx * dilation_w) - (int)pad_left;
      if (ix < 0 || ix >= (int)width) continue;
      sum = fma(x[((n * height + iy) * width + ix) * channels + ic], w[(ky * kernel_w + kx) * out_channels + oc], sum);
    }
  }
  y[((n * out_height + oy) * out_width + ox) * out_channels + oc] = kiln_activate(sum, function, fa, fb);
}

// TransposeConvolution2d: weights [O, KH, KW, C]. Input pixel (iy, ix) reaches output
// (iy * stride + ky - top, ...), so output (oy, ox) gathers every (ky, kx) for which
// oy + top - ky is a non-negative multiple of the stride inside the input.
__kernel void transpose_convolution2d(__global const float* x, __global const float* w, __global const float* bias,
                                      __global float* y, uint height, uint width, uint channels, uint out_height,
                                      uint kernel_h, uint kernel_w, uint stride_h, uint stride_w, uint pad_top,
                                      uint pad_left, int has_bias) {
  const uint oc = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint out_channels = get_global_size(0), out_width = get_global_size(1);
  float sum = has_bias ? bias[oc] : 0.0f;
  for (uint ky = 0; ky < kernel_h; ++ky) {
    const int ty = (int)(oy + pad_top) - (int)ky;
    if (ty < 0 || ty % (int)stride_h != 0 || ty / (int)stride_h >= (int)height) continue;
    const uint iy = ty / stride_h;
    for (uint kx = 0; kx < kernel_w; ++kx) {
      const int tx = (int)(ox + pad_left) - (int)kx;
      if (tx < 0 || tx % (int)stride_w != 0 || tx / (int)stride_w >= (int)width) continue;
      const uint ix = tx / stride_w;
      __global const float* xp = x + ((n * height + iy) * width + ix) * channels;
      __global const float* wp = w + ((oc * kernel_h + ky) * kernel_w + kx) * channels;
      float partial = 0.0f;
      for (uint ic = 0; ic < channels; ++ic) partial = fma(xp[ic], wp[ic], partial);
      sum += partial;
    }
  }
  y[((n * out_height + oy) * out_width + ox) * out_channels + oc] = sum;
}
