// SPDX-License-Identifier: Apache-2.0
// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR: NHWC images to the size input 1 holds, with
// TensorFlow's coordinate conventions (align_corners, half_pixel_centers) as kiln's transforms.
#include "importer.hpp"

namespace kiln::tflite::detail {
namespace {

Expected<ops::Resize::Params> resize_params(Importer& im, const Held& x, ops::ResizeMethod method, bool align_corners,
                                            bool half_pixel_centers) {
  if (x.info.rank() != 4) return im.invalid("resizes NHWC images; the input is ", x.info.to_string());
  if (align_corners && half_pixel_centers)
    return im.invalid("sets both align_corners and half_pixel_centers; TensorFlow allows one");
  auto size = im.constant_ints(1, "size");
  if (!size) return size.status();
  if (size->size() != 2 || (*size)[0] < 1 || (*size)[1] < 1 || (*size)[0] > 0xffff || (*size)[1] > 0xffff)
    return im.invalid("resizes to ", size->size(), " dimensions; it takes a height and a width of 1 to 65535");
  ops::Resize::Params params;
  params.method = method;
  params.height = static_cast<std::uint32_t>((*size)[0]);
  params.width = static_cast<std::uint32_t>((*size)[1]);
  params.transform = align_corners        ? ops::CoordinateTransform::AlignCorners
                     : half_pixel_centers ? ops::CoordinateTransform::HalfPixel
                                          : ops::CoordinateTransform::Asymmetric;
  // TensorFlow's nearest index is floor(x * scale), round(x * scale) when aligning corners (halves
  // away from zero: up, x being positive), and floor((x + 0.5) * scale) for half-pixel centres,
  // which is (x + 0.5) * scale - 0.5 rounded with halves up.
  params.rounding =
      align_corners || half_pixel_centers ? ops::NearestRounding::RoundPreferCeil : ops::NearestRounding::Floor;
  return params;
}

}  // namespace

Status convert_resize_bilinear(Importer& im) {
  auto options = im.options<format::ResizeBilinearOptions>();
  if (!options) return options.status();
  auto x = im.input(0);
  if (!x) return x.status();
  auto params =
      resize_params(im, *x, ops::ResizeMethod::Bilinear, (*options)->align_corners(), (*options)->half_pixel_centers());
  if (!params) return params.status();
  // 8-bit images of one quantisation in and out interpolate in TensorFlow Lite's 10-bit fixed point
  // (RefBackend, tflite_recipes::bilinear); others in Float32 between conversions.
  if (im.quantized_output() && x->info.quantization == im.output_info(0).quantization)
    return im.add_as_output<ops::Resize>(*params, std::span(&*x, 1));
  auto in = im.dequantized(std::span(&*x, 1));
  if (!in) return in.status();
  auto out = im.add<ops::Resize>(*params, *in);
  if (!out) return out.status();
  return im.set_float_output(out->front());
}

Status convert_resize_nearest_neighbor(Importer& im) {
  auto options = im.options<format::ResizeNearestNeighborOptions>();
  if (!options) return options.status();
  auto x = im.input(0);
  if (!x) return x.status();
  auto params =
      resize_params(im, *x, ops::ResizeMethod::Nearest, (*options)->align_corners(), (*options)->half_pixel_centers());
  if (!params) return params.status();
  auto out = im.add<ops::Resize>(*params, std::span(&*x, 1));  // moves elements, 8-bit ones too
  if (!out) return out.status();
  return im.set_output(0, out->front());
}

}  // namespace kiln::tflite::detail
