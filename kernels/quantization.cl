// SPDX-License-Identifier: Apache-2.0
// Quantize, Dequantize and Requantize (docs/decisions/0014-int8-arithmetic.md), bit-exact with
// RefBackend. Built with QUANTIZED (the 8-bit tensor's OpenCL type: uchar or char) and, for
// Requantize, QUANTIZED_OUT (the output's, QUANTIZED's by default); Quantize needs correctly rounded division
// (-cl-fp32-correctly-rounded-divide-sqrt), which ClBackend asks for.

#ifndef QUANTIZED_OUT
#define QUANTIZED_OUT QUANTIZED
#endif

// y = saturate(round_half_to_even(x / scale) + zero_point), or with ties_away TensorFlow Lite's
// rounding (halves away from zero); lo and hi are the output's range less the zero point. Clamping
// before rounding to integral bounds is clamping after; NaN gives 0.
__kernel void quantize(__global const float* x, __global QUANTIZED* y, float scale, int zero_point, float lo,
                       float hi, int ties_away) {
  const uint i = get_global_id(0);
  const float v = x[i] / scale;
  const float clamped = isnan(v) ? 0.0f : clamp(v, lo, hi);
  y[i] = (QUANTIZED)((ties_away ? convert_int(round(clamped)) : convert_int_rte(clamped)) + zero_point);
}

// y = (x - zero_point) x scale: the difference is exact, the product rounded once.
__kernel void dequantize(__global const QUANTIZED* x, __global float* y, float scale, int zero_point) {
  const uint i = get_global_id(0);
  y[i] = convert_float((int)x[i] - zero_point) * scale;
}

// y = saturate(out_zero + round((x - in_zero) x multiplier x 2^-right)) (kiln_requantize).
__kernel void requantize(__global const QUANTIZED* x, __global QUANTIZED_OUT* y, int in_zero, int multiplier,
                         int right, int out_zero, int lo, int hi) {
  const uint i = get_global_id(0);
  y[i] = (QUANTIZED_OUT)kiln_requantize((int)x[i] - in_zero, multiplier, right, out_zero, lo, hi);
}
