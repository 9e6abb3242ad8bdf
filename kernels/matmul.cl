// SPDX-License-Identifier: Apache-2.0
// FullyConnected and BatchMatMul: one work-item per output element, dimension 0 the column.

// FullyConnected: y[r, n] = sum_k x[r, k] * w[n, k] (+ bias[n]); dimension 1 the row r.
__kernel void fully_connected(__global const REAL* x, __global const REAL* w, __global const REAL* bias,
                              __global REAL* y, uint k, int has_bias, int function, float fa, float fb) {
  const uint n = get_global_id(0), r = get_global_id(1);
  const uint columns = get_global_size(0);
  __global const REAL* xr = x + r * k;
  __global const REAL* wn = w + n * k;
  float sum = 0.0f;
  for (uint p = 0; p < k; ++p) sum = fma(LOAD(xr, p), LOAD(wn, p), sum);
  if (has_bias) sum += LOAD(bias, n);
  STORE(y, r * columns + n, kiln_activate(sum, function, fa, fb));
}

// BatchMatMul: dimension 1 the row i, 2 the batch. A matrix's element (i, p) is at
// a_row * i + a_col * p; batches broadcast through a_batch/b_batch strides (in matrices) over
// the batch dimensions `batch_dims`.
__kernel void batch_mat_mul(__global const REAL* a, __global const REAL* b, __global REAL* y, uint m, uint k,
                            uint a_row, uint a_col, uint b_row, uint b_col, uint8 batch_dims, int8 a_batch,
                            int8 b_batch) {
  const uint j = get_global_id(0), i = get_global_id(1), batch = get_global_id(2);
  const uint n = get_global_size(0);
  __global const REAL* am = a + kiln_offset(batch, batch_dims, a_batch) * m * k;
  __global const REAL* bm = b + kiln_offset(batch, batch_dims, b_batch) * k * n;
  float sum = 0.0f;
  for (uint p = 0; p < k; ++p) sum = fma(LOAD(am, i * a_row + p * a_col), LOAD(bm, p * b_row + j * b_col), sum);
  STORE(y, (batch * m + i) * n + j, sum);
}

#ifdef QUANTIZED
// int8 batch_mat_mul (quantized::MatMulStage): the sum of (a - za)(b - zb) in int, requantized by
// the stage (multiplier, right shift); zeros = (za, zb, zy, unused).
__kernel void int8_batch_mat_mul(__global const QUANTIZED* a, __global const QUANTIZED* b, __global QUANTIZED* y,
                                 uint m, uint k, uint a_row, uint a_col, uint b_row, uint b_col, uint8 batch_dims,
                                 int8 a_batch, int8 b_batch, int4 zeros, int2 stage, int lo, int hi) {
  const uint j = get_global_id(0), i = get_global_id(1), batch = get_global_id(2);
  const uint n = get_global_size(0);
  __global const QUANTIZED* am = a + kiln_offset(batch, batch_dims, a_batch) * m * k;
  __global const QUANTIZED* bm = b + kiln_offset(batch, batch_dims, b_batch) * k * n;
  int acc = 0;
  for (uint p = 0; p < k; ++p)
    acc += ((int)am[i * a_row + p * a_col] - zeros.x) * ((int)bm[p * b_row + j * b_col] - zeros.y);
  y[(batch * m + i) * n + j] = (QUANTIZED)kiln_requantize(acc, stage.x, stage.y, zeros.z, lo, hi);
}
#endif

// GEMM: c[M, N] = a[M, K] * b[K, N] (+ bias[N]), then the fused activation; all row-major. Each
// work-item computes a 4 x 8 tile, dimension 0 the tile column, 1 the tile row: eight-wide rows of
// b against four rows of a keep 32 sums in registers. Tiles across the bottom edge go row by row,
// tiles across the right edge element by element.
#define GEMM_TILE_M 4
#define GEMM_TILE_N 8

__kernel void gemm(__global const REAL* a, __global const REAL* b, __global const REAL* bias, __global REAL* c,
                   uint m, uint n, uint k, int has_bias, int function, float fa, float fb) {
  const uint col = get_global_id(0) * GEMM_TILE_N, row = get_global_id(1) * GEMM_TILE_M;
  if (row >= m || col >= n) return;
  if (row + GEMM_TILE_M <= m && col + GEMM_TILE_N <= n) {
    __global const REAL* a0 = a + row * k;
    __global const REAL* a1 = a0 + k;
    __global const REAL* a2 = a1 + k;
    __global const REAL* a3 = a2 + k;
    float8 s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (uint p = 0; p < k; ++p) {
      const float8 bp = LOAD8(b + p * n + col);
      s0 = fma((float8)(LOAD(a0, p)), bp, s0);
      s1 = fma((float8)(LOAD(a1, p)), bp, s1);
      s2 = fma((float8)(LOAD(a2, p)), bp, s2);
      s3 = fma((float8)(LOAD(a3, p)), bp, s3);
    }
    __global const REAL* bias_tile = bias + col;
    kiln_store8(c + row * n + col, s0, bias_tile, has_bias, function, fa, fb);
    kiln_store8(c + (row + 1) * n + col, s1, bias_tile, has_bias, function, fa, fb);
    kiln_store8(c + (row + 2) * n + col, s2, bias_tile, has_bias, function, fa, fb);
    kiln_store8(c + (row + 3) * n + col, s3, bias_tile, has_bias, function, fa, fb);
    return;
  }
  if (col + GEMM_TILE_N <= n) {  // the last rows, fewer than four: eight columns at a time still
    for (uint i = row; i < m; ++i) {
      float8 sums = 0.0f;
      for (uint p = 0; p < k; ++p) sums = fma((float8)(LOAD(a, i * k + p)), LOAD8(b + p * n + col), sums);
      kiln_store8(c + i * n + col, sums, bias + col, has_bias, function, fa, fb);
    }
    return;
  }
  for (uint i = row; i < min(row + GEMM_TILE_M, m); ++i)
    for (uint j = col; j < min(col + GEMM_TILE_N, n); ++j) {
      float sum = 0.0f;
      for (uint p = 0; p < k; ++p) sum = fma(LOAD(a, i * k + p), LOAD(b, p * n + j), sum);
      STORE(c, i * n + j, kiln_activate(sum + (has_bias ? LOAD(bias, j) : 0.0f), function, fa, fb));
    }
}
