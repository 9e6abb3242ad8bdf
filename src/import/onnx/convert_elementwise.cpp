// SPDX-License-Identifier: Apache-2.0
// ONNX activations and elementwise ops: Relu ... Gelu ... Shrink, Abs ... Sin ... Round, Add ... Pow, PRelu,
// Max, Min, Sum, Mean; comparisons, And, Or, Xor, Not; Where, and Trilu and Expand made of it.
// They run in whichever layout their inputs already have, so a chain of them between convolutions
// stays channels-last.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

using ops::ActivationFunction;

Status activation(Importer& im, ops::Activation::Params params) {
  KILN_ONNX_TRY(x, im.input(0));
  return im.define_op<ops::Activation>(params, *x, Importer::preferred_layout(*x));
}

Status clip(Importer& im) {
  float low = std::numeric_limits<float>::lowest(), high = std::numeric_limits<float>::max();
  if (im.opset() < 11) {
    low = im.attr_float("min", low);
    high = im.attr_float("max", high);
  } else {
    for (std::size_t i : {1u, 2u}) {
      if (!im.has_input(i)) continue;
      KILN_ONNX_TRY(bound, im.constant_input(i, i == 1 ? "min" : "max"));
      if (bound->size() != 1) return im.error(i == 1 ? "min" : "max", " must be a scalar");
      (i == 1 ? low : high) = bound->float_at(0);
    }
  }
  if (low > high) return im.error("min ", low, " is greater than max ", high, " (kiln's Clip needs min <= max)");
  return activation(im, {ActivationFunction::BoundedReLU, high, low});
}

Status gelu(Importer& im) {
  const std::string approximate = im.attr_string("approximate").value_or("none");
  if (approximate != "none" && approximate != "tanh") return im.error("approximate '", approximate, "' is not known");
  return activation(im, {ActivationFunction::GELU, approximate == "tanh" ? 1.0f : 0.0f, 0.0f});
}

template <ops::UnaryOperation Operation>
Status unary(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  // Shape arithmetic negates constants: LayerNormalization's expanded function counts the reduced
  // axes as -axis, a ConstantOfShape's shape, which must be known at import.
  if constexpr (Operation == ops::UnaryOperation::Neg)
    if (x->constant && !x->constant->quantized) {
      ConstValue negated = *x->constant;
      for (float& v : negated.floats) v = -v;
      for (std::int64_t& v : negated.ints) v = -v;
      im.define_constant(0, std::move(negated), x->type);
      return Status::ok();
    }
  return im.define_op<ops::ElementwiseUnary>({Operation}, *x, Importer::preferred_layout(*x));
}

// The dims of values broadcast together (numpy).
Expected<std::vector<std::int64_t>> broadcast_dims(Importer& im, std::span<const Value* const> values) {
  std::size_t rank = 0;
  for (const Value* v : values) rank = std::max(rank, v->dims.size());
  std::vector<std::int64_t> out(rank, 1);
  for (const Value* v : values)
    for (std::size_t i = 0; i < v->dims.size(); ++i) {
      std::int64_t& d = out[rank - v->dims.size() + i];
      const std::int64_t own = v->dims[i];
      if (own != d && own != 1 && d != 1) return im.invalid("inputs of shapes do not broadcast (", d, " vs ", own, ")");
      d = own == 1 ? d : own;
    }
  return out;
}

template <class T>
Expected<T> apply(Importer& im, ops::BinaryOperation op, T a, T b) {
  switch (op) {
    case ops::BinaryOperation::Add: return a + b;
    case ops::BinaryOperation::Sub: return a - b;
    case ops::BinaryOperation::Mul: return a * b;
    case ops::BinaryOperation::Div:
      if constexpr (std::is_integral_v<T>)
        if (b == 0) return im.invalid("integer division by zero in a constant");
      return a / b;
    case ops::BinaryOperation::Maximum: return std::max(a, b);
    case ops::BinaryOperation::Minimum: return std::min(a, b);
    case ops::BinaryOperation::Power: return static_cast<T>(std::pow(a, b));
    case ops::BinaryOperation::PRelu: return a >= T{0} ? a : a * b;
    case ops::BinaryOperation::Mod:
    case ops::BinaryOperation::FMod:
      if constexpr (std::is_integral_v<T>)
        if (b == 0) return im.invalid("integer remainder of a division by zero in a constant");
      return ops::remainder(op, a, b);
  }
  return a;
}

// Defines output 0 as the constant of `inputs` broadcast together whose elements `element`
// appends to `out` (shaped here), given each input's element offset: shape arithmetic (Shape ->
// Gather -> Mul -> Concat -> Reshape, Equal -> Where) is folded so.
template <std::size_t N, class Element>
Status fold_broadcast(Importer& im, const std::array<const Value*, N>& inputs, ConstValue out, DataType type,
                      Element element) {
  KILN_ONNX_TRY(dims, broadcast_dims(im, inputs));
  if (element_count(dims) > max_folded_elements)
    return im.error("folding a constant of ", element_count(dims), " elements (at most ", max_folded_elements, ")");
  const std::size_t rank = dims.size();
  auto source_index = [&](const ConstValue& v, std::span<const std::int64_t> index) {
    std::size_t offset = 0, stride = 1;
    for (std::size_t d = v.dims.size(); d-- > 0;) {
      const std::size_t i = v.dims[d] == 1 ? 0 : static_cast<std::size_t>(index[d + rank - v.dims.size()]);
      offset += i * stride;
      stride *= static_cast<std::size_t>(v.dims[d]);
    }
    return offset;
  };
  out.dims = dims;
  std::vector<std::int64_t> index(rank, 0);
  for (std::uint64_t j = 0; j < element_count(dims); ++j) {
    std::array<std::size_t, N> offsets;
    for (std::size_t k = 0; k < N; ++k) offsets[k] = source_index(*inputs[k]->constant, index);
    if (auto status = element(out, offsets); !status) return status;
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  im.define_constant(0, std::move(out), type);
  return Status::ok();
}

// A constant operand takes the type of the computed one (x ** 2 with an integer 2).
Expected<Value> with_type_of(const Importer& im, const Value& constant, const Value& other) {
  if (!constant.constant)
    return im.error("inputs of types ", to_string(constant.type), " and ", to_string(other.type),
                    " (kiln's elementwise layers take one type)");
  Value converted;
  converted.dims = constant.dims;
  converted.type = other.type;
  converted.constant = *constant.constant;
  return converted;
}

// Defines output 0 as the layer `make` adds reading `values` broadcast to one rank. Channels-last
// when more computed inputs have only that than have the plain order too, or as many of each in an
// image's rank (4 and more): a residual Add of a CNN keeps its channels-last flow, one of a
// transformer's [batch, tokens, features] its plain one. Broadcast constants are permuted at import.
template <std::size_t N, class Make>
Status broadcast_layer(Importer& im, const std::array<Value*, N>& values, Make make) {
  std::array<const Value*, N> read_only;
  std::ranges::copy(values, read_only.begin());
  KILN_ONNX_TRY(dims, broadcast_dims(im, read_only));
  const std::size_t rank = dims.size();
  int channels_last = 0, plain = 0;
  for (const Value* v : values)
    if (!v->constant && rank >= 3 && v->dims.size() == rank)
      ++(Importer::preferred_layout(*v) == Layout::ChannelsLast ? channels_last : plain);
  const Layout layout = channels_last > plain || (channels_last > 0 && channels_last == plain && rank >= 4)
                            ? Layout::ChannelsLast
                            : Layout::Plain;
  std::array<OutputSlot, N> slots;
  for (std::size_t k = 0; k < N; ++k) {
    KILN_ONNX_TRY(slot, im.tensor(*values[k], layout, rank));
    slots[k] = slot;
  }
  KILN_ONNX_TRY(y, make(slots));
  im.define(0, y, layout);
  return Status::ok();
}

// `a` and `b` of one type: a constant one converted to the other's.
Status unify_types(Importer& im, Value& a, Value& b) {
  if (a.type == b.type) return Status::ok();
  KILN_ONNX_TRY(converted, b.constant ? with_type_of(im, b, a) : with_type_of(im, a, b));
  (b.constant ? b : a) = std::move(converted);
  return Status::ok();
}

// Defines the node's output 0 as `a` op `b`.
Status binary_op(Importer& im, ops::BinaryOperation op, Value& a, Value& b) {
  if (a.constant && b.constant) {
    const ConstValue &ca = *a.constant, &cb = *b.constant;
    ConstValue out{{}, ca.is_float || cb.is_float, false, {}, {}};
    return fold_broadcast<2>(im, {&a, &b}, std::move(out), a.type, [&](ConstValue& y, const auto& at) -> Status {
      if (y.is_float) {
        KILN_ONNX_TRY(v, apply<float>(im, op, ca.float_at(at[0]), cb.float_at(at[1])));
        y.floats.push_back(v);
      } else {
        KILN_ONNX_TRY(v, apply<std::int64_t>(im, op, ca.int_at(at[0]), cb.int_at(at[1])));
        y.ints.push_back(v);
      }
      return Status::ok();
    });
  }
  if (auto status = unify_types(im, a, b); !status) return status;
  return broadcast_layer<2>(im, {&a, &b}, [&](const auto& in) { return im.add<ops::ElementwiseBinary>({op}, in); });
}

// Defines output 0 as `a` compared with `b`.
Status compare_op(Importer& im, ops::ComparisonOperation op, Value& a, Value& b) {
  if (a.constant && b.constant) {
    const ConstValue &ca = *a.constant, &cb = *b.constant;
    const bool floats = ca.is_float || cb.is_float;
    return fold_broadcast<2>(
        im, {&a, &b}, ConstValue{{}, false, true, {}, {}}, DataType::Boolean, [&](ConstValue& y, const auto& at) {
          y.ints.push_back(floats ? ops::Comparison::holds(op, ca.float_at(at[0]), cb.float_at(at[1]))
                                  : ops::Comparison::holds(op, ca.int_at(at[0]), cb.int_at(at[1])));
          return Status::ok();
        });
  }
  if (auto status = unify_types(im, a, b); !status) return status;
  return broadcast_layer<2>(im, {&a, &b}, [&](const auto& in) { return im.add<ops::Comparison>({op}, in); });
}

// The converter of a node of two inputs that `define(im, Operation, a, b)` defines.
template <auto Operation, Status (*define)(Importer&, decltype(Operation), Value&, Value&)>
Status two_inputs(Importer& im) {
  KILN_ONNX_TRY(a, im.input(0));
  KILN_ONNX_TRY(b, im.input(1));
  return define(im, Operation, *a, *b);
}

Value float_constant(float v) {
  Value value;
  value.constant = ConstValue{{}, true, false, {v}, {}};
  return value;
}

// NaN is the one value unequal to itself.
Status is_nan(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  return compare_op(im, ops::ComparisonOperation::NotEqual, *x, *x);
}

// x equal to +inf (detect_positive) or -inf (detect_negative); |x| equal to inf for both.
Status is_inf(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  const bool positive = im.attr_int("detect_positive", 1) != 0, negative = im.attr_int("detect_negative", 1) != 0;
  const float inf = std::numeric_limits<float>::infinity();
  if (!positive && !negative) {  // false everywhere: 0 == 1 over x's shape, folded
    Value zeros = float_constant(0.0f), one = float_constant(1.0f);
    zeros.dims = zeros.constant->dims = x->dims;
    zeros.constant->floats.assign(element_count(x->dims), 0.0f);
    return compare_op(im, ops::ComparisonOperation::Equal, zeros, one);
  }
  Value target = float_constant(positive ? inf : -inf);
  if (positive != negative) return compare_op(im, ops::ComparisonOperation::Equal, *x, target);
  if (x->constant) {
    Value magnitude = *x;
    for (float& v : magnitude.constant->floats) v = std::fabs(v);
    return compare_op(im, ops::ComparisonOperation::Equal, magnitude, target);
  }
  const Layout layout = Importer::preferred_layout(*x);
  KILN_ONNX_TRY(input, im.tensor(*x, layout, x->dims.size()));
  KILN_ONNX_TRY(magnitude_slot, im.add<ops::ElementwiseUnary>({ops::UnaryOperation::Abs}, {input}, "abs"));
  Value magnitude;
  magnitude.dims = x->dims;
  magnitude.type = x->type;
  magnitude.held.push_back({magnitude_slot, layout_order(layout, x->dims.size())});
  return compare_op(im, ops::ComparisonOperation::Equal, magnitude, target);
}

// Defines output 0 as `a` op `b` on Booleans.
Status logical_op(Importer& im, ops::LogicalOperation op, Value& a, Value& b) {
  if (a.constant && b.constant) {
    const ConstValue &ca = *a.constant, &cb = *b.constant;
    return fold_broadcast<2>(
        im, {&a, &b}, ConstValue{{}, false, true, {}, {}}, DataType::Boolean, [&](ConstValue& y, const auto& at) {
          y.ints.push_back(ops::LogicalBinary::apply(op, ca.int_at(at[0]) != 0, cb.int_at(at[1]) != 0));
          return Status::ok();
        });
  }
  return broadcast_layer<2>(im, {&a, &b}, [&](const auto& in) { return im.add<ops::LogicalBinary>({op}, in); });
}

Value boolean_constant(std::vector<std::int64_t> dims, std::vector<std::int64_t> values) {
  Value value;
  value.dims = dims;
  value.type = DataType::Boolean;
  value.constant = ConstValue{std::move(dims), false, true, {}, std::move(values)};
  return value;
}

// Not x is x Xor true.
Status logical_not(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  Value truth = boolean_constant({}, {1});
  return logical_op(im, ops::LogicalOperation::Xor, *x, truth);
}

// Defines output 0 as condition ? x : other, elementwise.
Status select(Importer& im, Value& condition, Value& x, Value& other) {
  if (condition.type != DataType::Boolean) return im.invalid("the condition is ", to_string(condition.type));
  if (condition.constant && x.constant && other.constant) {
    const ConstValue &c = *condition.constant, &cx = *x.constant, &co = *other.constant;
    ConstValue out{{}, cx.is_float, cx.is_bool, {}, {}};
    return fold_broadcast<3>(im, {&condition, &x, &other}, std::move(out), x.type, [&](ConstValue& y, const auto& at) {
      const bool first = c.int_at(at[0]) != 0;
      if (y.is_float)
        y.floats.push_back(first ? cx.float_at(at[1]) : co.float_at(at[2]));
      else
        y.ints.push_back(first ? cx.int_at(at[1]) : co.int_at(at[2]));
      return Status::ok();
    });
  }
  if (auto status = unify_types(im, x, other); !status) return status;
  return broadcast_layer<3>(im, {&condition, &x, &other}, [&](const auto& in) { return im.add<ops::Select>({}, in); });
}

Status where(Importer& im) {
  KILN_ONNX_TRY(condition, im.input(0));
  KILN_ONNX_TRY(x, im.input(1));
  KILN_ONNX_TRY(other, im.input(2));
  return select(im, *condition, *x, *other);
}

// The upper (or lower) triangle of the last two axes, from diagonal k on: x where a constant mask
// says, zero elsewhere. A causal attention mask is Trilu of ones.
Status trilu(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->dims.size() < 2) return im.invalid("the input has rank ", x->dims.size(), "; Trilu needs 2 or more");
  std::int64_t k = 0;
  if (im.has_input(1)) {
    KILN_ONNX_TRY(diagonal, im.constant_input(1, "k"));
    if (diagonal->size() != 1) return im.invalid("k must be a scalar");
    k = diagonal->int_at(0);
  }
  const bool upper = im.attr_int("upper", 1) != 0;
  const std::int64_t rows = x->dims[x->dims.size() - 2], columns = x->dims.back();
  if (rows * columns > static_cast<std::int64_t>(max_folded_elements))
    return im.error("a mask of ", rows * columns, " elements (at most ", max_folded_elements, ")");
  std::vector<std::int64_t> kept;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < columns; ++j) kept.push_back(upper ? j - i >= k : j - i <= k);
  Value mask = boolean_constant({rows, columns}, std::move(kept));
  Value zero;
  zero.type = x->type;
  zero.constant = x->type == DataType::Float32 ? ConstValue{{}, true, false, {0.0f}, {}}
                                               : ConstValue{{}, false, x->type == DataType::Boolean, {}, {0}};
  return select(im, mask, *x, zero);
}

// OneHot: the indices, a 1 inserted at `axis`, compared with the positions 0..depth-1 laid along
// that axis and with their negative spellings position - depth; `on` where either is equal, `off`
// elsewhere (so an index outside [-depth, depth) is off everywhere, as ONNX says). Depth and values
// must be constants: they set the output's shape and type.
Status one_hot(Importer& im) {
  KILN_ONNX_TRY(indices, im.input(0));
  KILN_ONNX_TRY(depth_value, im.constant_input(1, "depth"));
  KILN_ONNX_TRY(values, im.input(2));
  if (!values->constant) return im.error("values must be a constant (an initializer or computable at import)");
  if (depth_value->size() != 1) return im.invalid("depth has ", depth_value->size(), " elements; OneHot takes one");
  const std::int64_t depth = depth_value->int_at(0);
  if (depth < 1) return im.invalid("depth ", depth, " (OneHot needs at least 1)");
  if (values->constant->size() != 2)
    return im.invalid("values has ", values->constant->size(), " elements; OneHot takes [off, on]");
  const std::size_t rank = indices->dims.size() + 1;
  KILN_ONNX_TRY(axis, normalized_axis(im, im.attr_int("axis", -1), rank));
  std::vector<std::int64_t> unsqueezed = indices->dims;
  unsqueezed.insert(unsqueezed.begin() + static_cast<std::ptrdiff_t>(axis), 1);

  Value index;
  index.dims = unsqueezed;
  index.type = DataType::Signed32;
  if (indices->constant) {  // ONNX casts float indices to integers, toward zero
    const ConstValue& given = *indices->constant;
    index.constant = ConstValue{unsqueezed, false, false, {}, {}};
    for (std::size_t i = 0; i < given.size(); ++i) index.constant->ints.push_back(given.int_at(i));
  } else {
    KILN_ONNX_TRY(slot, im.plain(*indices));
    if (indices->type == DataType::Float32) {
      KILN_ONNX_TRY(truncated, im.add<ops::Cast>({DataType::Signed32}, {slot}, "indices"));
      slot = truncated;
    } else if (indices->type != DataType::Signed32) {
      return im.error("indices of type ", to_string(indices->type), " (kiln takes integers and float32)");
    }
    KILN_ONNX_TRY(reshaped, im.add<ops::Reshape>({DimVector<std::int64_t>(unsqueezed.begin(), unsqueezed.end())},
                                                 {slot}, "unsqueezed"));
    index.held.push_back({reshaped, layout_order(Layout::Plain, rank)});
  }

  std::vector<std::int64_t> along(rank - axis, 1);
  along[0] = depth;
  Value position, negative;
  position.dims = negative.dims = along;
  position.type = negative.type = DataType::Signed32;
  position.constant = negative.constant = ConstValue{along, false, false, {}, {}};
  for (std::int64_t p = 0; p < depth; ++p) {
    position.constant->ints.push_back(p);
    negative.constant->ints.push_back(p - depth);
  }
  if (auto status = compare_op(im, ops::ComparisonOperation::Equal, index, position); !status) return status;
  KILN_ONNX_TRY(at_position, im.output_value(0));
  Value hit = *at_position;
  if (auto status = compare_op(im, ops::ComparisonOperation::Equal, index, negative); !status) return status;
  KILN_ONNX_TRY(at_negative, im.output_value(0));
  Value hit_negative = *at_negative;
  if (auto status = logical_op(im, ops::LogicalOperation::Or, hit, hit_negative); !status) return status;
  KILN_ONNX_TRY(either, im.output_value(0));
  Value condition = *either;
  Value off, on;
  off.type = on.type = values->type;
  off.constant = on.constant = ConstValue{{}, values->constant->is_float, values->constant->is_bool, {}, {}};
  if (values->constant->is_float) {
    off.constant->floats = {values->constant->floats[0]};
    on.constant->floats = {values->constant->floats[1]};
  } else {
    off.constant->ints = {values->constant->ints[0]};
    on.constant->ints = {values->constant->ints[1]};
  }
  return select(im, condition, on, off);
}

// x broadcast to a shape (numpy): a Select whose condition, all true, has the dims x lacks.
Status expand(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  KILN_ONNX_TRY(shape, im.constant_input(1, "shape"));
  Value target;
  for (std::size_t i = 0; i < shape->size(); ++i) target.dims.push_back(shape->int_at(i));
  const std::array<const Value*, 2> both{x, &target};
  KILN_ONNX_TRY(dims, broadcast_dims(im, both));
  std::vector<std::int64_t> condition_dims(dims.size(), 1);
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::size_t lead = dims.size() - x->dims.size();
    if (d < lead || x->dims[d - lead] == 1) condition_dims[d] = dims[d];
  }
  const std::uint64_t count = element_count(condition_dims);
  if (count > max_folded_elements)
    return im.error("expanding by ", count, " copies (at most ", max_folded_elements, ")");
  Value truth = boolean_constant(condition_dims, std::vector<std::int64_t>(count, 1));
  return select(im, truth, *x, *x);
}

// `b` with its dims lined up from axis `axis` of a tensor of `rank` dims (ones after them).
Expected<Value> lined_up(Importer& im, Value& b, std::int64_t axis, std::int64_t rank) {
  const std::int64_t start = axis < 0 ? axis + rank : axis;
  const auto trailing = rank - start - static_cast<std::int64_t>(b.dims.size());
  if (start < 0 || trailing < 0) return im.invalid("axis ", axis, " does not fit B into A");
  std::vector<std::int64_t> dims = b.dims;
  dims.insert(dims.end(), static_cast<std::size_t>(trailing), 1);
  Value aligned;
  aligned.dims = dims;
  aligned.type = b.type;
  if (b.constant) {
    aligned.constant = *b.constant;
    aligned.constant->dims = dims;
    return aligned;
  }
  KILN_ONNX_TRY(slot, im.plain(b));
  KILN_ONNX_TRY(reshaped, im.add<ops::Reshape>({dims}, {slot}, "legacy_broadcast"));
  aligned.held.push_back({reshaped, layout_order(Layout::Plain, dims.size())});
  return aligned;
}

// Before opset 7, B broadcast only with broadcast = 1, its dims lined up from `axis` of A.
Expected<Value> legacy_broadcast(Importer& im, const Value& a, Value& b) {
  const auto axis = im.attr_int("axis");
  if (im.attr_int("broadcast", 0) == 0 || !axis) return b;
  return lined_up(im, b, *axis, static_cast<std::int64_t>(a.dims.size()));
}

// PRelu. Before opset 7 a vector of slopes, one per channel, lines up with x's axis 1.
Status prelu(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  KILN_ONNX_TRY(slope, im.input(1));
  if (im.opset() < 7 && slope->dims.size() == 1 && x->dims.size() > 2 && slope->dims[0] == x->dims[1]) {
    KILN_ONNX_TRY(aligned, lined_up(im, *slope, 1, static_cast<std::int64_t>(x->dims.size())));
    return binary_op(im, ops::BinaryOperation::PRelu, *x, aligned);
  }
  return binary_op(im, ops::BinaryOperation::PRelu, *x, *slope);
}

template <ops::BinaryOperation Operation>
Status binary(Importer& im) {
  KILN_ONNX_TRY(a, im.input(0));
  KILN_ONNX_TRY(b, im.input(1));
  if (im.opset() < 7) {
    KILN_ONNX_TRY(aligned, legacy_broadcast(im, *a, *b));
    return binary_op(im, Operation, *a, aligned);
  }
  return binary_op(im, Operation, *a, *b);
}

// Mod: fmod = 1 is C's remainder, with the dividend's sign; fmod = 0 Python's, with the divisor's
// (ONNX asks float inputs for fmod = 1; kiln computes either on any type).
Status mod(Importer& im) {
  KILN_ONNX_TRY(a, im.input(0));
  KILN_ONNX_TRY(b, im.input(1));
  const std::int64_t fmod = im.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) return im.invalid("fmod ", fmod, " (ONNX allows 0 and 1)");
  return binary_op(im, fmod == 1 ? ops::BinaryOperation::FMod : ops::BinaryOperation::Mod, *a, *b);
}

// Pow: the result has the base's type (ONNX's T); the exponent may have another (T1). Computed
// operands of two types compute in Float32, an integer result truncated back as ONNX Runtime's is.
Status power(Importer& im) {
  KILN_ONNX_TRY(base, im.input(0));
  KILN_ONNX_TRY(exponent, im.input(1));
  if (im.opset() < 7 || base->type == exponent->type || base->constant || exponent->constant)
    return binary<ops::BinaryOperation::Power>(im);
  auto as_float = [&](Value& v, std::string_view suffix) -> Expected<Value> {
    if (v.type == DataType::Float32) return v;
    KILN_ONNX_TRY(slot, im.plain(v));
    KILN_ONNX_TRY(cast, im.add<ops::Cast>({DataType::Float32}, {slot}, suffix));
    Value widened;
    widened.dims = v.dims;
    widened.held.push_back({cast, layout_order(Layout::Plain, v.dims.size())});
    return widened;
  };
  KILN_ONNX_TRY(x, as_float(*base, "base_as_float"));
  KILN_ONNX_TRY(y, as_float(*exponent, "exponent_as_float"));
  const DataType result = base->type;
  return broadcast_layer<2>(im, {&x, &y}, [&](const auto& in) -> Expected<OutputSlot> {
    auto raised = im.add<ops::ElementwiseBinary>({ops::BinaryOperation::Power}, in);
    if (!raised || result == DataType::Float32) return raised;
    return im.add<ops::Cast>({result}, {*raised}, "as_base_type");
  });
}

// Max, Min and Sum take one or more inputs.
template <ops::BinaryOperation Operation>
Status variadic(Importer& im) {
  KILN_ONNX_TRY(first, im.input(0));
  if (im.num_inputs() == 1) {
    if (first->constant) {
      im.define_constant(0, *first->constant, first->type);
      return Status::ok();
    }
    const Layout layout = Importer::preferred_layout(*first);
    KILN_ONNX_TRY(slot, im.tensor(*first, layout, first->dims.size()));
    im.define(0, slot, layout);
    return Status::ok();
  }
  Value accumulated = *first;
  for (std::size_t i = 1; i < im.num_inputs(); ++i) {
    KILN_ONNX_TRY(next, im.input(i));
    if (auto status = binary_op(im, Operation, accumulated, *next); !status) return status;
    KILN_ONNX_TRY(defined, im.output_value(0));
    accumulated = *defined;
  }
  return Status::ok();
}

// The sum of one or more inputs divided by their count.
Status mean(Importer& im) {
  if (auto status = variadic<ops::BinaryOperation::Add>(im); !status || im.num_inputs() == 1) return status;
  KILN_ONNX_TRY(sum, im.output_value(0));
  Value sum_value = *sum;
  Value count;
  count.type = sum_value.type;
  count.constant = ConstValue{{}, true, false, {static_cast<float>(im.num_inputs())}, {}};
  return binary_op(im, ops::BinaryOperation::Div, sum_value, count);
}

constexpr ConverterEntry activations[] = {
    {"Celu",
     [](Importer& im) {
       return activation(im, {ActivationFunction::CELU, im.attr_float("alpha", 1.0f), 0.0f});
     }},
    {"Clip", clip},
    {"Elu",
     [](Importer& im) {
       return activation(im, {ActivationFunction::ELU, im.attr_float("alpha", 1.0f), 0.0f});
     }},
    {"Gelu", gelu},
    {"HardSigmoid",
     [](Importer& im) {
       return activation(im,
                         {ActivationFunction::HardSigmoid, im.attr_float("alpha", 0.2f), im.attr_float("beta", 0.5f)});
     }},
    {"HardSwish", [](Importer& im) { return activation(im, {ActivationFunction::HardSwish}); }},
    {"LeakyRelu",
     [](Importer& im) {
       return activation(im, {ActivationFunction::LeakyReLU, im.attr_float("alpha", 0.01f), 0.0f});
     }},
    {"Mish", [](Importer& im) { return activation(im, {ActivationFunction::Mish}); }},
    {"Relu", [](Importer& im) { return activation(im, {ActivationFunction::ReLU}); }},
    {"Selu",  // ONNX's defaults are float32's nearest values of SELU's constants
     [](Importer& im) {
       return activation(im, {ActivationFunction::SELU, im.attr_float("alpha", 1.67326319217681884765625f),
                              im.attr_float("gamma", 1.05070102214813232421875f)});
     }},
    {"Shrink",
     [](Importer& im) {
       return activation(im, {ActivationFunction::Shrink, im.attr_float("lambd", 0.5f), im.attr_float("bias", 0.0f)});
     }},
    {"Sigmoid", [](Importer& im) { return activation(im, {ActivationFunction::Sigmoid}); }},
    {"Softplus", [](Importer& im) { return activation(im, {ActivationFunction::Softplus}); }},
    {"Softsign", [](Importer& im) { return activation(im, {ActivationFunction::Softsign}); }},
    {"Tanh", [](Importer& im) { return activation(im, {ActivationFunction::Tanh}); }},
    {"ThresholdedRelu",
     [](Importer& im) {
       return activation(im, {ActivationFunction::ThresholdedReLU, im.attr_float("alpha", 1.0f), 0.0f});
     }},
};

constexpr ConverterEntry elementwise[] = {
    {"Abs", unary<ops::UnaryOperation::Abs>},
    {"Acos", unary<ops::UnaryOperation::Acos>},
    {"Acosh", unary<ops::UnaryOperation::Acosh>},
    {"Add", binary<ops::BinaryOperation::Add>},
    {"And", two_inputs<ops::LogicalOperation::And, logical_op>},
    {"Asin", unary<ops::UnaryOperation::Asin>},
    {"Asinh", unary<ops::UnaryOperation::Asinh>},
    {"Atan", unary<ops::UnaryOperation::Atan>},
    {"Atanh", unary<ops::UnaryOperation::Atanh>},
    {"Ceil", unary<ops::UnaryOperation::Ceil>},
    {"Cos", unary<ops::UnaryOperation::Cos>},
    {"Cosh", unary<ops::UnaryOperation::Cosh>},
    {"Div", binary<ops::BinaryOperation::Div>},
    {"Equal", two_inputs<ops::ComparisonOperation::Equal, compare_op>},
    {"Erf", unary<ops::UnaryOperation::Erf>},
    {"Exp", unary<ops::UnaryOperation::Exp>},
    {"Expand", expand},
    {"Floor", unary<ops::UnaryOperation::Floor>},
    {"Greater", two_inputs<ops::ComparisonOperation::Greater, compare_op>},
    {"IsInf", is_inf},
    {"IsNaN", is_nan},
    {"GreaterOrEqual", two_inputs<ops::ComparisonOperation::GreaterOrEqual, compare_op>},
    {"Less", two_inputs<ops::ComparisonOperation::Less, compare_op>},
    {"LessOrEqual", two_inputs<ops::ComparisonOperation::LessOrEqual, compare_op>},
    {"Log", unary<ops::UnaryOperation::Log>},
    {"Max", variadic<ops::BinaryOperation::Maximum>},
    {"Mean", mean},
    {"Min", variadic<ops::BinaryOperation::Minimum>},
    {"Mod", mod},
    {"Mul", binary<ops::BinaryOperation::Mul>},
    {"Neg", unary<ops::UnaryOperation::Neg>},
    {"Not", logical_not},
    {"OneHot", one_hot},
    {"Or", two_inputs<ops::LogicalOperation::Or, logical_op>},
    {"Pow", power},
    {"PRelu", prelu},
    {"Reciprocal", unary<ops::UnaryOperation::Reciprocal>},
    {"Round", unary<ops::UnaryOperation::Round>},
    {"Sign", unary<ops::UnaryOperation::Sign>},
    {"Sin", unary<ops::UnaryOperation::Sin>},
    {"Sinh", unary<ops::UnaryOperation::Sinh>},
    {"Sqrt", unary<ops::UnaryOperation::Sqrt>},
    {"Sub", binary<ops::BinaryOperation::Sub>},
    {"Sum", variadic<ops::BinaryOperation::Add>},
    {"Tan", unary<ops::UnaryOperation::Tan>},
    {"Trilu", trilu},
    {"Where", where},
    {"Xor", two_inputs<ops::LogicalOperation::Xor, logical_op>},
};

}  // namespace

std::span<const ConverterEntry> activation_converters() { return activations; }
std::span<const ConverterEntry> elementwise_converters() { return elementwise; }

}  // namespace kiln::onnx::detail
