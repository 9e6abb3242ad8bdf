// SPDX-License-Identifier: Apache-2.0
// Concat: a hand-computed case, numpy fixtures, errors.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Concat: hand-computed along the last axis", "[ops][concat]") {
  check_op<ops::Concat>({.axis = 1}, {TestTensor::f32({2, 1}, {1, 2}), TestTensor::f32({2, 2}, {3, 4, 5, 6})},
                        {TestTensor::f32({2, 3}, {1, 3, 4, 2, 5, 6})}, 0, 0);
}

TEMPLATE_LIST_TEST_CASE("Concat matches numpy.concatenate", "[ops][concat]", tested_backends) {
  for (const auto& c : load_fixtures("concat")) {
    SECTION(c.name) {
      std::vector<TestTensor> inputs;
      for (int i = 0; c.has("input" + std::to_string(i)); ++i) inputs.push_back(c.tensor("input" + std::to_string(i)));
      check_op<ops::Concat, TestType>({c.i64("axis")}, inputs, {c.tensor("output")}, 0, 0);
    }
  }
}

TEST_CASE("Concat accepts a constant input", "[ops][concat]") {
  check_op<ops::Concat>({.axis = 0}, {TestTensor::f32({1}, {1}), TestTensor::f32({2}, {2, 3}).as_constant()},
                        {TestTensor::f32({3}, {1, 2, 3})}, 0, 0);
}

TEST_CASE("Concat rejects inputs that differ outside the axis", "[ops][concat][errors]") {
  auto r = run_op<ops::Concat>({.axis = 0}, {TestTensor::f32({1, 2}, {1, 2}), TestTensor::f32({1, 3}, {1, 2, 3})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("differs from input 0 [1, 2] in dimension 1"));
}

TEMPLATE_LIST_TEST_CASE("Concat matches RefBackend along every axis, with odd and empty pieces", "[ops][concat]",
                        accelerated_backends) {
  for (std::int64_t axis : {0, 1, 2, 3, -1}) {
    INFO("axis " << axis);
    const std::size_t a = static_cast<std::size_t>(axis < 0 ? axis + 4 : axis);
    std::vector<TestTensor> inputs;
    for (std::uint32_t piece : {3u, 1u, 0u, 17u}) {
      std::vector<std::uint32_t> dims = {2, 5, 7, 9};
      dims[a] = piece;
      inputs.push_back(random_f32(TensorShape(std::span<const std::uint32_t>(dims)), piece + 1));
    }
    check_against_ref<ops::Concat, TestType>({axis}, inputs, 0, 0);
  }
}

TEMPLATE_LIST_TEST_CASE("Concat moves int8 values of one quantisation and refuses to mix them", "[ops][concat][int8]",
                        tested_backends) {
  const QuantizationInfo q{{0.5f}, 10, {}};
  const auto a = TestTensor::q8({1, 2}, DataType::QAsymmU8, q, {12, 8});
  const auto b = TestTensor::q8({1, 1}, DataType::QAsymmU8, q, {255});
  check_op<ops::Concat, TestType>({.axis = 1}, {a, b}, {TestTensor::q8({1, 3}, DataType::QAsymmU8, q, {12, 8, 255})});
  // Bytes of another scale would change value if moved: a Requantize must come first.
  const auto other = TestTensor::q8({1, 1}, DataType::QAsymmU8, {{0.25f}, 10, {}}, {255});
  auto mixed = run_op<ops::Concat, TestType>({.axis = 1}, {a, other});
  REQUIRE_FALSE(mixed);
  CHECK_THAT(mixed.status().message(),
             Catch::Contains("is quantised unlike the output") && Catch::Contains("requantize the input first"));
}
