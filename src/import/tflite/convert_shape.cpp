// SPDX-License-Identifier: Apache-2.0
// The operators that move data: RESHAPE and SQUEEZE (the output tensor's shape is the one to
// reach), CONCATENATION, PAD and PADV2, TRANSPOSE.
#include "importer.hpp"

#include <cstring>

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

}  // namespace kiln::tflite::detail
