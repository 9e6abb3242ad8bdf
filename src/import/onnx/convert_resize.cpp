// SPDX-License-Identifier: Apache-2.0
// ONNX Resize (opsets 10 to 18) and Upsample (7, 9) over the height and width of an NCHW tensor, as
// kiln's NHWC Resize. Scales that give whole sizes (every model that upsamples by 2) map coordinates
// by the ratio of the sizes; fractional ones (0.6 of 4 pixels) floor the size and map by the scale.
#include <cmath>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

struct ResizeAttributes {
  std::string mode;
  std::string transform;
  std::string nearest_mode;
  float cubic_coefficient = -0.75f;
  bool exclude_outside = false;
};

/// The output sizes, and the scales coordinates map by where a size is fractional (else 0).
struct ResizeTarget {
  std::vector<std::int64_t> sizes;
  std::vector<float> scales;
};

Status resize_to(Importer& im, Value& x, const ResizeTarget& target, const ResizeAttributes& a) {
  const std::span<const std::int64_t> sizes = target.sizes;
  if (x.dims.size() != 4) return im.error("input has ", x.dims.size(), " dimensions; kiln resizes 4-D NCHW tensors");
  if (sizes[0] != x.dims[0] || sizes[1] != x.dims[1]) return im.error("resizing the batch or channel axis");
  ops::Resize::Params params;
  if (a.mode == "nearest")
    params.method = ops::ResizeMethod::Nearest;
  else if (a.mode == "linear" || a.mode == "bilinear")
    params.method = ops::ResizeMethod::Bilinear;
  else if (a.mode == "cubic")
    params.method = ops::ResizeMethod::Bicubic;
  else
    return im.error("mode '", a.mode, "' (kiln resizes with nearest, linear and cubic)");
  params.cubic_coefficient = a.cubic_coefficient;
  params.exclude_outside = a.exclude_outside;
  const bool sizes_change = sizes[2] != x.dims[2] || sizes[3] != x.dims[3];
  if (a.transform == "asymmetric")
    params.transform = ops::CoordinateTransform::Asymmetric;
  else if (a.transform == "half_pixel")
    params.transform = ops::CoordinateTransform::HalfPixel;
  else if (a.transform == "pytorch_half_pixel")
    params.transform = ops::CoordinateTransform::PytorchHalfPixel;
  else if (a.transform == "align_corners")
    params.transform = ops::CoordinateTransform::AlignCorners;
  else if (a.transform == "tf_half_pixel_for_nn")
    params.transform = ops::CoordinateTransform::TfHalfPixelForNearest;
  else if (sizes_change)
    return im.error("coordinate_transformation_mode '", a.transform, "'");
  if (a.nearest_mode == "floor")
    params.rounding = ops::NearestRounding::Floor;
  else if (a.nearest_mode == "ceil")
    params.rounding = ops::NearestRounding::Ceil;
  else if (a.nearest_mode == "round_prefer_floor")
    params.rounding = ops::NearestRounding::RoundPreferFloor;
  else if (a.nearest_mode == "round_prefer_ceil")
    params.rounding = ops::NearestRounding::RoundPreferCeil;
  else
    return im.error("nearest_mode '", a.nearest_mode, "'");
  if (sizes[2] <= 0 || sizes[3] <= 0 || sizes[2] > 1 << 24 || sizes[3] > 1 << 24)
    return im.invalid("output size ", sizes[2], " x ", sizes[3], " is out of range");
  params.height = static_cast<std::uint32_t>(sizes[2]);
  params.width = static_cast<std::uint32_t>(sizes[3]);
  if (!target.scales.empty()) {
    params.height_scale = target.scales[2];
    params.width_scale = target.scales[3];
  }
  KILN_ONNX_TRY(input, im.channels_last(x));
  KILN_ONNX_TRY(y, im.add<ops::Resize>(params, {input}));
  im.define(0, y, Layout::ChannelsLast);
  return Status::ok();
}

// ONNX's output size is floor(size * scale); a product within 1e-4 of a whole number is that number
// (float32's 0.7 times 10 is 6.9999998), mapped by the ratio of sizes.
Expected<ResizeTarget> target_of_scales(Importer& im, const Value& x, std::span<const float> scales) {
  if (scales.size() != x.dims.size())
    return im.invalid("scales has ", scales.size(), " values for rank ", x.dims.size());
  ResizeTarget target;
  bool fractional = false;
  for (std::size_t d = 0; d < scales.size(); ++d) {
    if (!(scales[d] > 0.0f) || !(scales[d] < 1e6f)) return im.invalid("scale ", scales[d], " is out of range");
    const double exact = static_cast<double>(x.dims[d]) * scales[d];
    const bool whole = std::abs(exact - std::round(exact)) <= 1e-4;
    fractional = fractional || !whole;
    target.sizes.push_back(whole ? std::llround(exact) : static_cast<std::int64_t>(std::floor(exact)));
  }
  if (fractional) target.scales.assign(scales.begin(), scales.end());
  return target;
}

Status resize(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  ResizeAttributes a{
      im.attr_string("mode").value_or("nearest"),
      im.attr_string("coordinate_transformation_mode").value_or(im.opset() < 11 ? "asymmetric" : "half_pixel"),
      im.attr_string("nearest_mode").value_or(im.opset() < 11 ? "floor" : "round_prefer_floor"),
      im.attr_float("cubic_coeff_a", -0.75f), im.attr_int("exclude_outside", 0) != 0};
  if (im.attr_int("antialias", 0) != 0) return im.error("antialias 1");
  if (im.attr("axes") != nullptr) return im.error("the axes attribute");
  if (im.attr_string("keep_aspect_ratio_policy").value_or("stretch") != "stretch")
    return im.error("keep_aspect_ratio_policy other than stretch");
  // Opset 10: (X, scales); 11 and later: (X, roi, scales, sizes), roi only for tf_crop_and_resize.
  const std::size_t scales_index = im.opset() < 11 ? 1 : 2;
  if (im.has_input(3) && im.opset() >= 11) {
    KILN_ONNX_TRY(sizes, im.constant_input(3, "sizes"));
    std::vector<std::int64_t> dims;
    for (std::size_t i = 0; i < sizes->size(); ++i) dims.push_back(sizes->int_at(i));
    if (dims.size() != x->dims.size())
      return im.invalid("sizes has ", dims.size(), " values for rank ", x->dims.size());
    return resize_to(im, *x, {dims, {}}, a);
  }
  KILN_ONNX_TRY(scales, im.constant_input(scales_index, "scales"));
  std::vector<float> values;
  for (std::size_t i = 0; i < scales->size(); ++i) values.push_back(scales->float_at(i));
  KILN_ONNX_TRY(target, target_of_scales(im, *x, values));
  return resize_to(im, *x, target, a);
}

Status upsample(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  ResizeAttributes a{im.attr_string("mode").value_or("nearest"), "asymmetric", "floor"};
  std::vector<float> values;
  if (im.opset() < 9) {
    values = im.attr_floats("scales").value_or(std::vector<float>{});
  } else {
    KILN_ONNX_TRY(scales, im.constant_input(1, "scales"));
    for (std::size_t i = 0; i < scales->size(); ++i) values.push_back(scales->float_at(i));
  }
  KILN_ONNX_TRY(target, target_of_scales(im, *x, values));
  return resize_to(im, *x, target, a);
}

constexpr ConverterEntry resize_ops[] = {{"Resize", resize}, {"Upsample", upsample}};

}  // namespace

std::span<const ConverterEntry> resize_converters() { return resize_ops; }

}  // namespace kiln::onnx::detail
