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

TEST_CASE("FullyConnected of Signed32 (ONNX MatMulInteger): hand-computed, sums wrapping as int32 does",
          "[ops][fully_connected]") {
  // Row 0: 2^30 x 4 = 2^32 wraps to 0, 2^30 - 3; row 1: -4 - 5 + 7, -1 + 5.
  auto x = TestTensor::i32({2, 2}, {1 << 30, 3, -1, -5});
  auto w = TestTensor::i32({2, 2}, {4, 0, 1, -1}).as_constant();
  auto b = TestTensor::i32({2}, {0, 0}).as_constant();
  check_op<ops::FullyConnected>({}, {x, w, b}, {TestTensor::i32({2, 2}, {0, (1 << 30) - 3, -4, 4})});
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

TEMPLATE_LIST_TEST_CASE("FullyConnected in int8: ties rounded up, saturation (hand-computed)",
                        "[ops][fully_connected][int8]", tested_backends) {
  // q - (-1) = (1, 2, 127); M = 1 x 0.5 / 1 = 0.5. Sums 1, 2, 127 x 130 = 16510, -3 become
  // 0.5 -> 1, 1, 8255 -> 127 (saturated), -1.5 -> -1 (ties go up, towards +infinity).
  const auto x = TestTensor::q8({1, 3}, DataType::QAsymmS8, {{1.0f}, -1, {}}, {0, 1, 126});
  const auto w = TestTensor::q8({4, 3}, DataType::QSymmS8, {{0.5f}, 0, {}}, {1, 0, 0, 0, 1, 0, 127, 127, 127, -3, 0, 0})
                     .as_constant();
  check_op<ops::FullyConnected, TestType>(
      {}, {x, w}, {TestTensor::q8({1, 4}, DataType::QAsymmS8, {{1.0f}, 0, {}}, {1, 1, 127, -1})});
}

TEMPLATE_LIST_TEST_CASE("FullyConnected in int8 is bit-exact with RefBackend on every tile edge",
                        "[ops][fully_connected][int8]", accelerated_backends) {
  std::uint32_t seed = 0;
  for (DataType type : {DataType::QAsymmU8, DataType::QAsymmS8})
    for (std::uint32_t rows : {1u, 6u, 7u, 14u, 15u, 29u})
      for (std::uint32_t n : {1u, 7u, 16u, 17u, 33u, 65u})
        for (std::uint32_t k : {1u, 3u, 5u, 64u, 131u}) {
          INFO(to_string(type) << ": " << rows << " rows, " << n << " outputs, " << k << " inputs");
          ++seed;
          const std::int32_t x_zero = type == DataType::QAsymmU8 ? static_cast<std::int32_t>(seed * 37 % 256)
                                                                 : static_cast<std::int32_t>(seed * 37 % 256) - 128;
          ops::FullyConnected::Params p;
          if (n == 17) p.activation = ops::Activation::relu6();
          const auto x = random_q8({rows, k}, type, {{0.05f}, x_zero, {}}, seed);
          std::vector<float> scales;
          for (std::uint32_t j = 0; j < n; ++j) scales.push_back(0.001f * static_cast<float>(1 + j % 7));
          const auto w = random_q8({n, k}, DataType::QSymmS8, {scales, 0, 0u}, seed + 1000).as_constant();
          std::vector<std::int32_t> bias(n);
          for (std::uint32_t j = 0; j < n; ++j) bias[j] = static_cast<std::int32_t>(j * 104729 % 20001) - 10000;
          const auto y_scale = static_cast<float>(0.05 * 0.004 * 74 * 74 * std::sqrt(static_cast<double>(k)) / 50);
          const std::vector<ops::OutputType> y_type{{type, {{y_scale}, -x_zero / 2, {}}}};
          check_against_ref<ops::FullyConnected, TestType>(p, {x, w, TestTensor::i32({n}, bias).as_constant()}, 0, 0,
                                                           y_type);
        }
}

TEMPLATE_LIST_TEST_CASE("FullyConnected in int8 at the saturation edges is bit-exact with RefBackend",
                        "[ops][fully_connected][int8]", accelerated_backends) {
  // The longest reduction decision 0014 allows (2^15) with the largest products and biases: the
  // accumulators reach +-(2^30 + 255 x 128 x 2^15), within int32 by 4 million.
  constexpr std::uint32_t k = 32768;
  for (DataType type : {DataType::QAsymmU8, DataType::QAsymmS8}) {
    INFO(to_string(type));
    const bool u8 = type == DataType::QAsymmU8;
    const std::int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
    // Row 0 all lowest with the zero point highest, row 1 all highest with the zero point lowest.
    std::vector<std::int32_t> x_values(2 * k, lo);
    std::fill(x_values.begin() + k, x_values.end(), hi);
    // Weights -128 and 127 whole rows, then mixed.
    std::vector<std::int32_t> w_values(4 * k);
    for (std::uint32_t p = 0; p < k; ++p) {
      w_values[p] = -128;
      w_values[k + p] = 127;
      w_values[2 * k + p] = p % 2 == 0 ? -128 : 127;
      w_values[3 * k + p] = static_cast<std::int32_t>(p * 7919 % 256) - 128;
    }
    const auto w = TestTensor::q8({4, k}, DataType::QSymmS8, {{1.0f}, 0, {}}, w_values).as_constant();
    const auto bias = TestTensor::i32({4}, {-(1 << 30), 1 << 30, -(1 << 30), 1 << 30}).as_constant();
    for (const std::int32_t zero : {lo, hi}) {
      const auto x = TestTensor::q8({2, k}, type, {{1.0f}, zero, {}}, x_values);
      // Output scales from 2^10 (multipliers near 2^-10) down to 2^-20 x ... (many saturate).
      for (const float y_scale : {1024.0f * 1024.0f * 4.0f, 1024.0f, 1.0f / 1024.0f, 1.0f / (1024.0f * 1024.0f)}) {
        INFO("zero point " << zero << ", output scale " << y_scale);
        check_against_ref<ops::FullyConnected, TestType>({}, {x, w, bias}, 0, 0, {{type, {{y_scale}, 3, {}}}});
      }
    }
    // A multiplier under 2^-32, held as 0: every output is the zero point.
    const auto x = TestTensor::q8({2, k}, type, {{1.0f / (1 << 20)}, lo, {}}, x_values);
    const auto tiny_w = TestTensor::q8({4, k}, DataType::QSymmS8, {{1.0f / (1 << 20)}, 0, {}}, w_values).as_constant();
    check_against_ref<ops::FullyConnected, TestType>({}, {x, tiny_w}, 0, 0, {{type, {{1024.0f}, 3, {}}}});
  }
}
