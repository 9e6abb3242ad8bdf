// SPDX-License-Identifier: Apache-2.0
// QUANTIZE (Float32 to 8 bits, or 8 bits to another scale) and DEQUANTIZE (8 bits to Float32).
#include "importer.hpp"

namespace kiln::tflite::detail {

Status convert_quantize(Importer& im) {
  auto x = im.input(0);
  if (!x) return x.status();
  if (!im.quantized_output()) return im.invalid("quantises to ", im.output_info(0).to_string(), ", not an 8-bit type");
  return is_quantized(x->info.type) ? im.add_as_output<ops::Requantize>({}, std::span(&*x, 1))
                                    : im.add_as_output<ops::Quantize>({}, std::span(&*x, 1));
}

Status convert_dequantize(Importer& im) {
  auto x = im.input(0);
  if (!x) return x.status();
  if (!is_quantized(x->info.type))
    return im.error("dequantizes ", x->info.to_string(), "; kiln dequantizes 8-bit tensors");
  return im.add_as_output<ops::Dequantize>({}, std::span(&*x, 1));
}

}  // namespace kiln::tflite::detail
