// SPDX-License-Identifier: Apache-2.0
// ONNX's reductions, ArgMax and ArgMin, and Hardmax. ReduceSum, ReduceMean, ReduceMax, ReduceMin and
// ReduceProd are one kiln Reduce; ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp
// a Reduce with elementwise layers around it (LogSumExp shifted by the maximum, so that no exp
// overflows). A reduction over an empty axis is a constant, folded here.
#include <algorithm>
#include <limits>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

enum class Reduction : std::uint8_t { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

// The Reduce layer at the heart of a reduction.
constexpr ops::ReduceOperation folded_by(Reduction r) {
  switch (r) {
    case Reduction::Mean: return ops::ReduceOperation::Mean;
    case Reduction::Max: return ops::ReduceOperation::Max;
    case Reduction::Min: return ops::ReduceOperation::Min;
    case Reduction::Prod: return ops::ReduceOperation::Prod;
    default: return ops::ReduceOperation::Sum;
  }
}

// A reduction of no elements, as ONNX defines it (opset 18); none for the mean.
std::optional<float> of_nothing(Reduction r) {
  constexpr float infinity = std::numeric_limits<float>::infinity();
  switch (r) {
    case Reduction::Mean: return std::nullopt;
    case Reduction::Max: return -infinity;
    case Reduction::Min: return infinity;
    case Reduction::Prod: return 1.0f;
    case Reduction::LogSum:
    case Reduction::LogSumExp: return -infinity;
    default: return 0.0f;
  }
}

// The Reduce of `input` (its `axes` in kiln's order) with the layers around it that make `R`.
template <Reduction R>
Expected<OutputSlot> reduction(Importer& im, OutputSlot input, const DimVector<std::int64_t>& axes, bool keep_dims) {
  using ops::BinaryOperation, ops::UnaryOperation;
  OutputSlot folded = input;
  std::optional<OutputSlot> shift;  // LogSumExp's maximum, with the reduced axes kept
  if constexpr (R == Reduction::L1) {
    KILN_ONNX_TRY(magnitude, im.add<ops::ElementwiseUnary>({UnaryOperation::Abs}, {input}, "abs"));
    folded = magnitude;
  } else if constexpr (R == Reduction::L2 || R == Reduction::SumSquare) {
    KILN_ONNX_TRY(square, im.add<ops::ElementwiseBinary>({BinaryOperation::Mul}, {input, input}, "square"));
    folded = square;
  } else if constexpr (R == Reduction::LogSumExp) {
    KILN_ONNX_TRY(largest, im.add<ops::Reduce>({ops::ReduceOperation::Max, axes, true}, {input}, "max"));
    KILN_ONNX_TRY(shifted, im.add<ops::ElementwiseBinary>({BinaryOperation::Sub}, {input, largest}, "shifted"));
    KILN_ONNX_TRY(exponential, im.add<ops::ElementwiseUnary>({UnaryOperation::Exp}, {shifted}, "exp"));
    folded = exponential;
    shift = largest;
  }
  KILN_ONNX_TRY(y, im.add<ops::Reduce>({folded_by(R), axes, keep_dims}, {folded}));
  if constexpr (R == Reduction::L2) return im.add<ops::ElementwiseUnary>({UnaryOperation::Sqrt}, {y}, "sqrt");
  if constexpr (R == Reduction::LogSum || R == Reduction::LogSumExp) {
    KILN_ONNX_TRY(logarithm, im.add<ops::ElementwiseUnary>({UnaryOperation::Log}, {y}, "log"));
    if constexpr (R == Reduction::LogSum) return logarithm;
    if (!keep_dims) {
      DimVector<std::int64_t> reduced;  // the maximum reshaped, not reduced again, to the result's dims
      for (auto d : im.info(y).shape.dims()) reduced.push_back(d);
      KILN_ONNX_TRY(squeezed, im.add<ops::Reshape>({reduced}, {*shift}, "max_squeezed"));
      shift = squeezed;
    }
    return im.add<ops::ElementwiseBinary>({BinaryOperation::Add}, {logarithm, *shift}, "unshifted");
  }
  return y;
}

// ONNX's `axes` (non-negative) as positions in a tensor held in `order`.
DimVector<std::int64_t> kiln_axes(std::span<const std::size_t> order, std::span<const std::int64_t> axes) {
  DimVector<std::int64_t> positions;
  for (std::int64_t axis : axes)
    positions.push_back(static_cast<std::int64_t>(position_in(order, static_cast<std::size_t>(axis))));
  return positions;
}

// The order of the result of reducing `axes` of a tensor held in `order`: without keepdims the
// axes left keep their order, renumbered past the reduced axes below them (channels-last
// [N, H, W, C] reduced over H and W is ONNX's [N, C]).
std::vector<std::size_t> order_after(std::span<const std::size_t> order, std::span<const std::int64_t> axes,
                                     bool keep_dims) {
  if (keep_dims) return {order.begin(), order.end()};
  const auto reduced_below = [&](std::size_t axis) {
    return static_cast<std::size_t>(
        std::ranges::count_if(axes, [&](std::int64_t a) { return a < static_cast<std::int64_t>(axis); }));
  };
  std::vector<std::size_t> kept;
  for (std::size_t axis : order)
    if (std::ranges::find(axes, static_cast<std::int64_t>(axis)) == axes.end())
      kept.push_back(axis - reduced_below(axis));
  return kept;
}

template <Reduction R>
Status reduce(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  const auto rank = static_cast<std::int64_t>(x->dims.size());
  // Axes became an input in opset 13 for ReduceSum and in opset 18 for the others.
  const bool axes_input = im.opset() >= (R == Reduction::Sum ? 13 : 18);
  std::vector<std::int64_t> axes;
  if (axes_input && im.has_input(1)) {
    KILN_ONNX_TRY(constant, im.constant_input(1, "axes"));
    for (std::size_t i = 0; i < constant->size(); ++i) axes.push_back(constant->int_at(i));
  } else if (!axes_input) {
    axes = im.attr_ints("axes").value_or(std::vector<std::int64_t>{});
  }
  const bool keep_dims = im.attr_int("keepdims", 1) != 0;
  if (axes.empty() && im.attr_int("noop_with_empty_axes", 0) != 0) {
    const Layout layout = Importer::preferred_layout(*x);
    KILN_ONNX_TRY(same, im.tensor(*x, layout, x->dims.size()));
    im.define(0, same, layout);
    return Status::ok();
  }
  if (axes.empty())  // all of them
    for (std::int64_t axis = 0; axis < rank; ++axis) axes.push_back(axis);
  for (std::int64_t& axis : axes) {
    if (axis < -rank || axis >= rank) return im.invalid("axis ", axis, " is out of range for rank ", rank);
    if (axis < 0) axis += rank;
  }
  if (std::ranges::any_of(axes, [&](std::int64_t axis) { return x->dims[static_cast<std::size_t>(axis)] == 0; })) {
    const auto value = of_nothing(R);
    if (!value) return im.error("the mean of an empty axis is not defined");
    ConstValue empty;
    for (std::int64_t d = 0; d < rank; ++d)
      if (std::ranges::find(axes, d) == axes.end())
        empty.dims.push_back(x->dims[static_cast<std::size_t>(d)]);
      else if (keep_dims)
        empty.dims.push_back(1);
    empty.floats.assign(element_count(empty.dims), *value);
    im.define_constant(0, std::move(empty), x->type);
    return Status::ok();
  }
  // The reduction runs in the layout the input has.
  const Layout layout = Importer::preferred_layout(*x);
  const auto order = layout_order(layout, x->dims.size());
  KILN_ONNX_TRY(input, im.tensor(*x, layout, x->dims.size()));
  KILN_ONNX_TRY(y, reduction<R>(im, input, kiln_axes(order, axes), keep_dims));
  im.define(0, y, order_after(order, axes, keep_dims));
  return Status::ok();
}

// ArgMax, ArgMin: the index (int64 to ONNX, Signed32 to kiln) of the extreme along one axis.
template <ops::ArgFunction F>
Status arg_extreme(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  KILN_ONNX_TRY(axis, normalized_axis(im, im.attr_int("axis", 0), x->dims.size()));
  const bool keep_dims = im.attr_int("keepdims", 1) != 0;
  const Layout layout = Importer::preferred_layout(*x);
  const auto order = layout_order(layout, x->dims.size());
  const std::vector<std::int64_t> axes{static_cast<std::int64_t>(axis)};
  KILN_ONNX_TRY(input, im.tensor(*x, layout, x->dims.size()));
  KILN_ONNX_TRY(y, im.add<ops::ArgMinMax>(
                       {F, kiln_axes(order, axes)[0], keep_dims, im.attr_int("select_last_index", 0) != 0}, {input}));
  im.define(0, y, order_after(order, axes, keep_dims));
  return Status::ok();
}

// Hardmax: 1 where the first maximum along `axis` lies, 0 elsewhere, as ArgMax (keeping the axis)
// compared with each position's index. Before opset 13 the axes from `axis` on are one flattened axis.
Status hardmax(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  const auto rank = static_cast<std::int64_t>(x->dims.size());
  if (rank == 0) return im.invalid("input is a scalar");
  const bool flattened = im.opset() < 13;
  std::int64_t axis = im.attr_int("axis", flattened ? 1 : -1);
  if (axis < -rank || axis >= rank) return im.invalid("axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  KILN_ONNX_TRY(input, im.plain(*x));
  std::vector<std::int64_t> dims = x->dims;
  if (flattened) {
    const auto split = static_cast<std::size_t>(axis);
    dims = {static_cast<std::int64_t>(element_count(std::span(x->dims).first(split))),
            static_cast<std::int64_t>(element_count(std::span(x->dims).subspan(split)))};
    KILN_ONNX_TRY(rows, im.add<ops::Reshape>({dims}, {input}, "rows"));
    input = rows;
    axis = 1;
  }
  const auto length = static_cast<std::size_t>(dims[static_cast<std::size_t>(axis)]);
  KILN_ONNX_TRY(first_max, im.add<ops::ArgMinMax>({ops::ArgFunction::Max, axis, true, false}, {input}, "argmax"));
  // Each position's index along the axis, shaped [length, 1, ...] to broadcast against x.
  std::vector<std::int64_t> index_dims(dims.size() - static_cast<std::size_t>(axis), 1);
  index_dims[0] = static_cast<std::int64_t>(length);
  std::vector<std::int64_t> indices(length);
  for (std::size_t i = 0; i < length; ++i) indices[i] = static_cast<std::int64_t>(i);
  const OutputSlot positions =
      im.add_constant({index_dims, false, false, {}, std::move(indices)}, DataType::Signed32, "positions");
  KILN_ONNX_TRY(is_max, im.add<ops::Comparison>({ops::ComparisonOperation::Equal}, {first_max, positions}, "is_max"));
  const OutputSlot one = im.add_constant({{}, true, false, {1.0f}, {}}, DataType::Float32, "one");
  const OutputSlot zero = im.add_constant({{}, true, false, {0.0f}, {}}, DataType::Float32, "zero");
  KILN_ONNX_TRY(y, im.add<ops::Select>({}, {is_max, one, zero}, flattened ? "flat" : ""));
  if (flattened) {
    KILN_ONNX_TRY(unflattened, im.add<ops::Reshape>({x->dims}, {y}));
    y = unflattened;
  }
  im.define(0, y, Layout::Plain);
  return Status::ok();
}

// CumSum: a CumulativeSum along the axis its second input gives, which must be a constant.
Status cumulative_sum(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  KILN_ONNX_TRY(axis_value, im.constant_input(1, "axis"));
  if (axis_value->size() != 1) return im.invalid("axis has ", axis_value->size(), " elements; CumSum takes one");
  KILN_ONNX_TRY(axis, normalized_axis(im, axis_value->int_at(0), x->dims.size()));
  KILN_ONNX_TRY(input, im.plain(*x));
  KILN_ONNX_TRY(y, im.add<ops::CumulativeSum>({static_cast<std::int64_t>(axis), im.attr_int("exclusive", 0) != 0,
                                               im.attr_int("reverse", 0) != 0},
                                              {input}));
  im.define(0, y, Layout::Plain);
  return Status::ok();
}

// TopK: k is an attribute before opset 10 and a constant input from then on. kiln always orders
// the result (largest or smallest first), which `sorted` = 0 allows: ONNX leaves that order open.
Status top_k(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  std::int64_t k = 0;
  if (im.opset() < 10) {
    const auto attribute = im.attr_int("k");
    if (!attribute) return im.invalid("'k' is missing");
    k = *attribute;
  } else {
    KILN_ONNX_TRY(k_value, im.constant_input(1, "k"));
    if (k_value->size() != 1) return im.invalid("k has ", k_value->size(), " elements; TopK takes one");
    k = k_value->int_at(0);
  }
  KILN_ONNX_TRY(axis, normalized_axis(im, im.attr_int("axis", -1), x->dims.size()));
  if (k < 1 || k > x->dims[axis])
    return im.invalid("k is ", k, "; axis ", axis, " has ", x->dims[axis], " elements (kiln takes 1 to that)");
  KILN_ONNX_TRY(input, im.plain(*x));
  KILN_ONNX_TRY(values, im.add<ops::TopK>({static_cast<std::uint32_t>(k), static_cast<std::int64_t>(axis),
                                           im.attr_int("largest", 1) != 0},
                                          {input}));
  im.define(0, values, Layout::Plain);
  im.define(1, OutputSlot{values.layer, 1}, Layout::Plain);
  return Status::ok();
}

constexpr ConverterEntry reduce_ops[] = {
    {"ArgMax", arg_extreme<ops::ArgFunction::Max>},
    {"ArgMin", arg_extreme<ops::ArgFunction::Min>},
    {"CumSum", cumulative_sum},
    {"Hardmax", hardmax},
    {"ReduceL1", reduce<Reduction::L1>},
    {"ReduceL2", reduce<Reduction::L2>},
    {"ReduceLogSum", reduce<Reduction::LogSum>},
    {"ReduceLogSumExp", reduce<Reduction::LogSumExp>},
    {"ReduceMax", reduce<Reduction::Max>},
    {"ReduceMean", reduce<Reduction::Mean>},
    {"ReduceMin", reduce<Reduction::Min>},
    {"ReduceProd", reduce<Reduction::Prod>},
    {"ReduceSum", reduce<Reduction::Sum>},
    {"ReduceSumSquare", reduce<Reduction::SumSquare>},
    {"TopK", top_k},
};

}  // namespace

std::span<const ConverterEntry> reduce_converters() { return reduce_ops; }

}  // namespace kiln::onnx::detail
