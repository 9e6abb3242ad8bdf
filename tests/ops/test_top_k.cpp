// SPDX-License-Identifier: Apache-2.0
// TopK: hand-computed ties and NaNs, torch.topk fixtures, Signed32, errors. On RefBackend, which runs it for
// every backend.
#include <cmath>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("TopK: largest and smallest, ties in order of position, NaN the largest", "[ops][top_k]") {
  // Rows [3, 1, 3, 2] and [NaN, 0, -1, 0]: ties keep the lower position first.
  const auto x = TestTensor::f32({2, 4}, {3, 1, 3, 2, NAN, 0, -1, 0});
  check_op<ops::TopK>({3, -1, true}, {x},
                      {TestTensor::f32({2, 3}, {3, 3, 2, NAN, 0, 0}), TestTensor::i32({2, 3}, {0, 2, 3, 0, 1, 3})});
  check_op<ops::TopK>({2, 1, false}, {x},
                      {TestTensor::f32({2, 2}, {1, 2, -1, 0}), TestTensor::i32({2, 2}, {1, 3, 2, 1})});
  // Along the first axis of [3, 2]: columns [5, 7, 6] and [0, -4, 9].
  check_op<ops::TopK>({2, 0, true}, {TestTensor::f32({3, 2}, {5, 0, 7, -4, 6, 9})},
                      {TestTensor::f32({2, 2}, {7, 9, 6, 0}), TestTensor::i32({2, 2}, {1, 2, 2, 0})});
  check_op<ops::TopK>({1, 0, false}, {TestTensor::i32({3}, {4, -2147483647 - 1, 4})},
                      {TestTensor::i32({1}, {-2147483647 - 1}), TestTensor::i32({1}, {1})});
}

TEST_CASE("TopK matches torch.topk", "[ops][top_k]") {
  for (const auto& c : load_fixtures("top_k")) {
    SECTION(c.name) {
      check_op<ops::TopK>({c.u32("k"), c.i64("axis"), c.u32("largest") != 0}, {c.tensor("input")},
                          {c.tensor("values"), c.tensor("indices").to_i32()}, 0, 0);
    }
  }
}

TEST_CASE("TopK refuses k of 0 or past the axis", "[ops][top_k][errors]") {
  const auto x = TestTensor::f32({2, 3}, std::vector<float>(6));
  for (std::uint32_t k : {0u, 4u}) {
    auto r = run_op<ops::TopK>({k, 1}, {x});
    REQUIRE_FALSE(r);
    CHECK_THAT(r.status().message(), Catch::Contains("axis 1 has 3 elements (k must be 1 to that)"));
  }
}
