// SPDX-License-Identifier: Apache-2.0
// Keyword spotting on a Cortex-M4F: the DS-CNN of tests/models/ds_cnn, compiled into the program by
// `kiln compile` (ds_cnn.hpp: weights, tensors, steps and memory plan as constants), run by
// StaticModel in a static arena. Nothing may allocate: this program's _sbrk ends it with status 99.
// It prints the twelve class scores and their largest difference from PyTorch's, and fails beyond
// the tolerance `kiln check` uses. The same code runs on the host in tests/static.
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <span>

#include <kiln/backends/ref/ref_backend.hpp>

#include "ds_cnn.hpp"
#include "ds_cnn_test_data.hpp"

static_assert(ds_cnn::arena_bytes <= 64 * 1024, "DS-CNN must fit the 64 KiB of SRAM this firmware gives it");
alignas(64) static std::byte arena[ds_cnn::arena_bytes];

// The heap's only way to grow: any allocation ends the program.
extern "C" void* _sbrk(std::ptrdiff_t) { std::_Exit(99); }

namespace {

// newlib formats floats with heap-allocated big numbers; a score is printed as a fixed-point integer.
void print_fixed(float value) {
  const long micros = std::lround(std::fabs(value) * 1e6f);
  std::printf("%s%ld.%06ld", value < 0 ? "-" : "", micros / 1000000, micros % 1000000);
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // no stdio buffer from the heap
  ds_cnn::Model<kiln::RefBackend> model{arena};
  float scores[std::size(ds_cnn_test_data::expected_output)];
  constexpr int inferences = 10;
  for (int i = 0; i < inferences; ++i)
    if (kiln::Status status = model.run(std::span<const float>(ds_cnn_test_data::input), std::span<float>(scores));
        !status) {
      std::printf("kiln: %s\n", status.message().c_str());
      return 1;
    }
  float worst = 0;
  bool within = true;
  std::printf("DS-CNN keyword spotting, %d inferences, arena %u B (lower bound %u B), model state %u B\nscores:",
              inferences, unsigned(ds_cnn::arena_bytes), unsigned(ds_cnn::arena_lower_bound), unsigned(sizeof model));
  for (std::size_t c = 0; c < std::size(scores); ++c) {
    const float expected = ds_cnn_test_data::expected_output[c], difference = std::fabs(scores[c] - expected);
    worst = std::fmax(worst, difference);
    within = within && difference <= 1e-4f + 1e-3f * std::fabs(expected);
    std::printf(" ");
    print_fixed(scores[c]);
  }
  std::printf("\nlargest difference from PyTorch: %ld e-9\n", std::lround(worst * 1e9f));
  return within ? 0 : 1;
}
