// SPDX-License-Identifier: Apache-2.0
// Reshape, Transpose, StridedSlice, Concat, Split, Gather and Pad: kernels that only move elements.
// Built once per element size with -DELEMENT=uchar, ushort or uint, so that every data type moves.

#ifndef ELEMENT
#define ELEMENT uint
#endif

// y[y_base + kiln_offset(i, dims, y_strides)] = x[x_base + kiln_offset(i, dims, x_strides)] for
// each of the elements of `dims`: a transpose, a slice (negative strides walk backwards), or one
// input of a concatenation (one output of a split) placed in its part of the other tensor.
__kernel void strided_copy(__global const ELEMENT* x, __global ELEMENT* y, uint8 dims, int x_base, int8 x_strides,
                           int y_base, int8 y_strides) {
  const uint i = get_global_id(0);
  y[y_base + kiln_offset(i, dims, y_strides)] = x[x_base + kiln_offset(i, dims, x_strides)];
}

// Gather along an axis of size `dim`: dimension 0 the element within a row of `inner` elements,
// 1 the position in `indices`, 2 the outer index. Indices were checked at load.
__kernel void gather(__global const ELEMENT* x, __global const int* indices, __global ELEMENT* y, uint dim) {
  const uint e = get_global_id(0), j = get_global_id(1), o = get_global_id(2);
  const uint inner = get_global_size(0), count = get_global_size(1);
  const int index = indices[j];
  const uint row = index < 0 ? (uint)(index + (int)dim) : (uint)index;
  y[(o * count + j) * inner + e] = x[(o * dim + row) * inner + e];
}

// Values of ops::PadMode.
#define PAD_CONSTANT 0
#define PAD_REFLECT 1
#define PAD_SYMMETRIC 2
#define PAD_EDGE 3

// Input index for padded index i of a dimension of size dim, or -1 for the constant (ops::Pad::source_index).
inline int pad_source(int mode, int i, int before, int dim) {
  const int j = i - before;
  if (j >= 0 && j < dim) return j;
  switch (mode) {
    case PAD_CONSTANT: return -1;
    case PAD_EDGE: return j < 0 ? 0 : dim - 1;
    case PAD_REFLECT: return j < 0 ? -j : 2 * (dim - 1) - j;
    default: return j < 0 ? -j - 1 : 2 * dim - 1 - j;
  }
}

// One dimension of the walk from an output element to its input element: false when the
// element is the constant.
inline bool pad_step(uint* rest, int* source, uint size, uint in_size, int before, int stride, int mode) {
  const int j = pad_source(mode, (int)(*rest % size), before, (int)in_size);
  *rest /= size;
  *source += j * stride;
  return j >= 0;
}

// Pad: output element i of `out_dims`; `in_dims`, `before` and the input's row-major `x_strides`
// are padded at the front like out_dims. `value` holds the constant element in its low bits.
__kernel void pad(__global const ELEMENT* x, __global ELEMENT* y, uint8 in_dims, uint8 out_dims, int8 before,
                  int8 x_strides, int mode, uint value) {
  const uint i = get_global_id(0);
  uint rest = i;
  int source = 0;
  const bool inside = pad_step(&rest, &source, out_dims.s5, in_dims.s5, before.s5, x_strides.s5, mode) &&
                      pad_step(&rest, &source, out_dims.s4, in_dims.s4, before.s4, x_strides.s4, mode) &&
                      pad_step(&rest, &source, out_dims.s3, in_dims.s3, before.s3, x_strides.s3, mode) &&
                      pad_step(&rest, &source, out_dims.s2, in_dims.s2, before.s2, x_strides.s2, mode) &&
                      pad_step(&rest, &source, out_dims.s1, in_dims.s1, before.s1, x_strides.s1, mode) &&
                      pad_step(&rest, &source, out_dims.s0, in_dims.s0, before.s0, x_strides.s0, mode);
  y[i] = inside ? x[source] : (ELEMENT)value;
}
