// SPDX-License-Identifier: Apache-2.0
// Cast between Float32 and Float16, one work-item per element. vstore_half_rte rounds to nearest,
// ties to even (past 65504 to infinity, NaN kept), as kiln::float_to_half; vload_half widens exactly.
// Both are core OpenCL: no cl_khr_fp16 needed.

__kernel void float32_to_float16(__global const float* x, __global half* y) {
  const uint i = get_global_id(0);
  vstore_half_rte(x[i], i, y);
}

__kernel void float16_to_float32(__global const half* x, __global float* y) {
  const uint i = get_global_id(0);
  y[i] = vload_half(i, x);
}
