// SPDX-License-Identifier: Apache-2.0
// The operators that move data: RESHAPE and SQUEEZE (the output tensor's shape is the one to
// reach), CONCATENATION, PAD and PADV2, TRANSPOSE, STRIDED_SLICE and SLICE, GATHER, SPLIT.
#include "importer.hpp"

#include <cstring>
#include <limits>

#include "kiln/core/requantization.hpp"

namespace kiln::tflite::detail {

Status convert_reshape(Importer& im) {
  auto x = im.input(0);
  if (!x) return x.status();
  return im.set_output(0, *x);  // set_output reshapes to the model's output shape
}

Status convert_concatenation(Importer& im) {
  auto options = im.options<format::ConcatenationOptions>();
  if (!options) return options.status();
  std::vector<Held> inputs;
  for (std::size_t i = 0; i < im.num_inputs(); ++i) {
    auto held = im.input(i);
    if (!held) return held.status();
    inputs.push_back(*held);
  }
  auto joined = im.add<ops::Concat>({(*options)->axis()}, inputs, im.quantized_output());
  if (!joined) return joined.status();
  auto out = im.activated(joined->front(), (*options)->fused_activation_function());
  if (!out) return out.status();
  return im.set_output(0, *out);
}

Status convert_pad(Importer& im) {
  auto x = im.input(0);
  if (!x) return x.status();
  auto paddings = im.constant_ints(1, "paddings");
  if (!paddings) return paddings.status();
  const std::size_t rank = x->info.rank();
  if (paddings->size() != 2 * rank)
    return im.invalid("has ", paddings->size(), " paddings for a tensor of rank ", rank, "; it needs [", rank, ", 2]");
  ops::Pad::Params params;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t before = (*paddings)[2 * d], after = (*paddings)[2 * d + 1];
    if (before < 0 || after < 0 || before > 0xffffffff || after > 0xffffffff)
      return im.error("pads axis ", d, " by ", before, " and ", after, "; kiln pads by 0 or more");
    params.before.push_back(static_cast<std::uint32_t>(before));
    params.after.push_back(static_cast<std::uint32_t>(after));
  }
  if (im.has_input(2)) {  // PADV2's value, in the input's type: kiln's Pad states the real number it stands for
    auto value = im.input(2);
    if (!value) return value.status();
    if (value->info.num_elements() != 1)
      return im.invalid("pads with ", value->info.to_string(), "; it takes one value");
    const auto constant = im.constant_bytes(2);
    if (!constant) return im.error("needs its padding value constant");
    const TensorInfo& info = value->info;
    if (info.type == DataType::Float32) {
      std::memcpy(&params.value, constant->data(), 4);
    } else if (info.type == DataType::QAsymmS8 || info.type == DataType::QAsymmU8) {
      const std::int32_t q = info.type == DataType::QAsymmS8 ? std::int32_t{static_cast<std::int8_t>((*constant)[0])}
                                                             : std::int32_t{static_cast<std::uint8_t>((*constant)[0])};
      params.value = dequantize(q, info.quantization.scales[0], info.quantization.offset);
    } else {
      return im.error("pads with a ", to_string(info.type), " value");
    }
  }
  auto out = im.add<ops::Pad>(params, std::span(&*x, 1));
  if (!out) return out.status();
  return im.set_output(0, out->front());
}

Status convert_transpose(Importer& im) {
  auto x = im.input(0);
  if (!x) return x.status();
  auto perm = im.constant_ints(1, "permutation");
  if (!perm) return perm.status();
  ops::Transpose::Params params;
  for (std::int64_t axis : *perm) {
    if (axis < 0 || static_cast<std::size_t>(axis) >= x->info.rank())
      return im.invalid("permutes axis ", axis, " of a tensor of rank ", x->info.rank());
    params.permutation.push_back(static_cast<std::uint32_t>(axis));
  }
  auto out = im.add<ops::Transpose>(params, std::span(&*x, 1));
  if (!out) return out.status();
  return im.set_output(0, out->front());
}

namespace {

constexpr std::int64_t past_the_end = std::numeric_limits<std::int64_t>::max();

/// A slice as kiln's StridedSlice, which wraps negative indices and clamps the rest as TensorFlow does.
Status add_slice(Importer& im, const Held& x, ops::StridedSlice::Params params) {
  auto out = im.add<ops::StridedSlice>(std::move(params), std::span(&x, 1));
  if (!out) return out.status();
  return im.set_output(0, out->front());  // set_output drops the axes a shrink mask removes
}

}  // namespace

Status convert_strided_slice(Importer& im) {
  auto options = im.options<format::StridedSliceOptions>();
  if (!options) return options.status();
  const format::StridedSliceOptions& o = **options;
  if (o.ellipsis_mask() != 0 || o.new_axis_mask() != 0)
    return im.error("has an ellipsis or new-axis mask (", o.ellipsis_mask(), ", ", o.new_axis_mask(),
                    "); kiln reads begin, end and shrink-axis masks");
  auto x = im.input(0);
  if (!x) return x.status();
  auto begin = im.constant_ints(1, "begin");
  if (!begin) return begin.status();
  auto end = im.constant_ints(2, "end");
  if (!end) return end.status();
  auto strides = im.constant_ints(3, "strides");
  if (!strides) return strides.status();
  const std::size_t rank = x->info.rank();
  if (begin->size() > rank || end->size() != begin->size() || strides->size() != begin->size())
    return im.invalid("slices a tensor of rank ", rank, " with ", begin->size(), " begins, ", end->size(), " ends and ",
                      strides->size(), " strides");
  ops::StridedSlice::Params params;
  for (std::size_t d = 0; d < begin->size(); ++d) {
    const auto bit = [&](std::int32_t mask) { return (mask >> d & 1) != 0; };
    const std::int64_t step = (*strides)[d], dim = x->info.shape[d];
    if (step == 0) return im.invalid("has stride 0 on axis ", d);
    std::int64_t first = (*begin)[d], last = o.offset() ? first + (*end)[d] : (*end)[d];
    if (bit(o.shrink_axis_mask())) {  // one index, which must exist
      if (first < -dim || first >= dim) return im.invalid("takes index ", first, " of axis ", d, " (size ", dim, ")");
      first = first < 0 ? first + dim : first;
      params.begin.push_back(first);
      params.end.push_back(first + 1);
      params.strides.push_back(1);
      continue;
    }
    if (bit(o.begin_mask())) first = step > 0 ? 0 : past_the_end;
    if (bit(o.end_mask())) last = step > 0 ? past_the_end : -past_the_end;
    params.begin.push_back(first);
    params.end.push_back(last);
    params.strides.push_back(step);
  }
  return add_slice(im, *x, std::move(params));
}

Status convert_slice(Importer& im) {
  auto x = im.input(0);
  if (!x) return x.status();
  auto begin = im.constant_ints(1, "begin");
  if (!begin) return begin.status();
  auto size = im.constant_ints(2, "size");
  if (!size) return size.status();
  const std::size_t rank = x->info.rank();
  if (begin->size() != rank || size->size() != rank)
    return im.invalid("slices a tensor of rank ", rank, " with ", begin->size(), " begins and ", size->size(),
                      " sizes");
  ops::StridedSlice::Params params;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t first = (*begin)[d], count = (*size)[d], dim = x->info.shape[d];
    const std::int64_t last = count == -1 ? dim : first + count;
    if (first < 0 || count < -1 || last > dim)
      return im.invalid("takes ", count, " elements from index ", first, " of axis ", d, " (size ", dim, ")");
    params.begin.push_back(first);
    params.end.push_back(last);
  }
  return add_slice(im, *x, std::move(params));
}

Status convert_gather(Importer& im) {
  auto options = im.options<format::GatherOptions>();
  if (!options) return options.status();
  if ((*options)->batch_dims() != 0)
    return im.error("gathers with batch_dims ", (*options)->batch_dims(), "; kiln gathers with batch_dims 0");
  auto x = im.input(0);
  if (!x) return x.status();
  auto indices = im.input(1);
  if (!indices) return indices.status();
  const Held inputs[] = {*x, *indices};
  auto out = im.add<ops::Gather>({(*options)->axis()}, inputs);
  if (!out) return out.status();
  return im.set_output(0, out->front());
}

Status convert_split(Importer& im) {
  auto options = im.options<format::SplitOptions>();
  if (!options) return options.status();
  auto axis = im.constant_ints(0, "axis");
  if (!axis) return axis.status();
  if (axis->size() != 1) return im.invalid("splits along ", axis->size(), " axes; it takes one");
  auto x = im.input(1);
  if (!x) return x.status();
  const auto normalized = kiln::detail::normalize_axis((*axis)[0], x->info.rank());
  if (!normalized) return im.invalid(normalized.status().message());
  const std::int32_t parts = (*options)->num_splits();
  if (parts < 1 || static_cast<std::size_t>(parts) != im.num_outputs())
    return im.invalid("splits into ", parts, " parts but has ", im.num_outputs(), " outputs");
  const std::uint32_t dim = x->info.shape[*normalized];
  if (parts > static_cast<std::int32_t>(ops::Split::max_outputs) || dim % static_cast<std::uint32_t>(parts) != 0)
    return im.invalid("splits axis ", *normalized, " of ", x->info.to_string(), " into ", parts,
                      " equal parts; kiln splits into 1 to ", ops::Split::max_outputs, " that divide it");
  ops::Split::Params params{static_cast<std::int64_t>(*normalized), {}};
  for (std::int32_t i = 0; i < parts; ++i) params.sizes.push_back(dim / static_cast<std::uint32_t>(parts));
  auto out = im.add<ops::Split>(std::move(params), std::span(&*x, 1));
  if (!out) return out.status();
  for (std::size_t i = 0; i < out->size(); ++i)
    if (auto s = im.set_output(i, (*out)[i]); !s) return s;
  return Status::ok();
}

}  // namespace kiln::tflite::detail
