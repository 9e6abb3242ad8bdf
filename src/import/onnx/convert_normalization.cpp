// SPDX-License-Identifier: Apache-2.0
// ONNX BatchNormalization (inference), LayerNormalization, GroupNormalization, InstanceNormalization, Softmax
// and LogSoftmax.
#include <numeric>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

Status batch_normalization(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->dims.size() < 2) return im.invalid("input must have a channel dimension (rank 2 or more)");
  if (im.attr_int("training_mode", 0) != 0) return im.error("training_mode 1 (kiln runs inference only)");
  for (std::size_t i = 1; i < 5; ++i)
    if (im.output_used(i)) return im.error("output ", i, " (running statistics are a training output)");
  if (im.opset() < 9 && im.attr_int("spatial", 1) != 1) return im.error("spatial 0 (per-element statistics)");
  // ONNX: scale, B, mean, var; kiln: mean, variance, beta, gamma.
  std::vector<OutputSlot> inputs;
  KILN_ONNX_TRY(input, im.tensor(*x, Layout::ChannelsLast, x->dims.size()));
  inputs.push_back(input);
  for (std::size_t onnx_index : {3u, 4u, 2u, 1u}) {
    KILN_ONNX_TRY(v, im.input(onnx_index));
    KILN_ONNX_TRY(slot, im.plain(*v));
    inputs.push_back(slot);
  }
  KILN_ONNX_TRY(y, im.add<ops::BatchNormalization>({im.attr_float("epsilon", 1e-5f)}, inputs));
  im.define(0, y, Layout::ChannelsLast);
  return Status::ok();
}

// LayerNormalization (opset 17): the rows from `axis` on, in the model's own dimension order.
Status layer_normalization(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->dims.empty()) return im.invalid("input is a scalar");
  if (const std::int64_t stash = im.attr_int("stash_type", 1); stash != 1)
    return im.error("stash_type ", stash, " (kiln computes the statistics in float)");
  std::vector<OutputSlot> inputs;
  for (std::size_t i = 0; i < im.num_inputs(); ++i) {
    KILN_ONNX_TRY(v, im.input(i));
    KILN_ONNX_TRY(slot, im.plain(*v));
    inputs.push_back(slot);
  }
  const bool statistics = im.output_used(1) || im.output_used(2);
  KILN_ONNX_TRY(y, im.add<ops::LayerNormalization>(
                       {im.attr_int("axis", -1), im.attr_float("epsilon", 1e-5f), statistics}, inputs));
  im.define(0, y, Layout::Plain);
  if (statistics)
    for (std::uint32_t i = 1; i < 3; ++i) im.define(i, OutputSlot{y.layer, i}, Layout::Plain);
  return Status::ok();
}

// x of [N, C, ...] normalised per `groups` of its channels (all its other elements with them),
// then scaled and shifted per group (GroupNormalization, opset 18) or per channel
// (InstanceNormalization, groups = C): a LayerNormalization of each group's elements, reshaped.
Status normalize_groups(Importer& im, std::int64_t groups, bool per_channel) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->dims.size() < 3) return im.invalid("input has rank ", x->dims.size(), "; it needs N, C and spatial axes");
  const std::int64_t n = x->dims[0], c = x->dims[1];
  if (groups <= 0 || c % groups != 0) return im.invalid("num_groups ", groups, " does not divide the channels ", c);
  const std::int64_t length = static_cast<std::int64_t>(element_count(x->dims)) / (n * groups);
  const std::int64_t affine = per_channel ? c : groups;
  KILN_ONNX_TRY(input, im.plain(*x));
  KILN_ONNX_TRY(rows, im.add<ops::Reshape>({{n, groups, length}}, {input}, "groups"));
  ConstValue ones{{length}, true, false, std::vector<float>(static_cast<std::size_t>(length), 1.0f), {}};
  const OutputSlot unit = im.add_constant(ones, DataType::Float32, "unit_scale");
  KILN_ONNX_TRY(normalized, im.add<ops::LayerNormalization>({-1, im.attr_float("epsilon", 1e-5f)}, {rows, unit}));
  // Scale and bias of [affine] seen as [affine, 1, ...] against [N, affine, rest].
  const std::int64_t rest = static_cast<std::int64_t>(element_count(x->dims)) / (n * affine);
  KILN_ONNX_TRY(regrouped, im.add<ops::Reshape>({{n, affine, rest}}, {normalized}, "affine_groups"));
  OutputSlot y = regrouped;
  for (std::size_t i : {1u, 2u}) {
    KILN_ONNX_TRY(v, im.input(i));
    if (v->dims.size() != 1 || v->dims[0] != affine)
      return im.invalid(i == 1 ? "scale" : "bias", " has shape of ", v->dims.size(), " dimensions; it must be [",
                        affine, "]");
    KILN_ONNX_TRY(vector, im.plain(*v));
    KILN_ONNX_TRY(column, im.add<ops::Reshape>({{affine, 1}}, {vector}, i == 1 ? "scale_column" : "bias_column"));
    KILN_ONNX_TRY(applied,
                  im.add<ops::ElementwiseBinary>({i == 1 ? ops::BinaryOperation::Mul : ops::BinaryOperation::Add},
                                                 {y, column}, i == 1 ? "scaled" : "shifted"));
    y = applied;
  }
  KILN_ONNX_TRY(out, im.add<ops::Reshape>({x->dims}, {y}));
  im.define(0, out, Layout::Plain);
  return Status::ok();
}

Status instance_normalization(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->dims.size() < 3) return im.invalid("input has rank ", x->dims.size(), "; it needs N, C and spatial axes");
  return normalize_groups(im, x->dims[1], true);
}

Status group_normalization(Importer& im) {
  const auto groups = im.attr_int("num_groups");
  if (!groups) return im.invalid("num_groups is missing");
  return normalize_groups(im, *groups, false);
}

template <bool Log>
Status softmax(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  const auto rank = static_cast<std::int64_t>(x->dims.size());
  if (rank == 0) return im.invalid("input is a scalar");
  std::int64_t axis = im.attr_int("axis", im.opset() < 13 ? 1 : -1);
  if (axis < -rank || axis >= rank) return im.invalid("axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  if (im.opset() < 13 && axis != rank - 1) {
    // Opsets before 13 normalise over all of [axis, rank) as one flattened axis.
    const auto outer = std::accumulate(x->dims.begin(), x->dims.begin() + axis, std::int64_t{1}, std::multiplies<>());
    const auto inner = std::accumulate(x->dims.begin() + axis, x->dims.end(), std::int64_t{1}, std::multiplies<>());
    KILN_ONNX_TRY(input, im.plain(*x));
    KILN_ONNX_TRY(flat, im.add<ops::Reshape>({{outer, inner}}, {input}, "flatten"));
    KILN_ONNX_TRY(normalized, im.add<ops::Softmax>({-1, 1.0f, Log}, {flat}));
    KILN_ONNX_TRY(y, im.add<ops::Reshape>({x->dims}, {normalized}, "unflatten"));
    im.define(0, y, Layout::Plain);
    return Status::ok();
  }
  const Layout layout = Importer::preferred_layout(*x);
  const auto kiln_axis = layout == Layout::Plain ? axis : static_cast<std::int64_t>(channels_last_axis(axis, rank));
  return im.define_op<ops::Softmax>({kiln_axis, 1.0f, Log}, *x, layout);
}

constexpr ConverterEntry normalization_ops[] = {
    {"BatchNormalization", batch_normalization},
    {"GroupNormalization", group_normalization},
    {"InstanceNormalization", instance_normalization},
    {"LayerNormalization", layer_normalization},
    {"LogSoftmax", softmax<true>},
    {"Softmax", softmax<false>},
};

}  // namespace

std::span<const ConverterEntry> normalization_converters() { return normalization_ops; }

}  // namespace kiln::onnx::detail
