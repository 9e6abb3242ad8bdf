// SPDX-License-Identifier: Apache-2.0
// Convolution2d, DepthwiseConvolution2d and TransposeConvolution2d, NHWC, one work-item per output
// element: dimension 0 the output channel, 1 the output column, 2 the batch and output row.

// Convolution2d: weights [O, KH, KW, C / groups]; output channel oc reads the input channels of
// its group. `bias` is read only when has_bias is set.
__kernel void convolution2d(__global const REAL* x, __global const REAL* w, __global const REAL* bias,
                            __global REAL* y, uint height, uint width, uint channels, uint out_height,
                            uint kernel_h, uint kernel_w, uint group_in, uint group_out, uint stride_h,
                            uint stride_w, uint dilation_h, uint dilation_w, uint pad_top, uint pad_left,
                            int has_bias, int function, float fa, float fb) {
  const uint oc = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint out_channels = get_global_size(0), out_width = get_global_size(1);
  const uint first_channel = (oc / group_out) * group_in;
  float sum = has_bias ? LOAD(bias, oc) : 0.0f;
  for (uint ky = 0; ky < kernel_h; ++ky) {
    const int iy = (int)(oy * stride_h + ky * dilation_h) - (int)pad_top;
    if (iy < 0 || iy >= (int)height) continue;
    for (uint kx = 0; kx < kernel_w; ++kx) {
      const int ix = (int)(ox * stride_w + kx * dilation_w) - (int)pad_left;
      if (ix < 0 || ix >= (int)width) continue;
      __global const REAL* xp = x + ((n * height + iy) * width + ix) * channels + first_channel;
      __global const REAL* wp = w + ((oc * kernel_h + ky) * kernel_w + kx) * group_in;
      for (uint ic = 0; ic < group_in; ++ic) sum = fma(LOAD(xp, ic), LOAD(wp, ic), sum);
    }
  }
  STORE(y, ((n * out_height + oy) * out_width + ox) * out_channels + oc, kiln_activate(sum, function, fa, fb));
}

// DepthwiseConvolution2d: weights [1, KH, KW, C * M]; output channel oc reads input channel oc / M.
__kernel void depthwise_convolution2d(__global const REAL* x, __global const REAL* w, __global const REAL* bias,
                                      __global REAL* y, uint height, uint width, uint channels, uint out_height,
                                      uint kernel_h, uint kernel_w, uint multiplier, uint stride_h, uint stride_w,
                                      uint dilation_h, uint dilation_w, uint pad_top, uint pad_left, int has_bias,
                                      int function, float fa, float fb) {
  const uint oc = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint out_channels = get_global_size(0), out_width = get_global_size(1);
  const uint ic = oc / multiplier;
  float sum = has_bias ? LOAD(bias, oc) : 0.0f;
  for (uint ky = 0; ky < kernel_h; ++ky) {
    const int iy = (int)(oy * stride_h + ky * dilation_h) - (int)pad_top;
    if (iy < 0 || iy >= (int)height) continue;
    for (uint kx = 0; kx < kernel_w; ++kx) {
      const int ix = (int)(ox * stride_w + kx * dilation_w) - (int)pad_left;
      if (ix < 0 || ix >= (int)width) continue;
      sum = fma(LOAD(x, ((n * height + iy) * width + ix) * channels + ic), LOAD(w, (ky * kernel_w + kx) * out_channels + oc),
                  sum);
    }
  }
  STORE(y, ((n * out_height + oy) * out_width + ox) * out_channels + oc, kiln_activate(sum, function, fa, fb));
}

// TransposeConvolution2d: weights [O, KH, KW, C]. Input pixel (iy, ix) reaches output
// (iy * stride + ky - top, ...), so output (oy, ox) gathers every (ky, kx) for which
// oy + top - ky is a non-negative multiple of the stride inside the input.
__kernel void transpose_convolution2d(__global const REAL* x, __global const REAL* w, __global const REAL* bias,
                                      __global REAL* y, uint height, uint width, uint channels, uint out_height,
                                      uint kernel_h, uint kernel_w, uint stride_h, uint stride_w, uint pad_top,
                                      uint pad_left, int has_bias) {
  const uint oc = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint out_channels = get_global_size(0), out_width = get_global_size(1);
  float sum = has_bias ? LOAD(bias, oc) : 0.0f;
  for (uint ky = 0; ky < kernel_h; ++ky) {
    const int ty = (int)(oy + pad_top) - (int)ky;
    if (ty < 0 || ty % (int)stride_h != 0 || ty / (int)stride_h >= (int)height) continue;
    const uint iy = ty / stride_h;
    for (uint kx = 0; kx < kernel_w; ++kx) {
      const int tx = (int)(ox + pad_left) - (int)kx;
      if (tx < 0 || tx % (int)stride_w != 0 || tx / (int)stride_w >= (int)width) continue;
      const uint ix = tx / stride_w;
      __global const REAL* xp = x + ((n * height + iy) * width + ix) * channels;
      __global const REAL* wp = w + ((oc * kernel_h + ky) * kernel_w + kx) * channels;
      float partial = 0.0f;
      for (uint ic = 0; ic < channels; ++ic) partial = fma(LOAD(xp, ic), LOAD(wp, ic), partial);
      sum += partial;
    }
  }
  STORE(y, ((n * out_height + oy) * out_width + ox) * out_channels + oc, sum);
}

// Convolution2d without groups, weights packed at load to [KH, KW, C, O] (output channels
// innermost): each work-item computes 4 neighbouring output columns x 8 output channels, one
// eight-wide weight load serving four inputs, as the gemm kernel does. Dimension 0 the group of 8
// channels, 1 the group of 4 columns, 2 the batch and output row. Tiles across the channel or
// column edge take the element-by-element path.
__kernel void convolution2d_tiled(__global const REAL* x, __global const REAL* w, __global const REAL* bias,
                                  __global REAL* y, uint height, uint width, uint channels, uint out_height,
                                  uint out_width, uint out_channels, uint kernel_h, uint kernel_w, uint stride_h,
                                  uint stride_w, uint dilation_h, uint dilation_w, uint pad_top, uint pad_left,
                                  int has_bias, int function, float fa, float fb) {
  const uint oc = get_global_id(0) * 8, ox = get_global_id(1) * 4;
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  if (oc >= out_channels || ox >= out_width) return;
  __global REAL* yp = y + ((n * out_height + oy) * out_width + ox) * out_channels + oc;
  if (oc + 8 > out_channels || ox + 4 > out_width) {
    for (uint j = 0; j < 4 && ox + j < out_width; ++j)
      for (uint o = 0; o < 8 && oc + o < out_channels; ++o) {
        float sum = has_bias ? LOAD(bias, oc + o) : 0.0f;
        for (uint ky = 0; ky < kernel_h; ++ky) {
          const int iy = (int)(oy * stride_h + ky * dilation_h) - (int)pad_top;
          if (iy < 0 || iy >= (int)height) continue;
          for (uint kx = 0; kx < kernel_w; ++kx) {
            const int ix = (int)((ox + j) * stride_w + kx * dilation_w) - (int)pad_left;
            if (ix < 0 || ix >= (int)width) continue;
            __global const REAL* xp = x + ((n * height + iy) * width + ix) * channels;
            __global const REAL* wp = w + (ky * kernel_w + kx) * channels * out_channels + oc + o;
            for (uint ic = 0; ic < channels; ++ic) sum = fma(LOAD(xp, ic), LOAD(wp, ic * out_channels), sum);
          }
        }
        STORE(yp, j * out_channels + o, kiln_activate(sum, function, fa, fb));
      }
    return;
  }
  float8 s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  for (uint ky = 0; ky < kernel_h; ++ky) {
    const int iy = (int)(oy * stride_h + ky * dilation_h) - (int)pad_top;
    if (iy < 0 || iy >= (int)height) continue;
    __global const REAL* row = x + (n * height + iy) * width * channels;
    for (uint kx = 0; kx < kernel_w; ++kx) {
      const int ix0 = (int)(ox * stride_w + kx * dilation_w) - (int)pad_left;
      const int step = (int)stride_w;
      // A column outside the input contributes nothing (it reads column 0, and discards it).
      const bool in0 = ix0 >= 0 && ix0 < (int)width, in1 = ix0 + step >= 0 && ix0 + step < (int)width;
      const bool in2 = ix0 + 2 * step >= 0 && ix0 + 2 * step < (int)width;
      const bool in3 = ix0 + 3 * step >= 0 && ix0 + 3 * step < (int)width;
      __global const REAL* x0 = row + (in0 ? ix0 : 0) * (int)channels;
      __global const REAL* x1 = row + (in1 ? ix0 + step : 0) * (int)channels;
      __global const REAL* x2 = row + (in2 ? ix0 + 2 * step : 0) * (int)channels;
      __global const REAL* x3 = row + (in3 ? ix0 + 3 * step : 0) * (int)channels;
      __global const REAL* wp = w + (ky * kernel_w + kx) * channels * out_channels + oc;
      for (uint ic = 0; ic < channels; ++ic) {
        const float8 wv = LOAD8(wp + ic * out_channels);
        s0 = fma((float8)(in0 ? LOAD(x0, ic) : 0.0f), wv, s0);
        s1 = fma((float8)(in1 ? LOAD(x1, ic) : 0.0f), wv, s1);
        s2 = fma((float8)(in2 ? LOAD(x2, ic) : 0.0f), wv, s2);
        s3 = fma((float8)(in3 ? LOAD(x3, ic) : 0.0f), wv, s3);
      }
    }
  }
  __global const REAL* bias_tile = bias + oc;
  kiln_store8(yp, s0, bias_tile, has_bias, function, fa, fb);
  kiln_store8(yp + out_channels, s1, bias_tile, has_bias, function, fa, fb);
  kiln_store8(yp + 2 * out_channels, s2, bias_tile, has_bias, function, fa, fb);
  kiln_store8(yp + 3 * out_channels, s3, bias_tile, has_bias, function, fa, fb);
}

// DepthwiseConvolution2d with one output channel per input channel: each work-item computes 4
// neighbouring output columns x 8 channels with eight-wide loads of input and weights (both keep
// channels innermost). Dimension 0 the group of 8 channels, 1 the group of 4 columns, 2 the batch
// and output row. Tiles across the channel or column edge take the element-by-element path.
__kernel void depthwise_convolution2d_tiled(__global const REAL* x, __global const REAL* w, __global const REAL* bias,
                                            __global REAL* y, uint height, uint width, uint channels, uint out_height,
                                            uint out_width, uint kernel_h, uint kernel_w, uint stride_h, uint stride_w,
                                            uint dilation_h, uint dilation_w, uint pad_top, uint pad_left, int has_bias,
                                            int function, float fa, float fb) {
  const uint c = get_global_id(0) * 8, ox = get_global_id(1) * 4;
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  if (c >= channels || ox >= out_width) return;
  __global REAL* yp = y + ((n * out_height + oy) * out_width + ox) * channels + c;
  if (c + 8 > channels || ox + 4 > out_width) {
    for (uint j = 0; j < 4 && ox + j < out_width; ++j)
      for (uint o = c; o < c + 8 && o < channels; ++o) {
        float sum = has_bias ? LOAD(bias, o) : 0.0f;
        for (uint ky = 0; ky < kernel_h; ++ky) {
          const int iy = (int)(oy * stride_h + ky * dilation_h) - (int)pad_top;
          if (iy < 0 || iy >= (int)height) continue;
          for (uint kx = 0; kx < kernel_w; ++kx) {
            const int ix = (int)((ox + j) * stride_w + kx * dilation_w) - (int)pad_left;
            if (ix < 0 || ix >= (int)width) continue;
            sum = fma(LOAD(x, ((n * height + iy) * width + ix) * channels + o), LOAD(w, (ky * kernel_w + kx) * channels + o),
                      sum);
          }
        }
        STORE(yp, j * channels + o - c, kiln_activate(sum, function, fa, fb));
      }
    return;
  }
  float8 s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  for (uint ky = 0; ky < kernel_h; ++ky) {
    const int iy = (int)(oy * stride_h + ky * dilation_h) - (int)pad_top;
    if (iy < 0 || iy >= (int)height) continue;
    __global const REAL* row = x + (n * height + iy) * width * channels + c;
    for (uint kx = 0; kx < kernel_w; ++kx) {
      const int ix0 = (int)(ox * stride_w + kx * dilation_w) - (int)pad_left;
      const int step = (int)stride_w;
      const float8 wv = LOAD8(w + (ky * kernel_w + kx) * channels + c);
      const int ix1 = ix0 + step, ix2 = ix0 + 2 * step, ix3 = ix0 + 3 * step;
      if (ix0 >= 0 && ix0 < (int)width) s0 = fma(LOAD8(row + ix0 * (int)channels), wv, s0);
      if (ix1 >= 0 && ix1 < (int)width) s1 = fma(LOAD8(row + ix1 * (int)channels), wv, s1);
      if (ix2 >= 0 && ix2 < (int)width) s2 = fma(LOAD8(row + ix2 * (int)channels), wv, s2);
      if (ix3 >= 0 && ix3 < (int)width) s3 = fma(LOAD8(row + ix3 * (int)channels), wv, s3);
    }
  }
  __global const REAL* bias_tile = bias + c;
  kiln_store8(yp, s0, bias_tile, has_bias, function, fa, fb);
  kiln_store8(yp + channels, s1, bias_tile, has_bias, function, fa, fb);
  kiln_store8(yp + 2 * channels, s2, bias_tile, has_bias, function, fa, fb);
  kiln_store8(yp + 3 * channels, s3, bias_tile, has_bias, function, fa, fb);
}
