// SPDX-License-Identifier: Apache-2.0
// Resize, NHWC: one work-item per output element, dimension 0 the channel, 1 the output column,
// 2 the batch and output row. The source rows and columns and the bilinear weights depend only on
// the shapes, so the host computes them once at load (as RefBackend does, in double precision).

// Nearest: row_of[oy] and column_of[ox] are the input row and column. It moves ELEMENTs (uint for
// Float32, uchar for 8-bit tensors).
__kernel void resize_nearest(__global const ELEMENT* x, __global ELEMENT* y, __global const int* row_of,
                             __global const int* column_of, uint height, uint width, uint out_height) {
  const uint c = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint channels = get_global_size(0), out_width = get_global_size(1);
  y[((n * out_height + oy) * out_width + ox) * channels + c] =
      x[((n * height + row_of[oy]) * width + column_of[ox]) * channels + c];
}

// Bilinear: rows[2 oy], rows[2 oy + 1] are the two input rows, row_weight[oy] the weight of the
// second (columns likewise).
__kernel void resize_bilinear(__global const REAL* x, __global REAL* y, __global const int* rows,
                              __global const int* columns, __global const float* row_weight,
                              __global const float* column_weight, uint height, uint width, uint out_height) {
  const uint c = get_global_id(0), ox = get_global_id(1);
  const uint n = get_global_id(2) / out_height, oy = get_global_id(2) % out_height;
  const uint channels = get_global_size(0), out_width = get_global_size(1);
  const float fy = row_weight[oy], fx = column_weight[ox];
  __global const REAL* plane = x + n * height * width * channels + c;
  const uint r0 = rows[2 * oy] * width, r1 = rows[2 * oy + 1] * width;
  const uint c0 = columns[2 * ox], c1 = columns[2 * ox + 1];
  const float top = LOAD(plane, (r0 + c0) * channels) * (1.0f - fx) + LOAD(plane, (r0 + c1) * channels) * fx;
  const float bottom = LOAD(plane, (r1 + c0) * channels) * (1.0f - fx) + LOAD(plane, (r1 + c1) * channels) * fx;
  STORE(y, ((n * out_height + oy) * out_width + ox) * channels + c, top * (1.0f - fy) + bottom * fy);
}
