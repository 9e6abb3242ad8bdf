// SPDX-License-Identifier: Apache-2.0
// FullyConnected: a hand-computed case, PyTorch linear fixtures, errors.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("FullyConnected: hand-computed 2 rows x 3 features -> 2 outputs", "[ops][fully_connected]") {
  auto x = TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto w = TestTensor::f32({2, 3}, {1, 0, -1, 0.5f, 0.5f, 0.5f}).as_constant();
  auto b = TestTensor::f32({2}, {100, 0}).as_constant();
  check_op<ops::FullyConnected>({}, {x, w, b}, {TestTensor::f32({2, 2}, {98, 3, 98, 7.5f})});
}

TEMPLATE_LIST_TEST_CASE("FullyConnected matches PyTorch linear", "[ops][fully_connected]", tested_backends) {
  for (const auto& c : load_fixtures("fully_connected")) {
    SECTION(c.name) {
      std::vector<TestTensor> inputs = {c.tensor("input"), c.tensor("weights").as_constant()};
      if (c.has("bias")) inputs.push_back(c.tensor("bias").as_constant());
      check_op<ops::FullyConnected, TestType>({}, inputs, {c.tensor("output")}, 1e-5, 1e-5);
    }
  }
}

TEST_CASE("FullyConnected rejects mismatched features", "[ops][fully_connected][errors]") {
  auto r = run_op<ops::FullyConnected>(
      {}, {TestTensor::f32({1, 3}, {1, 2, 3}), TestTensor::f32({2, 4}, std::vector<float>(8))});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("expect 4 input features") && Catch::Contains("has 3"));
}

TEMPLATE_LIST_TEST_CASE("FullyConnected matches RefBackend on every tile edge", "[ops][fully_connected]",
                        accelerated_backends) {
  // Rows around the register tile's height (6 or 14), outputs around its width (8, 16 or 32).
  for (std::uint32_t rows : {1u, 5u, 6u, 7u, 13u, 14u, 15u, 29u})
    for (std::uint32_t n : {1u, 7u, 16u, 17u, 33u, 65u})
      for (std::uint32_t k : {1u, 3u, 64u}) {
        INFO(rows << " rows, " << n << " outputs, " << k << " inputs");
        ops::FullyConnected::Params p;
        if (n == 17) p.activation = ops::Activation::relu6();
        if (n == 33) p.activation = ops::Activation::Params{ops::ActivationFunction::Sigmoid};
        std::vector<TestTensor> inputs = {random_f32({rows, k}, rows, -2, 2), random_f32({n, k}, n).as_constant()};
        if (k != 3) inputs.push_back(random_f32({n}, k).as_constant());
        check_against_ref<ops::FullyConnected, TestType>(p, inputs, 1e-5, 1e-5);
      }
}

TEST_CASE("FullyConnected in int8: ties rounded up, saturation (hand-computed)", "[ops][fully_connected][int8]") {
  // q - (-1) = (1, 2, 127); M = 1 x 0.5 / 1 = 0.5. Sums 1, 2, 127 x 130 = 16510, -3 become
  // 0.5 -> 1, 1, 8255 -> 127 (saturated), -1.5 -> -1 (ties go up, towards +infinity).
  const auto x = TestTensor::q8({1, 3}, DataType::QAsymmS8, {{1.0f}, -1, {}}, {0, 1, 126});
  const auto w = TestTensor::q8({4, 3}, DataType::QSymmS8, {{0.5f}, 0, {}}, {1, 0, 0, 0, 1, 0, 127, 127, 127, -3, 0, 0})
                     .as_constant();
  check_op<ops::FullyConnected>({}, {x, w},
                                {TestTensor::q8({1, 4}, DataType::QAsymmS8, {{1.0f}, 0, {}}, {1, 1, 127, -1})});
}
