// SPDX-License-Identifier: Apache-2.0
// Cast among Float32, Signed32 and Boolean: truncation, saturation, NaN and truth, hand-computed.
// On RefBackend (decision 0025); Float32 <-> Float16 rounding, on every backend, is in test_float16.cpp.
#include <cmath>
#include <limits>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Cast among Float32, Signed32 and Boolean", "[ops][cast]") {
  const float inf = std::numeric_limits<float>::infinity();
  // Float32 -> Signed32 truncates toward zero; beyond int32 it saturates; NaN is 0.
  const auto x = TestTensor::f32({7}, {2.9f, -2.9f, -0.0f, 3e9f, -inf, NAN, 16777216.0f});
  check_op<ops::Cast>({.to = DataType::Signed32}, {x},
                      {TestTensor::i32({7}, {2, -2, 0, 2147483647, -2147483647 - 1, 0, 16777216})});
  // A number is true when it is not zero: -0 is false, NaN is true.
  check_op<ops::Cast>({.to = DataType::Boolean}, {x}, {TestTensor::boolean({7}, {1, 1, 0, 1, 1, 1, 1})});
  const auto truth = TestTensor::boolean({3}, {1, 0, 1});
  check_op<ops::Cast>({.to = DataType::Float32}, {truth}, {TestTensor::f32({3}, {1, 0, 1})});
  check_op<ops::Cast>({.to = DataType::Signed32}, {truth}, {TestTensor::i32({3}, {1, 0, 1})});
  const auto ints = TestTensor::i32({3}, {-7, 0, 16777217});
  // 2^24 + 1 is not a float: it rounds to the nearest, 2^24.
  check_op<ops::Cast>({.to = DataType::Float32}, {ints}, {TestTensor::f32({3}, {-7, 0, 16777216})});
  check_op<ops::Cast>({.to = DataType::Boolean}, {ints}, {TestTensor::boolean({3}, {1, 0, 1})});
}

TEST_CASE("Cast refuses types it does not convert", "[ops][cast][errors]") {
  auto r = run_op<ops::Cast>({.to = DataType::QAsymmU8}, {TestTensor::f32({2}, {1, 2})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(),
             Catch::Contains("casts to Float32, Float16, Signed32 or Boolean; the target is QAsymmU8"));
  auto s = run_op<ops::Cast>({}, {TestTensor::q8({2}, DataType::QAsymmS8, {{1.0f}, 0, {}}, {1, 2})});
  REQUIRE_FALSE(s);
  CHECK_THAT(s.status().message(),
             Catch::Contains("casts Float32, Float16, Signed32 and Boolean tensors; input 0 is QAsymmS8"));
}
