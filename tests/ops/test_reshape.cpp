// SPDX-License-Identifier: Apache-2.0
// Reshape (also Squeeze, ExpandDims, Flatten): hand-computed shapes and values, errors.
#include "support/op_runner.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Reshape keeps row-major order and infers -1 and 0", "[ops][reshape]") {
  std::vector<float> values(24);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  auto x = TestTensor::f32({2, 3, 4}, values);
  check_op<ops::Reshape>({{4, -1}}, {x}, {TestTensor::f32({4, 6}, values)});
  check_op<ops::Reshape>({{0, 12}}, {x}, {TestTensor::f32({2, 12}, values)});
  // Squeeze / ExpandDims are reshapes.
  check_op<ops::Reshape>({{1, 2, 1, 3, 4}}, {x}, {TestTensor::f32({1, 2, 1, 3, 4}, values)});
  check_op<ops::Reshape>({{24}}, {TestTensor::f32({1, 24, 1}, values)}, {TestTensor::f32({24}, values)});
  check_op<ops::Reshape>({{}}, {TestTensor::f32({1, 1}, {7})}, {TestTensor::f32({}, {7})});
}

TEST_CASE("Reshape rejects impossible shapes", "[ops][reshape][errors]") {
  auto x = TestTensor::f32({2, 3}, std::vector<float>(6));
  auto message = [&](std::vector<std::int64_t> shape) {
    auto r = run_op<ops::Reshape>({shape}, {x});
    REQUIRE_FALSE(r);
    return r.status().message();
  };
  CHECK_THAT(message({4, 2}), Catch::Contains("cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)"));
  CHECK_THAT(message({-1, -1}), Catch::Contains("more than one -1"));
  CHECK_THAT(message({4, -1}), Catch::Contains("cannot infer the -1"));
  CHECK_THAT(message({-3}), Catch::Contains("target dimension 0 is -3"));
  CHECK_THAT(message({1, 1, 1, 1, 1, 1, 6}), Catch::Contains("target shape has more than 6 entries"));
}
