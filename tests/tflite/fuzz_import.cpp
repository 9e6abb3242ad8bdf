// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any bytes through the TensorFlow Lite importer (FlatBuffers' verifier first),
// what it accepts through the optimizer and, for small networks, a load and one inference on
// RefBackend with zeroed inputs. Every input must end in a Status or outputs, never in a crash, a
// leak or undefined behaviour. Build and run: sh tools/fuzz.sh tflite SECONDS.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <kiln/import/tflite.hpp>
#include <kiln/kiln.hpp>

namespace {
// Larger networks are imported and optimized but not run: an inference would dominate the time
// libFuzzer has for mutations.
constexpr std::uint64_t max_run_bytes = std::uint64_t{1} << 22;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto model = kiln::tflite::import_model(std::as_bytes(std::span(data, size)));
  if (!model) return 0;
  using Runtime = kiln::Runtime<kiln::RefBackend>;
  auto optimized = Runtime::optimize(std::move(model->network));
  if (!optimized) return 0;
  std::uint64_t bytes = 0;
  for (const auto& t : model->inputs) bytes += t.info.num_bytes();
  for (const auto& t : model->outputs) bytes += t.info.num_bytes();
  if (bytes > max_run_bytes) return 0;
  Runtime runtime;
  auto id = runtime.load(std::move(*optimized));
  if (!id) return 0;
  std::vector<std::vector<std::byte>> buffers;
  buffers.reserve(model->inputs.size() + model->outputs.size());  // the bindings point into them
  std::vector<kiln::InputBinding> inputs;
  std::vector<kiln::OutputBinding> outputs;
  for (const auto& t : model->inputs) {
    if (!t.used) continue;
    buffers.emplace_back(t.info.num_bytes());
    inputs.push_back({t.binding, {t.info, buffers.back().data()}});
  }
  for (const auto& t : model->outputs) {
    buffers.emplace_back(t.info.num_bytes());
    outputs.push_back({t.binding, {t.info, buffers.back().data()}});
  }
  (void)runtime.enqueue(*id, inputs, outputs);
  return 0;
}
