// SPDX-License-Identifier: Apache-2.0
// ONNX MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool, 1-D, 2-D and 3-D, as kiln's NHWC Pooling2d.
#include <algorithm>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

// A 3-D window is a 2-D one over height and width times a 1-D one over depth: its maximum is the
// maximum of its depth slices' maxima, and an average's count of positions (padding counted or
// not, past the end in ceil mode or not) is the product of its axes' counts. So two Pooling2d
// layers compute it on every backend: each depth slice's plane ([N * D, H, W, C]), then each
// output pixel's column of depths ([N, D, OH * OW, C]).
Status pool_depth(Importer& im, const Value& x, OutputSlot planes, ops::Pooling2d::Params params,
                  const WindowAxis& depth) {
  const TensorShape s = im.info(planes).shape;
  KILN_ONNX_TRY(columns, im.add<ops::Reshape>({{x.dims[0], x.dims[2], std::int64_t{s[1]} * s[2], s[3]}}, {planes},
                                              "depth_columns"));
  params.window = {depth.kernel, 1};
  params.stride = {depth.stride, 1};
  params.dilation = {depth.dilation, 1};
  params.padding = {depth.before, depth.after, 0, 0};
  KILN_ONNX_TRY(pooled, im.add<ops::Pooling2d>(params, {columns}, "depth"));
  KILN_ONNX_TRY(y, im.add<ops::Reshape>({{x.dims[0], im.info(pooled).shape[1], s[1], s[2], s[3]}}, {pooled}, "as_3d"));
  im.define(0, y, Layout::ChannelsLast);
  return Status::ok();
}

template <ops::PoolingKind Kind>
Status pool(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (im.output_used(1)) return im.error("the Indices output (kiln's pooling does not compute it)");
  const std::span<const std::int64_t> spatial(x->dims.begin() + std::min<std::size_t>(2, x->dims.size()),
                                              x->dims.end());
  KILN_ONNX_TRY(window, read_window(im, spatial));
  ops::Pooling2d::Params params;
  params.kind = Kind;
  params.window = window.kernel;
  params.stride = window.stride;
  params.padding = window.padding;
  params.dilation = window.dilation;
  params.ceil_mode = im.attr_int("ceil_mode", 0) != 0;
  params.count_include_pad = im.attr_int("count_include_pad", 0) != 0;
  KILN_ONNX_TRY(input, nhwc_input(im, *x));
  KILN_ONNX_TRY(y, im.add<ops::Pooling2d>(params, {input}));
  if (x->dims.size() == 5) return pool_depth(im, *x, y, params, window.depth);
  return define_nhwc_output(im, *x, y);
}

template <ops::PoolingKind Kind>
Status global_pool(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  ops::Pooling2d::Params params;
  params.kind = Kind;
  params.global = true;
  KILN_ONNX_TRY(input, nhwc_input(im, *x));
  if (const auto& d = x->dims; d.size() == 5) {  // the depth slices as rows: [N, D * H, W, C]
    KILN_ONNX_TRY(rows, im.add<ops::Reshape>({{d[0], d[2] * d[3], d[4], d[1]}}, {input}, "depth_rows"));
    input = rows;
  }
  KILN_ONNX_TRY(y, im.add<ops::Pooling2d>(params, {input}));
  return define_nhwc_output(im, *x, y);
}

constexpr ConverterEntry pooling_ops[] = {
    {"AveragePool", pool<ops::PoolingKind::Average>},
    {"GlobalAveragePool", global_pool<ops::PoolingKind::Average>},
    {"GlobalMaxPool", global_pool<ops::PoolingKind::Max>},
    {"MaxPool", pool<ops::PoolingKind::Max>},
};

}  // namespace

std::span<const ConverterEntry> pooling_converters() { return pooling_ops; }

}  // namespace kiln::onnx::detail
