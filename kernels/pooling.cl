// SPDX-License-Identifier: Apache-2.0
// Pooling2d (max and average), NHWC: one work-item per output element, dimension 0 the channel,
// 1 the output column, 2 the batch and output row. Built with QUANTIZED (uchar or char) for the
// int8 kernel.

// The window of output (oy, ox) clipped to the input, as rows [s0, s1) and columns [s2, s3), and in
// *divisor what an average divides by: the positions inside the input, or the window clipped to
// the padded input with count_include_pad.
inline int4 kiln_pool_window(uint oy, uint ox, uint height, uint width, uint window_h, uint window_w, uint stride_h,
                             uint stride_w, uint pad_top, uint pad_bottom, uint pad_left, uint pad_right,
                             int count_include_pad, int* divisor) {
  const int y0 = (int)(oy * stride_h) - (int)pad_top, x0 = (int)(ox * stride_w) - (int)pad_left;
  const int y_end = min(y0 + (int)window_h, (int)(height + pad_bottom));
  const int x_end = min(x0 + (int)window_w, (int)(width + pad_right));
  const int4 w = (int4)(max(y0, 0), min(y_end, (int)height), max(x0, 0), min(x_end, (int)width));
  *divisor = count_include_pad ? (y_end - y0) * (x_end - x0) : (w.s1 - w.s0) * (w.s3 - w.s2);
  return w;
}

#ifndef QUANTIZED
__kernel void pooling2d(__global const REAL* x, __global REAL* y, uint height, uint width, uint out_height,
                        uint window_h, uint window_w, uint stride_h, uint stride_w, uint pad_top, uint pad_bottom,
                        uint pad_left, uint pad_right, int average, int count_include_pad) {
  const uint c = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint channels = get_global_size(0), out_width = get_global_size(1);
  int divisor;
  const int4 w = kiln_pool_window(oy, ox, height, width, window_h, window_w, stride_h, stride_w, pad_top, pad_bottom,
                                  pad_left, pad_right, count_include_pad, &divisor);
  float best = -INFINITY, sum = 0.0f;
  for (int iy = w.s0; iy < w.s1; ++iy)
    for (int ix = w.s2; ix < w.s3; ++ix) {
      const float v = LOAD(x, ((n * height + iy) * width + ix) * channels + c);
      best = fmax(best, v);
      sum += v;
    }
  STORE(y, ((n * out_height + oy) * out_width + ox) * channels + c, average ? sum / (float)divisor : best);
}
#else
// int8 (decision 0014): the window's max of (x - x_zero) (average 0), or its sum (average 1), through
// the output stage of its divisor: stages[divisor - first_divisor] = (multiplier, right shift)
// (quantized::PoolingStage); or TensorFlow Lite's rounded average (average 2: the integers' sum
// divided by the count, ties away from zero; tflite_recipes::average).
__kernel void int8_pooling2d(__global const QUANTIZED* x, __global QUANTIZED* y, __global const int2* stages,
                             uint first_divisor, uint height, uint width, uint out_height, uint window_h,
                             uint window_w, uint stride_h, uint stride_w, uint pad_top, uint pad_bottom,
                             uint pad_left, uint pad_right, int average, int count_include_pad, int x_zero,
                             int y_zero, int lo, int hi) {
  const uint c = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint channels = get_global_size(0), out_width = get_global_size(1);
  int divisor;
  const int4 w = kiln_pool_window(oy, ox, height, width, window_h, window_w, stride_h, stride_w, pad_top, pad_bottom,
                                  pad_left, pad_right, count_include_pad, &divisor);
  int best = INT_MIN, sum = 0;
  for (int iy = w.s0; iy < w.s1; ++iy)
    for (int ix = w.s2; ix < w.s3; ++ix) {
      const int v = (int)x[((n * height + iy) * width + ix) * channels + c] - x_zero;
      best = max(best, v);
      sum += v;
    }
  const uint at = ((n * out_height + oy) * out_width + ox) * channels + c;
  if (average == 2) {
    const int raw = sum + divisor * x_zero;
    y[at] = (QUANTIZED)clamp(raw > 0 ? (raw + divisor / 2) / divisor : (raw - divisor / 2) / divisor, lo, hi);
    return;
  }
  const int2 stage = stages[average ? divisor - (int)first_divisor : 0];
  y[at] = (QUANTIZED)kiln_requantize(average ? sum : best, stage.x, stage.y, y_zero, lo, hi);
}
#endif
