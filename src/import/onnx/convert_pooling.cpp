// SPDX-License-Identifier: Apache-2.0
// ONNX MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool, 1-D and 2-D, as kiln's NHWC Pooling2d.
#include <algorithm>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

template <ops::PoolingKind Kind>
Status pool(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->dims.size() != 3 && x->dims.size() != 4)
    return im.error("input has ", x->dims.size(), " dimensions; kiln pools 1-D and 2-D inputs");
  if (im.output_used(1)) return im.error("the Indices output (kiln's pooling does not compute it)");
  const std::span<const std::int64_t> spatial(x->dims.begin() + 2, x->dims.end());
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
  return define_nhwc_output(im, y, x->dims.size() == 3);
}

template <ops::PoolingKind Kind>
Status global_pool(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->dims.size() != 3 && x->dims.size() != 4)
    return im.error("input has ", x->dims.size(), " dimensions; kiln pools 1-D and 2-D inputs");
  ops::Pooling2d::Params params;
  params.kind = Kind;
  params.global = true;
  KILN_ONNX_TRY(input, nhwc_input(im, *x));
  KILN_ONNX_TRY(y, im.add<ops::Pooling2d>(params, {input}));
  return define_nhwc_output(im, y, x->dims.size() == 3);
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
