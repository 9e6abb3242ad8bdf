// SPDX-License-Identifier: Apache-2.0
// Keyword spotting on a Cortex-M4F: the DS-CNN of tests/models/ds_cnn in Float32, or quantised to
// int8, compiled into the program by `kiln compile` (ds_cnn.hpp, ds_cnn_int8.hpp: weights, tensors,
// steps and memory plan as constants), run by StaticModel in a static arena. KWS_SPOTTER picks the
// network (keyword_spotters.hpp). Nothing may allocate: this program's _sbrk ends it with status 99.
// It prints the twelve class scores and their largest difference from the reference's, and fails
// beyond the spotter's tolerance. The same code runs on the host in tests/static.
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <span>

#include <kiln/backends/ref/ref_backend.hpp>

#include "keyword_spotters.hpp"

using Spotter = KWS_SPOTTER;
static_assert(Spotter::arena_bytes <= 64 * 1024, "DS-CNN must fit the 64 KiB of SRAM this firmware gives it");
alignas(64) static std::byte arena[Spotter::arena_bytes];

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
  Spotter::Model<kiln::RefBackend> model{arena};
  float scores[std::size(Spotter::expected)];
  constexpr int inferences = 10;
  for (int i = 0; i < inferences; ++i)
    if (kiln::Status status = model.run(std::span<const float>(Spotter::input), std::span<float>(scores)); !status) {
      std::printf("kiln: %s\n", status.message().c_str());
      return 1;
    }
  float worst = 0;
  bool within = true;
  std::printf(
      "%s keyword spotting, %d inferences, arena %u B (lower bound %u B), model state %u B\nscores:", Spotter::name,
      inferences, unsigned(Spotter::arena_bytes), unsigned(Spotter::arena_lower_bound), unsigned(sizeof model));
  for (std::size_t c = 0; c < std::size(scores); ++c) {
    const float expected = Spotter::expected[c], difference = std::fabs(scores[c] - expected);
    worst = std::fmax(worst, difference);
    within = within && Spotter::agrees(scores[c], expected);
    std::printf(" ");
    print_fixed(scores[c]);
  }
  std::printf("\nlargest difference from %s: %ld e-9\n", Spotter::reference, std::lround(worst * 1e9f));
  return within ? 0 : 1;
}
