// SPDX-License-Identifier: Apache-2.0
// ONNX ReduceMean, ReduceSum, ReduceMax and ReduceMin.
#include <algorithm>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

template <ops::ReduceOperation Operation>
Status reduce(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  const auto rank = static_cast<std::int64_t>(x->dims.size());
  // Axes became an input in opset 13 for ReduceSum and in opset 18 for the others.
  const bool axes_input = im.opset() >= (Operation == ops::ReduceOperation::Sum ? 13 : 18);
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
  // The reduction runs in the layout the input has; without keepdims, the axes left keep their
  // order (channels-last [N, H, W, C] reduced over H and W is ONNX's [N, C]).
  const Layout layout = Importer::preferred_layout(*x);
  const auto order = layout_order(layout, x->dims.size());
  std::vector<std::int64_t> kiln_axes;
  for (std::int64_t axis : axes)
    kiln_axes.push_back(static_cast<std::int64_t>(position_in(order, static_cast<std::size_t>(axis))));
  // Without keepdims, an axis left is renumbered past the reduced axes below it.
  const auto reduced_below = [&](std::size_t axis) {
    return static_cast<std::size_t>(
        std::ranges::count_if(axes, [&](std::int64_t a) { return a < std::int64_t(axis); }));
  };
  std::vector<std::size_t> output_order;
  for (std::size_t axis : order)
    if (keep_dims)
      output_order.push_back(axis);
    else if (std::ranges::find(axes, static_cast<std::int64_t>(axis)) == axes.end())
      output_order.push_back(axis - reduced_below(axis));
  KILN_ONNX_TRY(input, im.tensor(*x, layout, x->dims.size()));
  KILN_ONNX_TRY(y, im.add<ops::Reduce>({Operation, kiln_axes, keep_dims}, {input}));
  im.define(0, y, output_order);
  return Status::ok();
}

constexpr ConverterEntry reduce_ops[] = {
    {"ReduceMax", reduce<ops::ReduceOperation::Max>},
    {"ReduceMean", reduce<ops::ReduceOperation::Mean>},
    {"ReduceMin", reduce<ops::ReduceOperation::Min>},
    {"ReduceSum", reduce<ops::ReduceOperation::Sum>},
};

}  // namespace

std::span<const ConverterEntry> reduce_converters() { return reduce_ops; }

}  // namespace kiln::onnx::detail
