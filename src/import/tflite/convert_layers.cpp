// SPDX-License-Identifier: Apache-2.0
// The layers with windows or weights: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV,
// AVERAGE_POOL_2D, MAX_POOL_2D; BATCH_MATMUL, MEAN, SOFTMAX. TensorFlow Lite's NHWC tensors and OHWI /
// [1, KH, KW, C] / [N, K] weights are kiln's own, so nothing is transposed.
#include "importer.hpp"

namespace kiln::tflite::detail {
namespace {

/// TensorFlow's SAME padding of one dimension (the extra row, if any, after) or VALID's none.
std::pair<std::uint32_t, std::uint32_t> window_padding(format::Padding padding, std::uint32_t in, std::uint32_t window,
                                                       std::uint32_t stride, std::uint32_t dilation) {
  if (padding != format::Padding::SAME) return {0, 0};
  const std::int64_t out = (std::int64_t{in} + stride - 1) / stride;
  const std::int64_t span = (std::int64_t{window} - 1) * dilation + 1;
  const std::int64_t needed = std::max<std::int64_t>(0, (out - 1) * stride + span - in);
  return {static_cast<std::uint32_t>(needed / 2), static_cast<std::uint32_t>(needed - needed / 2)};
}

struct Window {
  ops::Padding2d padding;
  ops::Size2d stride, dilation;
};

/// The padding, strides and dilations of a window op over NHWC input `x`, checked.
Expected<Window> window_of(Importer& im, const TensorShape& x, std::uint32_t window_h, std::uint32_t window_w,
                           format::Padding padding, std::int32_t stride_h, std::int32_t stride_w,
                           std::int32_t dilation_h, std::int32_t dilation_w) {
  if (x.rank() != 4) return im.invalid("takes an NHWC input; it is ", x.to_string());
  if (stride_h < 1 || stride_w < 1 || dilation_h < 1 || dilation_w < 1)
    return im.invalid("has strides ", stride_h, "x", stride_w, " and dilations ", dilation_h, "x", dilation_w,
                      "; each must be 1 or more");
  if (padding != format::Padding::SAME && padding != format::Padding::VALID)
    return im.invalid("has padding ", static_cast<int>(padding), "; SAME is 0, VALID 1");
  Window w;
  w.stride = {static_cast<std::uint32_t>(stride_h), static_cast<std::uint32_t>(stride_w)};
  w.dilation = {static_cast<std::uint32_t>(dilation_h), static_cast<std::uint32_t>(dilation_w)};
  std::tie(w.padding.top, w.padding.bottom) =
      window_padding(padding, x[1], window_h, w.stride.height, w.dilation.height);
  std::tie(w.padding.left, w.padding.right) = window_padding(padding, x[2], window_w, w.stride.width, w.dilation.width);
  return w;
}

/// The operator's first `count` inputs, the last of which (a bias) may be left out.
Expected<std::vector<Held>> inputs_of(Importer& im, std::size_t count) {
  std::vector<Held> inputs;
  for (std::size_t i = 0; i < count; ++i) {
    if (!im.has_input(i)) {
      if (i + 1 == count) break;  // the bias may be left out
      return im.invalid("input ", i, " is left out");
    }
    auto held = im.input(i);
    if (!held) return held.status();
    inputs.push_back(*held);
  }
  return inputs;
}

/// Adds an Op layer with weights as the operator's output: an int8 layer when its weights are
/// symmetric int8 (or it is Float32); else (the uint8 weights with zero points of legacy uint8
/// models) in Float32 between Dequantizes and a Quantize, which kiln's int8 layers do not define.
template <OpDescriptor Op>
Status add_with_weights(Importer& im, typename Op::Params params, std::span<const Held> inputs) {
  if (!im.quantized_output() || inputs[1].info.type == DataType::QSymmS8)
    return im.add_as_output<Op>(std::move(params), inputs);
  auto in = im.dequantized(inputs);
  if (!in) return in.status();
  auto out = im.add<Op>(std::move(params), *in);
  if (!out) return out.status();
  return im.set_float_output(out->front());
}

}  // namespace

Status convert_conv_2d(Importer& im) {
  auto options = im.options<format::Conv2DOptions>();
  if (!options) return options.status();
  const format::Conv2DOptions& o = **options;
  auto inputs = inputs_of(im, 3);
  if (!inputs) return inputs.status();
  const TensorShape &x = (*inputs)[0].info.shape, &w = (*inputs)[1].info.shape;
  if (w.rank() != 4 || x.rank() != 4)
    return im.invalid("takes NHWC input and OHWI weights; they are ", x.to_string(), " and ", w.to_string());
  if (w[3] == 0 || x[3] % w[3] != 0)
    return im.invalid("weights ", w.to_string(), " take ", w[3], " input channels per group; the input has ", x[3]);
  auto window = window_of(im, x, w[1], w[2], o.padding(), o.stride_h(), o.stride_w(), o.dilation_h_factor(),
                          o.dilation_w_factor());
  if (!window) return window.status();
  auto activation = im.fused(o.fused_activation_function());
  if (!activation) return activation.status();
  return add_with_weights<ops::Convolution2d>(
      im, {window->padding, window->stride, window->dilation, x[3] / w[3], *activation}, *inputs);
}

Status convert_depthwise_conv_2d(Importer& im) {
  auto options = im.options<format::DepthwiseConv2DOptions>();
  if (!options) return options.status();
  const format::DepthwiseConv2DOptions& o = **options;
  auto inputs = inputs_of(im, 3);
  if (!inputs) return inputs.status();
  const TensorShape &x = (*inputs)[0].info.shape, &w = (*inputs)[1].info.shape;
  if (w.rank() != 4 || x.rank() != 4)
    return im.invalid("takes NHWC input and [1, KH, KW, C] weights; they are ", x.to_string(), " and ", w.to_string());
  if (o.depth_multiplier() > 0 && w[3] != std::uint64_t{x[3]} * static_cast<std::uint32_t>(o.depth_multiplier()))
    return im.invalid("has depth multiplier ", o.depth_multiplier(), " on ", x[3], " channels but weights ",
                      w.to_string());
  auto window = window_of(im, x, w[1], w[2], o.padding(), o.stride_h(), o.stride_w(), o.dilation_h_factor(),
                          o.dilation_w_factor());
  if (!window) return window.status();
  auto activation = im.fused(o.fused_activation_function());
  if (!activation) return activation.status();
  return add_with_weights<ops::DepthwiseConvolution2d>(
      im, {window->padding, window->stride, window->dilation, *activation}, *inputs);
}

Status convert_fully_connected(Importer& im) {
  auto options = im.options<format::FullyConnectedOptions>();
  if (!options) return options.status();
  const format::FullyConnectedOptions& o = **options;
  if (o.weights_format() != format::FullyConnectedOptionsWeightsFormat::DEFAULT)
    return im.error("has shuffled weights (SHUFFLED4x16INT8); kiln reads them in the DEFAULT format");
  auto inputs = inputs_of(im, 3);
  if (!inputs) return inputs.status();
  Held& x = (*inputs)[0];
  const TensorShape& w = (*inputs)[1].info.shape;
  if (w.rank() != 2) return im.invalid("takes [N, K] weights; they are ", w.to_string());
  // The input is read as rows of K, whatever its shape.
  if (x.info.rank() == 0 || x.info.shape.dim_from_end(0) != w[1]) {
    if (w[1] == 0 || x.info.num_elements() % w[1] != 0)
      return im.invalid("reads rows of ", w[1], " from input ", x.info.to_string());
    ops::Reshape::Params rows;
    rows.shape.push_back(static_cast<std::int64_t>(x.info.num_elements() / w[1]));
    rows.shape.push_back(w[1]);
    auto reshaped = im.add<ops::Reshape>(rows, std::span(&x, 1), false, "rows");
    if (!reshaped) return reshaped.status();
    x = reshaped->front();
  }
  auto activation = im.fused(o.fused_activation_function());
  if (!activation) return activation.status();
  return add_with_weights<ops::FullyConnected>(im, {*activation}, *inputs);
}

Status convert_transpose_conv(Importer& im) {
  auto options = im.options<format::TransposeConvOptions>();
  if (!options) return options.status();
  const format::TransposeConvOptions& o = **options;
  // Inputs: the output's shape, the [O, KH, KW, I] weights, the NHWC input, an optional bias.
  auto output_shape = im.constant_ints(0, "output shape");
  if (!output_shape) return output_shape.status();
  std::vector<Held> inputs;
  for (std::size_t i : {2, 1, 3}) {
    if (i == 3 && !im.has_input(3)) break;
    auto held = im.input(i);
    if (!held) return held.status();
    inputs.push_back(*held);
  }
  const TensorShape &x = inputs[0].info.shape, &w = inputs[1].info.shape;
  if (x.rank() != 4 || w.rank() != 4 || output_shape->size() != 4)
    return im.invalid("takes an NHWC input, [O, KH, KW, I] weights and a 4-D output shape; they are ", x.to_string(),
                      ", ", w.to_string(), " and ", output_shape->size(), "-D");
  if (o.stride_h() < 1 || o.stride_w() < 1)
    return im.invalid("has strides ", o.stride_h(), "x", o.stride_w(), "; each must be 1 or more");
  // TensorFlow pads as the convolution this one transposes pads its input, the output here; what
  // its padding leaves over at the end is kiln's output padding.
  ops::TransposeConvolution2d::Params params;
  params.stride = {static_cast<std::uint32_t>(o.stride_h()), static_cast<std::uint32_t>(o.stride_w())};
  std::uint32_t* before[] = {&params.padding.top, &params.padding.left};
  std::uint32_t* after[] = {&params.padding.bottom, &params.padding.right};
  std::uint32_t* extra[] = {&params.output_padding.height, &params.output_padding.width};
  const std::uint32_t strides[] = {params.stride.height, params.stride.width};
  for (std::size_t d = 0; d < 2; ++d) {
    const std::int64_t out = (*output_shape)[1 + d], in = x[1 + d], window = w[1 + d];
    if (out < 1 || out > 0xffffff) return im.invalid("makes an output of ", out, " on axis ", 1 + d);
    const auto [top, bottom] =
        window_padding(o.padding(), static_cast<std::uint32_t>(out), static_cast<std::uint32_t>(window), strides[d], 1);
    const std::int64_t full = (in - 1) * strides[d] + window - top - bottom;
    if (out < full || out - full >= strides[d])
      return im.invalid("makes ", out, " outputs on axis ", 1 + d, " from ", in, " inputs with a window of ", window,
                        " at stride ", strides[d], "; they make ", full, " to ", full + strides[d] - 1);
    *before[d] = top;
    *after[d] = bottom;
    *extra[d] = static_cast<std::uint32_t>(out - full);
  }
  // int8 with symmetric weights and an int32 bias as an int8 layer (RefBackend's); other 8-bit ones
  // in Float32 between conversions (set_float_output quantizes only an 8-bit output).
  const bool int8_layer = im.quantized_output() && inputs[1].info.type == DataType::QSymmS8 &&
                          (inputs.size() < 3 || inputs[2].info.type == DataType::Signed32);
  auto in = int8_layer ? Expected<std::vector<Held>>(inputs) : im.dequantized(inputs);
  if (!in) return in.status();
  auto out = im.add<ops::TransposeConvolution2d>(params, *in, int8_layer);
  if (!out) return out.status();
  auto activated = im.activated(out->front(), o.fused_activation_function());
  if (!activated) return activated.status();
  return int8_layer ? im.set_output(0, *activated) : im.set_float_output(*activated);
}

Status convert_batch_matmul(Importer& im) {
  auto options = im.options<format::BatchMatMulOptions>();
  if (!options) return options.status();
  auto inputs = inputs_of(im, 2);
  if (!inputs) return inputs.status();
  if (inputs->size() != 2) return im.invalid("multiplies ", inputs->size(), " matrices; it takes two");
  return im.add_as_output<ops::BatchMatMul>({(*options)->adj_x(), (*options)->adj_y()}, *inputs);
}

namespace {

Status convert_pool(Importer& im, ops::PoolingKind kind) {
  auto options = im.options<format::Pool2DOptions>();
  if (!options) return options.status();
  const format::Pool2DOptions& o = **options;
  auto x = im.input(0);
  if (!x) return x.status();
  if (o.filter_height() < 1 || o.filter_width() < 1)
    return im.invalid("has a ", o.filter_height(), "x", o.filter_width(), " window");
  const auto window_h = static_cast<std::uint32_t>(o.filter_height()),
             window_w = static_cast<std::uint32_t>(o.filter_width());
  auto window = window_of(im, x->info.shape, window_h, window_w, o.padding(), o.stride_h(), o.stride_w(), 1, 1);
  if (!window) return window.status();
  // TensorFlow Lite's average leaves the padding out of the count; its max never picks it.
  const ops::Pooling2d::Params params{kind, {window_h, window_w}, window->stride, window->padding, false, false, false};
  auto pooled = im.add<ops::Pooling2d>(params, std::span(&*x, 1), im.quantized_output());
  if (!pooled) return pooled.status();
  auto out = im.activated(pooled->front(), o.fused_activation_function());
  if (!out) return out.status();
  return im.set_output(0, *out);
}

}  // namespace

Status convert_average_pool_2d(Importer& im) { return convert_pool(im, ops::PoolingKind::Average); }
Status convert_max_pool_2d(Importer& im) { return convert_pool(im, ops::PoolingKind::Max); }

Status convert_mean(Importer& im) {
  auto options = im.options<format::ReducerOptions>();
  if (!options) return options.status();
  auto x = im.input(0);
  if (!x) return x.status();
  auto axes = im.constant_ints(1, "axes");
  if (!axes) return axes.status();
  ops::Reduce::Params params{ops::ReduceOperation::Mean, {}, (*options)->keep_dims()};
  for (std::int64_t axis : *axes) params.axes.push_back(axis);
  return im.add_as_output<ops::Reduce>(params, std::span(&*x, 1));
}

Status convert_softmax(Importer& im) {
  auto options = im.options<format::SoftmaxOptions>();
  if (!options) return options.status();
  auto x = im.input(0);
  if (!x) return x.status();
  return im.add_as_output<ops::Softmax>({-1, (*options)->beta(), false}, std::span(&*x, 1));
}

}  // namespace kiln::tflite::detail
