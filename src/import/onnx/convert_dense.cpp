// SPDX-License-Identifier: Apache-2.0
// ONNX Gemm and MatMul. A constant right-hand matrix makes a FullyConnected layer (its weights
// transposed to kiln's [N, K] once, here); a computed one a BatchMatMul.
#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

// Constant B [K, N] (or [N, K] when already transposed) as FullyConnected weights [N, K], times `scale`.
OutputSlot dense_weights(Importer& im, const Value& b, bool transposed, float scale) {
  const ConstValue& value = *b.constant;
  constexpr std::size_t swap_axes[] = {1, 0};
  if (scale == 1.0f)  // weights, mostly: copied into the layer once
    return transposed ? im.add_constant(value, b.type, "weights")
                      : im.add_constant(value, value.dims, swap_axes, b.type, "weights");
  ConstValue weights = transposed ? value : value.transposed(value.dims, swap_axes, {value.dims[1], value.dims[0]});
  if (!weights.is_float) {
    for (std::int64_t v : weights.ints) weights.floats.push_back(static_cast<float>(v));
    weights.ints.clear();
    weights.is_float = true;
  }
  for (float& v : weights.floats) v *= scale;
  return im.add_constant(weights, b.type, "weights");
}

Expected<OutputSlot> scaled(Importer& im, OutputSlot x, float scale, std::string_view suffix) {
  if (scale == 1.0f) return x;
  const float value[] = {scale};
  const OutputSlot factor = im.add_constant(ConstValue{{1}, true, false, {value[0]}, {}}, DataType::Float32, suffix);
  return im.add<ops::ElementwiseBinary>({ops::BinaryOperation::Mul}, {x, factor},
                                        kiln::detail::str_cat(suffix, "_mul"));
}

Status gemm(Importer& im) {
  KILN_ONNX_TRY(a, im.input(0));
  KILN_ONNX_TRY(b, im.input(1));
  if (a->dims.size() != 2 || b->dims.size() != 2) return im.invalid("A and B must be matrices");
  const bool trans_a = im.attr_int("transA", 0) != 0, trans_b = im.attr_int("transB", 0) != 0;
  const float alpha = im.attr_float("alpha", 1.0f), beta = im.attr_float("beta", 1.0f);
  const std::int64_t n = trans_b ? b->dims[0] : b->dims[1];
  KILN_ONNX_TRY(a_slot, im.plain(*a));
  OutputSlot rows = a_slot;
  if (trans_a) {
    KILN_ONNX_TRY(t, im.add<ops::Transpose>({{1, 0}}, {a_slot}, "transpose_a"));
    rows = t;
  }
  // C folds into the FullyConnected bias when it is a constant vector of N (or a scalar).
  Value* c = nullptr;
  if (im.has_input(2)) {
    KILN_ONNX_TRY(c_value, im.input(2));
    c = c_value;
  }
  const bool c_is_bias = c != nullptr && c->constant && c->constant->is_float &&
                         (c->constant->size() == static_cast<std::size_t>(n) || c->constant->size() == 1) &&
                         (c->dims.size() < 2 || c->dims[0] == 1);
  std::vector<OutputSlot> inputs{rows};
  OutputSlot y;
  if (b->constant) {
    inputs.push_back(dense_weights(im, *b, trans_b, alpha));
    if (c_is_bias && beta == 1.0f && c->dims.size() == 1 && c->dims[0] == n) {
      // As it is: a bias a DequantizeLinear made stays quantised, for an int8 FullyConnected.
      inputs.push_back(im.add_constant(*c->constant, DataType::Float32, "bias"));
    } else if (c_is_bias) {
      ConstValue bias{{n}, true, false, {}, {}};
      for (std::int64_t i = 0; i < n; ++i)
        bias.floats.push_back(beta * c->constant->floats[c->constant->size() == 1 ? 0 : i]);
      inputs.push_back(im.add_constant(bias, DataType::Float32, "bias"));
    }
    KILN_ONNX_TRY(fc, im.add<ops::FullyConnected>({}, inputs));
    y = fc;
  } else {
    KILN_ONNX_TRY(b_slot, im.plain(*b));
    KILN_ONNX_TRY(product, im.add<ops::BatchMatMul>({false, trans_b}, {rows, b_slot}));
    KILN_ONNX_TRY(product_scaled, scaled(im, product, alpha, "alpha"));
    y = product_scaled;
  }
  if (c != nullptr && !(b->constant && c_is_bias)) {
    KILN_ONNX_TRY(c_slot, im.tensor(*c, Layout::Plain, 2));
    KILN_ONNX_TRY(c_scaled, scaled(im, c_slot, beta, "beta"));
    KILN_ONNX_TRY(sum, im.add<ops::ElementwiseBinary>({ops::BinaryOperation::Add}, {y, c_scaled}, "add_c"));
    y = sum;
  }
  im.define(0, y, Layout::Plain);
  return Status::ok();
}

Status matmul(Importer& im) {
  KILN_ONNX_TRY(a, im.input(0));
  KILN_ONNX_TRY(b, im.input(1));
  if (a->dims.empty() || b->dims.empty()) return im.invalid("MatMul of a scalar");
  KILN_ONNX_TRY(a_slot, im.plain(*a));
  if (b->constant && b->dims.size() == 2) {
    KILN_ONNX_TRY(y, im.add<ops::FullyConnected>({}, {a_slot, dense_weights(im, *b, false, 1.0f)}));
    im.define(0, y, Layout::Plain);
    return Status::ok();
  }
  // numpy.matmul: a vector operand gains a dimension that the result then loses.
  OutputSlot lhs = a_slot;
  if (a->dims.size() == 1) {
    KILN_ONNX_TRY(row, im.add<ops::Reshape>({{1, a->dims[0]}}, {a_slot}, "a_as_row"));
    lhs = row;
  }
  KILN_ONNX_TRY(b_slot, im.plain(*b));
  OutputSlot rhs = b_slot;
  if (b->dims.size() == 1) {
    KILN_ONNX_TRY(column, im.add<ops::Reshape>({{b->dims[0], 1}}, {b_slot}, "b_as_column"));
    rhs = column;
  }
  KILN_ONNX_TRY(product, im.add<ops::BatchMatMul>({}, {lhs, rhs}));
  OutputSlot y = product;
  if (a->dims.size() == 1 || b->dims.size() == 1) {
    const TensorShape& shape = im.info(product).shape;
    std::vector<std::int64_t> dims;
    for (std::size_t d = 0; d + 2 < shape.rank(); ++d) dims.push_back(shape[d]);
    if (a->dims.size() != 1) dims.push_back(shape.dim_from_end(1));
    if (b->dims.size() != 1) dims.push_back(shape.dim_from_end(0));
    KILN_ONNX_TRY(squeezed, im.add<ops::Reshape>({dims}, {product}, "squeeze"));
    y = squeezed;
  }
  im.define(0, y, Layout::Plain);
  return Status::ok();
}

constexpr ConverterEntry dense_ops[] = {{"Gemm", gemm}, {"MatMul", matmul}};

}  // namespace

std::span<const ConverterEntry> dense_converters() { return dense_ops; }

}  // namespace kiln::onnx::detail
