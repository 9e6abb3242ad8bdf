// SPDX-License-Identifier: Apache-2.0
// ONNX activations and elementwise ops: Relu ... Gelu, Abs ... Reciprocal, Add ... Pow, Max, Min.
// They run in whichever layout their inputs already have, so a chain of them between convolutions
// stays channels-last.
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
  return im.define_op<ops::ElementwiseUnary>({Operation}, *x, Importer::preferred_layout(*x));
}

Expected<std::vector<std::int64_t>> broadcast_dims(Importer& im, std::span<const std::int64_t> a,
                                                   std::span<const std::int64_t> b) {
  const std::size_t rank = std::max(a.size(), b.size());
  std::vector<std::int64_t> out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return im.invalid("inputs of shapes do not broadcast (", da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
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
  }
  return a;
}

// Shape arithmetic (Shape -> Gather -> Mul -> Concat -> Reshape) is folded here.
Status fold_binary(Importer& im, ops::BinaryOperation op, const ConstValue& a, const ConstValue& b, DataType type) {
  KILN_ONNX_TRY(dims, broadcast_dims(im, a.dims, b.dims));
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
  ConstValue out{dims, a.is_float || b.is_float, false, {}, {}};
  std::vector<std::int64_t> index(rank, 0);
  for (std::uint64_t j = 0; j < element_count(dims); ++j) {
    const std::size_t ia = source_index(a, index), ib = source_index(b, index);
    if (out.is_float) {
      KILN_ONNX_TRY(v, apply<float>(im, op, a.float_at(ia), b.float_at(ib)));
      out.floats.push_back(v);
    } else {
      KILN_ONNX_TRY(v, apply<std::int64_t>(im, op, a.int_at(ia), b.int_at(ib)));
      out.ints.push_back(v);
    }
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

// Defines the node's output 0 as `a` op `b`.
Status binary_op(Importer& im, ops::BinaryOperation op, Value& a, Value& b) {
  if (a.constant && b.constant) return fold_binary(im, op, *a.constant, *b.constant, a.type);
  if (a.type != b.type) {
    KILN_ONNX_TRY(converted, b.constant ? with_type_of(im, b, a) : with_type_of(im, a, b));
    Value computed = b.constant ? a : b;
    return b.constant ? binary_op(im, op, computed, converted) : binary_op(im, op, converted, computed);
  }
  KILN_ONNX_TRY(dims, broadcast_dims(im, a.dims, b.dims));
  const std::size_t rank = dims.size();
  // Channels-last when more computed inputs have only that than have the plain order too, or as
  // many of each in an image's rank (4 and more): a residual Add of a CNN keeps its channels-last
  // flow, one of a transformer's [batch, tokens, features] its plain one. Broadcast constants are
  // permuted at import.
  int channels_last = 0, plain = 0;
  for (const Value* v : {&a, &b})
    if (!v->constant && rank >= 3 && v->dims.size() == rank)
      ++(Importer::preferred_layout(*v) == Layout::ChannelsLast ? channels_last : plain);
  const Layout layout = channels_last > plain || (channels_last > 0 && channels_last == plain && rank >= 4)
                            ? Layout::ChannelsLast
                            : Layout::Plain;
  KILN_ONNX_TRY(sa, im.tensor(a, layout, rank));
  KILN_ONNX_TRY(sb, im.tensor(b, layout, rank));
  KILN_ONNX_TRY(y, im.add<ops::ElementwiseBinary>({op}, {sa, sb}));
  im.define(0, y, layout);
  return Status::ok();
}

// Before opset 7, B broadcast only with broadcast = 1, its dims lined up from `axis` of A.
Expected<Value> legacy_broadcast(Importer& im, const Value& a, Value& b) {
  const auto axis = im.attr_int("axis");
  if (im.attr_int("broadcast", 0) == 0 || !axis) return b;
  const auto rank = static_cast<std::int64_t>(a.dims.size());
  const std::int64_t start = *axis < 0 ? *axis + rank : *axis;
  const auto trailing = rank - start - static_cast<std::int64_t>(b.dims.size());
  if (start < 0 || trailing < 0) return im.invalid("axis ", *axis, " does not fit B into A");
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

// Max and Min take one or more inputs.
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

constexpr ConverterEntry activations[] = {
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
    {"Relu", [](Importer& im) { return activation(im, {ActivationFunction::ReLU}); }},
    {"Sigmoid", [](Importer& im) { return activation(im, {ActivationFunction::Sigmoid}); }},
    {"Tanh", [](Importer& im) { return activation(im, {ActivationFunction::Tanh}); }},
};

constexpr ConverterEntry elementwise[] = {
    {"Abs", unary<ops::UnaryOperation::Abs>},         {"Add", binary<ops::BinaryOperation::Add>},
    {"Div", binary<ops::BinaryOperation::Div>},       {"Erf", unary<ops::UnaryOperation::Erf>},
    {"Exp", unary<ops::UnaryOperation::Exp>},         {"Log", unary<ops::UnaryOperation::Log>},
    {"Max", variadic<ops::BinaryOperation::Maximum>}, {"Min", variadic<ops::BinaryOperation::Minimum>},
    {"Mul", binary<ops::BinaryOperation::Mul>},       {"Neg", unary<ops::UnaryOperation::Neg>},
    {"Pow", binary<ops::BinaryOperation::Power>},     {"Reciprocal", unary<ops::UnaryOperation::Reciprocal>},
    {"Sqrt", unary<ops::UnaryOperation::Sqrt>},       {"Sub", binary<ops::BinaryOperation::Sub>},
};

}  // namespace

std::span<const ConverterEntry> activation_converters() { return activations; }
std::span<const ConverterEntry> elementwise_converters() { return elementwise; }

}  // namespace kiln::onnx::detail
