// SPDX-License-Identifier: Apache-2.0
// ONNX ReduceMean, ReduceSum, ReduceMax and ReduceMin.
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
  for (std::int64_t& axis : axes) {
    if (axis < -rank || axis >= rank) return im.invalid("axis ", axis, " is out of range for rank ", rank);
    if (axis < 0) axis += rank;
  }
  // Channels-last survives a reduction that keeps the rank.
  const Layout layout = keep_dims ? Importer::preferred_layout(*x) : Layout::Plain;
  if (layout == Layout::ChannelsLast)
    for (std::int64_t& axis : axes)
      axis = static_cast<std::int64_t>(channels_last_axis(static_cast<std::size_t>(axis), x->dims.size()));
  return im.define_op<ops::Reduce>({Operation, axes, keep_dims}, *x, layout);
}

constexpr ConverterEntry converters[] = {
    {"ReduceMax", reduce<ops::ReduceOperation::Max>},
    {"ReduceMean", reduce<ops::ReduceOperation::Mean>},
    {"ReduceMin", reduce<ops::ReduceOperation::Min>},
    {"ReduceSum", reduce<ops::ReduceOperation::Sum>},
};

}  // namespace

std::span<const ConverterEntry> reduce_converters() { return converters; }

}  // namespace kiln::onnx::detail
