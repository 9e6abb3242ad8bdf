// SPDX-License-Identifier: Apache-2.0
// GatherElements: ONNX's own examples by hand, PyTorch's torch.gather fixtures, errors. On RefBackend, which runs it
// for every backend (decision 0025).
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("GatherElements: ONNX's examples, negative indices, smaller index shapes", "[ops][gather_elements]") {
  // axis 1: [[1, 2], [3, 4]] by [[0, 0], [1, 0]] -> [[1, 1], [4, 3]].
  check_op<ops::GatherElements>({1}, {TestTensor::f32({2, 2}, {1, 2, 3, 4}), TestTensor::i32({2, 2}, {0, 0, 1, 0})},
                                {TestTensor::f32({2, 2}, {1, 1, 4, 3})});
  // axis 0, indices of fewer rows than data, one negative: [[1, 2, 3], [4, 5, 6], [7, 8, 9]] by
  // [[1, 2, 0], [2, -3, 0]] -> [[4, 8, 3], [7, 2, 3]].
  const auto data = TestTensor::f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  check_op<ops::GatherElements>({0}, {data, TestTensor::i32({2, 3}, {1, 2, 0, 2, -3, 0})},
                                {TestTensor::f32({2, 3}, {4, 8, 3, 7, 2, 3})});
}

TEST_CASE("GatherElements matches torch.gather", "[ops][gather_elements]") {
  for (const auto& c : load_fixtures("gather_elements")) {
    SECTION(c.name) {
      check_op<ops::GatherElements>({c.i64("axis")}, {c.tensor("input"), c.tensor("indices").to_i32()},
                                    {c.tensor("output")}, 0, 0);
    }
  }
}

TEST_CASE("GatherElements refuses an index out of range at run and bad shapes at load",
          "[ops][gather_elements][errors]") {
  const auto data = TestTensor::f32({2, 2}, {1, 2, 3, 4});
  auto out_of_range = run_op<ops::GatherElements>({1}, {data, TestTensor::i32({2, 1}, {0, 2})});
  REQUIRE_FALSE(out_of_range);
  CHECK_THAT(out_of_range.status().message(),
             Catch::Contains("GatherElements index 2 at position 1 is out of range for axis 1 of size 2"));
  auto rank = run_op<ops::GatherElements>({0}, {data, TestTensor::i32({2}, {0, 1})});
  REQUIRE_FALSE(rank);
  CHECK_THAT(rank.status().message(), Catch::Contains("indices have rank 1; data has rank 2"));
  auto wide = run_op<ops::GatherElements>({0}, {data, TestTensor::i32({1, 3}, {0, 1, 0})});
  REQUIRE_FALSE(wide);
  CHECK_THAT(wide.status().message(), Catch::Contains("indices dimension 1 is 3, more than data's 2"));
}
