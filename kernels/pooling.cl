// SPDX-License-Identifier: Apache-2.0
// Pooling2d (max and average), NHWC: one work-item per output element, dimension 0 the channel,
// 1 the output column, 2 the batch and output row.

__kernel void pooling2d(__global const float* x, __global float* y, uint height, uint width, uint out_height,
                        uint window_h, uint window_w, uint stride_h, uint stride_w, uint pad_top, uint pad_bottom,
                        uint pad_left, uint pad_right, int average, int count_include_pad) {
  const uint c = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint channels = get_global_size(0), out_width = get_global_size(1);
  const int y0 = (int)(oy * stride_h) - (int)pad_top, x0 = (int)(ox * stride_w) - (int)pad_left;
  // The window clipped to the padded input (count_include_pad divisor) and to the input.
  const int y_end = min(y0 + (int)window_h, (int)(height + pad_bottom));
  const int x_end = min(x0 + (int)window_w, (int)(width + pad_right));
  float best = -INFINITY, sum = 0.0f;
  int inside = 0;
  for (int iy = max(y0, 0); iy < min(y_end, (int)height); ++iy)
    for (int ix = max(x0, 0); ix < min(x_end, (int)width); ++ix) {
      const float v = x[((n * height + iy) * width + ix) * channels + c];
      best = fmax(best, v);
      sum += v;
      ++inside;
    }
  float result = best;
  if (average) result = sum / (float)(count_include_pad ? (y_end - y0) * (x_end - x0) : inside);
  y[((n * out_height + oy) * out_width + ox) * channels + c] = result;
}
