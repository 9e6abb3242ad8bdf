// SPDX-License-Identifier: Apache-2.0
// ONNX BatchNormalization (inference), LayerNormalization, Softmax and LogSoftmax.
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
    {"LayerNormalization", layer_normalization},
    {"LogSoftmax", softmax<true>},
    {"Softmax", softmax<false>},
};

}  // namespace

std::span<const ConverterEntry> normalization_converters() { return normalization_ops; }

}  // namespace kiln::onnx::detail
