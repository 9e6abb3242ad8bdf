// SPDX-License-Identifier: Apache-2.0
// Softmax and LogSoftmax: hand-computed cases, PyTorch fixtures (axis, beta, large values), errors.
#include <cmath>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Softmax: hand-computed", "[ops][softmax]") {
  // softmax([0, ln 3]) = [1/4, 3/4]; it is shift-invariant, so [16, 16 + ln 3] gives the same.
  const float ln3 = std::log(3.0f);
  check_op<ops::Softmax>({}, {TestTensor::f32({2, 2}, {0, ln3, 16, 16 + ln3})},
                         {TestTensor::f32({2, 2}, {0.25f, 0.75f, 0.25f, 0.75f})}, 1e-5, 1e-6);
  check_op<ops::Softmax>({.log = true}, {TestTensor::f32({1, 2}, {0, ln3})},
                         {TestTensor::f32({1, 2}, {std::log(0.25f), std::log(0.75f)})}, 1e-5, 1e-6);
}

TEMPLATE_LIST_TEST_CASE("Softmax matches PyTorch softmax and log_softmax", "[ops][softmax]", tested_backends) {
  for (const auto& c : load_fixtures("softmax")) {
    SECTION(c.name) {
      ops::Softmax::Params p{c.i64("axis"), c.f32("beta"), c.flag("log")};
      check_op<ops::Softmax, TestType>(p, {c.tensor("input")}, {c.tensor("output")}, 1e-5, 1e-6);
    }
  }
}

TEST_CASE("Softmax rejects an axis out of range", "[ops][softmax][errors]") {
  auto r = run_op<ops::Softmax>({.axis = 2}, {TestTensor::f32({2, 2}, {1, 2, 3, 4})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("axis 2 is out of range for a tensor of rank 2"));
}

TEMPLATE_LIST_TEST_CASE("Softmax matches RefBackend along the innermost axis", "[ops][softmax]", accelerated_backends) {
  for (std::uint32_t n : {1u, 3u, 7u, 16u, 17u, 33u, 1000u})
    for (bool log : {false, true}) {
      INFO(n << " classes, log " << log);
      check_against_ref<ops::Softmax, TestType>({.axis = -1, .beta = 0.7f, .log = log},
                                                {random_f32({3, n}, n, -20.0f, 20.0f)}, 1e-5, 1e-6);
    }
}

TEMPLATE_LIST_TEST_CASE("Softmax in int8: probabilities at scale 1/256 (hand-computed)", "[ops][softmax][int8]",
                        tested_backends) {
  // Android NNAPI's softmax_quant8 case: u8 at scale 0.5, zero point 0. Bytes 1..5 are 0.5..2.5;
  // exp(-2), exp(-1.5), exp(-1), exp(-0.5), 1 over their sum 2.33293 are 0.05801, 0.09564,
  // 0.15769, 0.25999, 0.42865; times 256: 14.85, 24.48, 40.37, 66.56, 109.73 -> 15, 24, 40, 67, 110.
  const QuantizationInfo half{{0.5f}, 0, {}}, probability{{1.0f / 256}, 0, {}};
  const auto x = TestTensor::q8({2, 5}, DataType::QAsymmU8, half, {1, 2, 3, 4, 5, 255, 254, 253, 252, 251});
  check_op<ops::Softmax, TestType>(
      {}, {x}, {TestTensor::q8({2, 5}, DataType::QAsymmU8, probability, {15, 24, 40, 67, 110, 110, 67, 40, 24, 15})}, 0,
      0);
  // The same rows along axis 0 of the transpose, in s8 (zero point -128 out, as ONNX Runtime's
  // quantiser writes Softmax): the outputs less 128.
  const QuantizationInfo s8_probability{{1.0f / 256}, -128, {}};
  const auto xt = TestTensor::q8({5, 2}, DataType::QAsymmS8, half, {1, 127, 2, 126, 3, 125, 4, 124, 5, 123});
  check_op<ops::Softmax, TestType>({.axis = 0}, {xt},
                                   {TestTensor::q8({5, 2}, DataType::QAsymmS8, s8_probability,
                                                   {-113, -18, -104, -61, -88, -88, -61, -104, -18, -113})},
                                   0, 0);
  // beta scales the input: beta 2 at scale 0.25 is scale 0.5 again.
  check_op<ops::Softmax, TestType>(
      {.beta = 2.0f}, {TestTensor::q8({1, 5}, DataType::QAsymmU8, {{0.25f}, 7, {}}, {8, 9, 10, 11, 12})},
      {TestTensor::q8({1, 5}, DataType::QAsymmU8, probability, {15, 24, 40, 67, 110})}, 0, 0);
}

TEST_CASE("Softmax in int8 refuses LogSoftmax and a negative beta, saying so", "[ops][softmax][int8][errors]") {
  const QuantizationInfo q{{0.5f}, 0, {}};
  const auto x = TestTensor::q8({1, 2}, DataType::QAsymmU8, q, {1, 2});
  auto log = run_op<ops::Softmax>({.log = true}, {x}, 0, nullptr, {{DataType::QAsymmU8, q}});
  REQUIRE_FALSE(log);
  CHECK_THAT(log.status().message(), Catch::Contains("LogSoftmax in Float32 only"));
  auto negative = run_op<ops::Softmax>({.beta = -1.0f}, {x}, 0, nullptr, {{DataType::QAsymmU8, q}});
  REQUIRE_FALSE(negative);
  CHECK_THAT(negative.status().message(), Catch::Contains("positive finite beta"));
}

TEMPLATE_LIST_TEST_CASE("Softmax in int8 is bit-exact with RefBackend on any axis", "[ops][softmax][int8]",
                        accelerated_backends) {
  std::uint32_t seed = 5200;
  struct Case {
    TensorShape shape;
    std::int64_t axis;
  };
  const Case cases[] = {{{3, 1}, -1}, {{3, 7}, -1}, {{2, 33}, 1}, {{4, 1000}, -1}, {{2, 5, 6}, 1}, {{301, 10}, -1}};
  for (DataType type : {DataType::QAsymmU8, DataType::QAsymmS8})
    for (const auto& c : cases)
      for (float scale : {0.0007f, 0.047f, 1.3f}) {
        INFO(to_string(type) << " " << c.shape.to_string() << " axis " << c.axis << " scale " << scale);
        const bool u8 = type == DataType::QAsymmU8;
        const auto x = random_q8(c.shape, type, {{scale}, u8 ? 140 : 12, {}}, ++seed);
        // An output scale other than 1/256, and one that saturates, as a calibrated range may give.
        for (float y_scale : {1.0f / 256, 0.0011f}) {
          const std::vector<ops::OutputType> y{{type, {{y_scale}, u8 ? 3 : -120, {}}}};
          check_against_ref<ops::Softmax, TestType>({.axis = c.axis, .beta = 0.9f}, {x}, 0, 0, y);
        }
      }
}
