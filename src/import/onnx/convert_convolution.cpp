// SPDX-License-Identifier: Apache-2.0
// ONNX Conv (1-D, 2-D and 3-D) and ConvTranspose (1-D and 2-D) as kiln's NHWC convolutions. Constant weights are
// permuted into kiln's layout once, here; weights computed by the graph get a Transpose layer.
#include <algorithm>
#include <numeric>
#include <string>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

// The weights as a kiln tensor: ONNX's [A, B, K...] viewed as 4-D `dims4` ([A, B, 1, K] for 1-D),
// then permuted by `perm`.
Expected<OutputSlot> permuted_weights(Importer& im, Value& w, std::vector<std::int64_t> dims4,
                                      std::span<const std::size_t> perm) {
  if (w.constant) return im.add_constant(*w.constant, dims4, perm, w.type, "weights");
  KILN_ONNX_TRY(slot, im.plain(w));
  OutputSlot source = slot;
  if (w.dims.size() == 3) {
    KILN_ONNX_TRY(as_4d, im.add<ops::Reshape>({dims4}, {slot}, "weights_as_2d"));
    source = as_4d;
  }
  return im.add<ops::Transpose>({std::vector<std::uint32_t>(perm.begin(), perm.end())}, {source}, "weights");
}

std::vector<std::int64_t> weights_4d(std::span<const std::int64_t> dims) {
  if (dims.size() == 3) return {dims[0], dims[1], 1, dims[2]};
  return {dims.begin(), dims.end()};
}

Status check_ranks(const Importer& im, const Value& x, const Value& w, std::size_t highest) {
  if (x.dims.size() < 3 || x.dims.size() > highest)
    return im.error("input has ", x.dims.size(), " dimensions; kiln runs ",
                    highest == 5 ? "1-D, 2-D and 3-D" : "1-D and 2-D", " ", im.node().op_type(), " (3 to ", highest,
                    ")");
  if (w.dims.size() != x.dims.size())
    return im.invalid("weights have ", w.dims.size(), " dimensions but the input has ", x.dims.size());
  return Status::ok();
}

// Conv's optional bias (input 2), ONNX's [O] as it is, appended to `inputs`.
Status add_bias_input(Importer& im, std::vector<OutputSlot>& inputs) {
  if (!im.has_input(2)) return Status::ok();
  KILN_ONNX_TRY(b, im.input(2));
  KILN_ONNX_TRY(bias, im.plain(*b));
  inputs.push_back(bias);
  return Status::ok();
}

// A 3-D convolution as a 2-D one over height and width: the depth taps that each output depth
// reads, side by side in the channels (a Pad, one StridedSlice a tap and a Concat: [N, OD, H, W,
// KD * C]), with the depth taps folded into the weights' input channels to match ([O, KH, KW, KD *
// C / group]). Every backend's Convolution2d runs it, at the cost of KD copies of the input.
Status conv_3d(Importer& im, Value& x, const Value& w, const Window& window, std::int64_t group) {
  if (!w.constant)
    return im.error("3-D convolution with computed weights (kiln folds constant weights' depth taps into channels)");
  const std::int64_t batch = x.dims[0], channels = x.dims[1], height = x.dims[3], width = x.dims[4];
  const WindowAxis& depth = window.depth;
  const std::int64_t padded = x.dims[2] + depth.before + depth.after;
  const std::int64_t reach = std::int64_t{depth.dilation} * (depth.kernel - 1) + 1;
  if (padded < reach) return im.invalid("the kernel reaches ", reach, " depths but the padded input has ", padded);
  const std::int64_t out_depth = (padded - reach) / depth.stride + 1;
  KILN_ONNX_TRY(volume, im.channels_last(x));
  OutputSlot source = volume;
  if (depth.before + depth.after > 0) {
    KILN_ONNX_TRY(padded_volume,
                  im.add<ops::Pad>({{0, depth.before, 0, 0, 0}, {0, depth.after, 0, 0, 0}}, {volume}, "depth_padding"));
    source = padded_volume;
  }
  std::vector<OutputSlot> taps;
  for (std::uint32_t k = 0; k < depth.kernel; ++k) {
    const std::int64_t first = std::int64_t{k} * depth.dilation;
    KILN_ONNX_TRY(
        tap, im.add<ops::StridedSlice>({{first}, {first + (out_depth - 1) * depth.stride + 1}, {depth.stride}, {1}},
                                       {source}, "depth_tap_" + std::to_string(k)));
    taps.push_back(tap);
  }
  OutputSlot stacked = taps.front();
  if (taps.size() > 1) {
    KILN_ONNX_TRY(joined, im.add<ops::Concat>({4}, taps, "depth_taps"));
    stacked = joined;
  }
  const std::int64_t slices = batch * out_depth, per_group = channels / group, taps_count = depth.kernel;
  if (group > 1 && taps_count > 1) {  // a group's channels together: [KD, G, C / G] -> [G, KD, C / G]
    KILN_ONNX_TRY(split, im.add<ops::Reshape>({{slices, height, width, taps_count, group, per_group}}, {stacked},
                                              "depth_taps_by_group"));
    KILN_ONNX_TRY(grouped, im.add<ops::Transpose>({{0, 1, 2, 4, 3, 5}}, {split}, "groups_together"));
    stacked = grouped;
  }
  KILN_ONNX_TRY(planes,
                im.add<ops::Reshape>({{slices, height, width, taps_count * channels}}, {stacked}, "depth_slices"));
  const auto& wd = w.dims;  // [O, C / G, KD, KH, KW] -> [O, KH, KW, KD * C / G]
  constexpr std::size_t taps_into_channels[] = {0, 3, 4, 2, 1};
  const OutputSlot weights = im.add_constant(
      w.constant->transposed(wd, taps_into_channels, {wd[0], wd[3], wd[4], wd[2] * wd[1]}), w.type, "weights");
  std::vector<OutputSlot> inputs{planes, weights};
  if (auto s = add_bias_input(im, inputs); !s) return s;
  KILN_ONNX_TRY(y, im.add<ops::Convolution2d>(
                       {window.padding, window.stride, window.dilation, static_cast<std::uint32_t>(group)}, inputs));
  return define_nhwc_output(im, x, y, out_depth);
}

Status conv(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  KILN_ONNX_TRY(w, im.input(1));
  if (auto s = check_ranks(im, *x, *w, 5); !s) return s;
  const std::int64_t group = im.attr_int("group", 1);
  const std::int64_t channels = x->dims[1];
  if (group <= 0 || channels % group != 0 || w->dims[0] % group != 0 || w->dims[1] * group != channels)
    return im.invalid("group ", group, " does not fit input channels ", channels, " and weights [", w->dims[0], ", ",
                      w->dims[1], ", ...]");
  const std::span<const std::int64_t> spatial(x->dims.begin() + 2, x->dims.end());
  KILN_ONNX_TRY(window, read_window(im, spatial, std::span<const std::int64_t>(w->dims.begin() + 2, w->dims.end())));
  if (x->dims.size() == 5) return conv_3d(im, *x, *w, window, group);
  KILN_ONNX_TRY(input, nhwc_input(im, *x));
  const bool depthwise = group > 1 && group == channels && w->dims[1] == 1;
  constexpr std::size_t ohwi[] = {0, 2, 3, 1}, ihwo[] = {1, 2, 3, 0};
  KILN_ONNX_TRY(weights, permuted_weights(im, *w, weights_4d(w->dims), depthwise ? ihwo : ohwi));
  std::vector<OutputSlot> inputs{input, weights};
  if (auto s = add_bias_input(im, inputs); !s) return s;
  auto y = depthwise ? im.add<ops::DepthwiseConvolution2d>({window.padding, window.stride, window.dilation}, inputs)
                     : im.add<ops::Convolution2d>(
                           {window.padding, window.stride, window.dilation, static_cast<std::uint32_t>(group)}, inputs);
  if (!y) return y.status();
  return define_nhwc_output(im, *x, *y);
}

// ConvTranspose weights [C, O / group, K...] dilated: the kernel with dilation - 1 zeros between its
// taps, which scatters exactly what the dilated kernel does.
Expected<Value> dilated_weights(Importer& im, const Value& w, std::span<const std::int64_t> dilations) {
  if (!w.constant) return im.error("dilations other than 1 of computed weights (kiln dilates constant weights)");
  const std::size_t axes = dilations.size();
  Value dilated = w;
  for (std::size_t a = 0; a < axes; ++a) dilated.dims[2 + a] = (w.dims[2 + a] - 1) * dilations[a] + 1;
  const std::vector<std::size_t> from = strides_of(w.dims), to = strides_of(dilated.dims);
  ConstValue& c = *dilated.constant;
  c = ConstValue{dilated.dims, w.constant->is_float, false, {}, {}};
  if (c.is_float)
    c.floats.assign(element_count(dilated.dims), 0.0f);
  else
    c.ints.assign(element_count(dilated.dims), 0);
  for (std::size_t i = 0; i < w.constant->size(); ++i) {
    std::size_t rest = i, target = 0;
    for (std::size_t d = 0; d < w.dims.size(); ++d) {
      const std::size_t coordinate = rest / from[d];
      rest %= from[d];
      target += coordinate * (d >= 2 ? static_cast<std::size_t>(dilations[d - 2]) : 1) * to[d];
    }
    if (c.is_float)
      c.floats[target] = w.constant->floats[i];
    else
      c.ints[target] = w.constant->ints[i];
  }
  return dilated;
}

Status conv_transpose(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  KILN_ONNX_TRY(given_w, im.input(1));
  if (auto s = check_ranks(im, *x, *given_w, 4); !s) return s;
  const std::size_t axes = x->dims.size() - 2;
  const std::int64_t group = im.attr_int("group", 1);
  if (given_w->dims[0] != x->dims[1])
    return im.invalid("weights [", given_w->dims[0], ", ...] do not match input channels ", x->dims[1]);
  if (group <= 0 || x->dims[1] % group != 0) return im.invalid("group ", group, " does not divide ", x->dims[1]);
  KILN_ONNX_TRY(strides, spatial_attr(im, "strides", axes, 1));
  KILN_ONNX_TRY(dilations, spatial_attr(im, "dilations", axes, 1));
  Value dilated;
  Value* w = given_w;
  if (std::ranges::any_of(dilations, [](std::int64_t d) { return d != 1; })) {
    if (std::ranges::any_of(dilations, [](std::int64_t d) { return d < 1 || d > 64; }))
      return im.invalid("dilations must be 1 to 64");
    KILN_ONNX_TRY(stuffed, dilated_weights(im, *given_w, dilations));
    dilated = std::move(stuffed);
    w = &dilated;
  }
  KILN_ONNX_TRY(pads, spatial_attr(im, "pads", axes, 0));
  std::vector<std::int64_t> output_padding =
      im.attr_ints("output_padding").value_or(std::vector<std::int64_t>(axes, 0));
  if (output_padding.size() != axes) return im.invalid("output_padding has ", output_padding.size(), " values");
  const std::string auto_pad = im.attr_string("auto_pad").value_or("NOTSET");
  auto output_shape = im.attr_ints("output_shape");
  if (output_shape && output_shape->size() == axes + 2)
    output_shape->erase(output_shape->begin(), output_shape->begin() + 2);
  if (!output_shape && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")) {
    output_shape.emplace();
    for (std::size_t a = 0; a < axes; ++a) output_shape->push_back(x->dims[2 + a] * strides[a]);
  }
  if (output_shape) {
    if (output_shape->size() != axes) return im.invalid("output_shape has ", output_shape->size(), " values");
    for (std::size_t a = 0; a < axes; ++a) {
      const std::int64_t kernel = w->dims[2 + a];
      std::int64_t total = strides[a] * (x->dims[2 + a] - 1) + output_padding[a] + kernel - (*output_shape)[a];
      if (total < 0) {  // a larger output than the kernel reaches: extra output padding
        output_padding[a] -= total;
        total = 0;
      }
      pads[a] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[a + axes] = total - pads[a];
    }
  } else if (auto_pad == "VALID") {
    std::ranges::fill(pads, 0);
  }
  for (std::size_t a = 0; a < axes; ++a)
    if (output_padding[a] < 0 || output_padding[a] >= strides[a])
      return im.error("output padding ", output_padding[a], " must be smaller than the stride ", strides[a]);
  auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  ops::TransposeConvolution2d::Params params;
  if (axes == 2) {
    params = {{u(pads[0]), u(pads[2]), u(pads[1]), u(pads[3])},
              {u(strides[0]), u(strides[1])},
              {u(output_padding[0]), u(output_padding[1])}};
  } else {
    params = {{0, 0, u(pads[0]), u(pads[1])}, {1, u(strides[0])}, {0, u(output_padding[0])}};
  }
  KILN_ONNX_TRY(input, nhwc_input(im, *x));
  constexpr std::size_t ohwi_from_iohw[] = {1, 2, 3, 0};
  Value* b = nullptr;
  if (im.has_input(2)) {
    KILN_ONNX_TRY(given_b, im.input(2));
    b = given_b;
  }
  if (group == 1) {
    KILN_ONNX_TRY(weights, permuted_weights(im, *w, weights_4d(w->dims), ohwi_from_iohw));
    std::vector<OutputSlot> inputs{input, weights};
    if (b) {
      KILN_ONNX_TRY(bias, im.plain(*b));
      inputs.push_back(bias);
    }
    auto y = im.add<ops::TransposeConvolution2d>(params, inputs);
    if (!y) return y.status();
    return define_nhwc_output(im, *x, *y);
  }
  // Groups: the channels split into `group` runs, each through its own TransposeConvolution2d with
  // its slice of the weights (rows of [C, O / group, K...]) and of the bias, concatenated.
  if (!w->constant || (b && !b->constant))
    return im.error("group ", group, " of computed weights or bias (kiln slices constant ones per group)");
  const auto groups = static_cast<std::size_t>(group);
  const auto in_per_group = static_cast<std::uint32_t>(x->dims[1] / group);
  const std::int64_t out_per_group = w->dims[1];
  ops::Split::Params split{3, {}};
  for (std::size_t g = 0; g < groups; ++g) split.sizes.push_back(in_per_group);
  KILN_ONNX_TRY(first_part, im.add<ops::Split>(split, {input}, "groups"));
  std::vector<std::int64_t> slice_dims = weights_4d(w->dims);
  slice_dims[0] = in_per_group;
  const std::size_t slice_size = element_count(slice_dims);
  std::vector<OutputSlot> outputs;
  for (std::size_t g = 0; g < groups; ++g) {
    std::vector<std::size_t> rows(slice_size);
    std::iota(rows.begin(), rows.end(), g * slice_size);
    const OutputSlot weights = im.add_constant(w->constant->gathered(slice_dims, rows), slice_dims, ohwi_from_iohw,
                                               w->type, "weights_" + std::to_string(g));
    std::vector<OutputSlot> inputs{OutputSlot{first_part.layer, static_cast<std::uint32_t>(g)}, weights};
    if (b) {
      std::vector<std::size_t> entries(static_cast<std::size_t>(out_per_group));
      std::iota(entries.begin(), entries.end(), g * entries.size());
      inputs.push_back(
          im.add_constant(b->constant->gathered({out_per_group}, entries), b->type, "bias_" + std::to_string(g)));
    }
    KILN_ONNX_TRY(y, im.add<ops::TransposeConvolution2d>(params, inputs, "group_" + std::to_string(g)));
    outputs.push_back(y);
  }
  KILN_ONNX_TRY(joined, im.add<ops::Concat>({3}, outputs));
  return define_nhwc_output(im, *x, joined);
}

constexpr ConverterEntry convolution_ops[] = {{"Conv", conv}, {"ConvTranspose", conv_transpose}};

}  // namespace

std::span<const ConverterEntry> convolution_converters() { return convolution_ops; }

}  // namespace kiln::onnx::detail
