// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any bytes through the ONNX importer, and what it accepts through the optimizer.
// Every input must end in a Status or a network, never in a crash, a leak or undefined behaviour.
// Build and run: sh tools/fuzz.sh onnx SECONDS (clang, -fsanitize=fuzzer,address,undefined).
#include <cstddef>
#include <cstdint>

#include <kiln/import/onnx.hpp>
#include <kiln/kiln.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto model = kiln::onnx::import_model(std::as_bytes(std::span(data, size)));
  if (!model) return 0;
  auto optimized = kiln::optimize<kiln::RefBackend>(std::move(model->network));
  (void)optimized;
  return 0;
}
