// SPDX-License-Identifier: Apache-2.0
// Activation: hand-computed values of every function and PyTorch fixtures.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Activation: hand-computed values", "[ops][activation]") {
  using F = ops::ActivationFunction;
  auto x = TestTensor::f32({1, 5}, {-4, -1, 0, 2, 8});
  check_op<ops::Activation>({F::ReLU}, {x}, {TestTensor::f32({1, 5}, {0, 0, 0, 2, 8})});
  check_op<ops::Activation>(ops::Activation::relu6(), {x}, {TestTensor::f32({1, 5}, {0, 0, 0, 2, 6})});
  check_op<ops::Activation>({F::BoundedReLU, 1, -1}, {x}, {TestTensor::f32({1, 5}, {-1, -1, 0, 1, 1})});
  check_op<ops::Activation>({F::LeakyReLU, 0.5f}, {x}, {TestTensor::f32({1, 5}, {-2, -0.5f, 0, 2, 8})});
  check_op<ops::Activation>({F::HardSigmoid, 0.2f, 0.5f}, {x}, {TestTensor::f32({1, 5}, {0, 0.3f, 0.5f, 0.9f, 1})});
  // hardswish(-1) = -1 * 2 / 6; hardswish(2) = 2 * 5 / 6.
  check_op<ops::Activation>({F::HardSwish}, {x}, {TestTensor::f32({1, 5}, {0, -1.0f / 3, 0, 5.0f / 3, 8})});
  check_op<ops::Activation>({F::Sigmoid}, {TestTensor::f32({1}, {0})}, {TestTensor::f32({1}, {0.5f})});
  // silu(x) = x / (1 + e^-x): e^4 = 54.59815, e^1 = 2.7182817, e^-2 = 0.13533528, e^-8 = 3.3546263e-4.
  check_op<ops::Activation>(
      {F::SiLU}, {x}, {TestTensor::f32({1, 5}, {-4 / 55.59815f, -1 / 3.7182817f, 0, 2 / 1.13533528f, 8 / 1.00033546f})},
      1e-6, 1e-7);
  // softplus(x) = log(1 + e^x): log(1 + e^-4) = 0.01814993, log(1 + e^-1) = 0.31326169, log 2, and
  // x + log(1 + e^-x) above; at 100, e^100 overflows a float but softplus is 100.
  check_op<ops::Activation>({F::Softplus}, {TestTensor::f32({1, 5}, {-4, -1, 0, 2, 100})},
                            {TestTensor::f32({1, 5}, {0.01814993f, 0.31326169f, 0.69314718f, 2.12692801f, 100})}, 1e-6,
                            1e-7);
  // mish(x) = x tanh(softplus(x)): tanh(0.31326169) = 0.30340147, tanh(2.12692801) = 0.97197948.
  check_op<ops::Activation>({F::Mish}, {TestTensor::f32({1, 3}, {-1, 0, 2})},
                            {TestTensor::f32({1, 3}, {-0.30340146f, 0, 1.94395896f})}, 1e-6, 1e-7);
  check_op<ops::Activation>({F::Softsign}, {x}, {TestTensor::f32({1, 5}, {-0.8f, -0.5f, 0, 2.0f / 3, 8.0f / 9})});
  // SELU with alpha 2, gamma 3: 3 x 2 (e^-1 - 1) = -3.79272335 at -1.
  check_op<ops::Activation>({F::SELU, 2, 3}, {TestTensor::f32({1, 3}, {-1, 0, 2})},
                            {TestTensor::f32({1, 3}, {-3.79272335f, 0, 6})});
  // CELU with alpha 2: 2 (e^(-4 / 2) - 1) = -1.72932943 at -4.
  check_op<ops::Activation>({F::CELU, 2}, {x}, {TestTensor::f32({1, 5}, {-1.72932943f, -0.78693868f, 0, 2, 8})});
  check_op<ops::Activation>({F::ThresholdedReLU, 2}, {x}, {TestTensor::f32({1, 5}, {0, 0, 0, 0, 8})});
  // Shrink with lambd 1.5, bias 0.5: -4 -> -3.5, -1 and 0 -> 0, 2 -> 1.5, 8 -> 7.5.
  check_op<ops::Activation>({F::Shrink, 1.5f, 0.5f}, {x}, {TestTensor::f32({1, 5}, {-3.5f, 0, 0, 1.5f, 7.5f})});
}

TEMPLATE_LIST_TEST_CASE("Activation matches PyTorch", "[ops][activation]", tested_backends) {
  for (const auto& c : load_fixtures("activation")) {
    SECTION(c.name) {
      ops::Activation::Params p{static_cast<ops::ActivationFunction>(c.u32("function")), c.f32("a"), c.f32("b")};
      check_op<ops::Activation, TestType>(p, {c.tensor("input")}, {c.tensor("output")}, 2e-6, 1e-6);
    }
  }
}

TEST_CASE("Activation rejects parameters outside a function's definition", "[ops][activation][errors]") {
  auto r = run_op<ops::Activation>({ops::ActivationFunction::BoundedReLU, 0, 1}, {TestTensor::f32({1}, {0})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("lower bound b <= upper bound a"));
  auto celu = run_op<ops::Activation>({ops::ActivationFunction::CELU, 0}, {TestTensor::f32({1}, {0})});
  REQUIRE_FALSE(celu);
  CHECK_THAT(celu.status().message(), Catch::Contains("CELU needs alpha a != 0"));
  auto shrink = run_op<ops::Activation>({ops::ActivationFunction::Shrink, -1}, {TestTensor::f32({1}, {0})});
  REQUIRE_FALSE(shrink);
  CHECK_THAT(shrink.status().message(), Catch::Contains("Shrink needs lambd a >= 0"));
}

namespace {
using F = ops::ActivationFunction;
/// Every function, with parameters where it takes them (GELU twice: exact and the tanh form).
const ops::Activation::Params every_function[] = {{F::ReLU},
                                                  ops::Activation::relu6(),
                                                  {F::LeakyReLU, 0.1f},
                                                  {F::ELU, 1.5f},
                                                  {F::Sigmoid},
                                                  {F::Tanh},
                                                  {F::HardSigmoid, 0.2f, 0.5f},
                                                  {F::HardSwish},
                                                  {F::GELU},
                                                  {F::GELU, 1.0f},
                                                  {F::SiLU},
                                                  {F::Softplus},
                                                  {F::Mish},
                                                  {F::Softsign},
                                                  {F::SELU, 1.67f, 1.05f},
                                                  {F::CELU, 0.7f},
                                                  {F::ThresholdedReLU, 1.0f},
                                                  {F::Shrink, 0.5f, 0.25f}};
}  // namespace

TEMPLATE_LIST_TEST_CASE("Activation matches RefBackend on every vector tail", "[ops][activation]",
                        accelerated_backends) {
  for (std::uint32_t n : {1u, 3u, 4u, 5u, 7u, 8u, 9u, 15u, 16u, 17u, 33u, 40000u})
    for (const auto& p : every_function) {
      INFO("function " << static_cast<int>(p.function) << ", " << n << " elements");
      check_against_ref<ops::Activation, TestType>(p, {random_f32({n}, n, -6.0f, 6.0f)}, 4e-6, 1e-6);
    }
}

TEMPLATE_LIST_TEST_CASE("Activation in int8: Dequantize, the function, Quantize (hand-computed)",
                        "[ops][activation][int8]", tested_backends) {
  // u8 at scale 0.5, zero point 128: bytes 120, 126, 128, 130, 140 are -4, -1, 0, 1, 6.
  const auto x = TestTensor::q8({5}, DataType::QAsymmU8, {{0.5f}, 128, {}}, {120, 126, 128, 130, 140});
  // ReLU6 at scale 0.05, zero point 0: 0, 0, 0, 1, 6 -> 0, 0, 0, 20, 120.
  const QuantizationInfo relu_out{{0.05f}, 0, {}};
  check_op<ops::Activation, TestType>(ops::Activation::relu6(), {x},
                                      {TestTensor::q8({5}, DataType::QAsymmU8, relu_out, {0, 0, 0, 20, 120})});
  // Sigmoid at scale 1/256: 0.017986, 0.268941, 0.5, 0.731059, 0.997527 times 256 = 4.60, 68.85,
  // 128, 187.15, 255.37 -> 5, 69, 128, 187, 255.
  const QuantizationInfo sigmoid_out{{1.0f / 256}, 0, {}};
  check_op<ops::Activation, TestType>({F::Sigmoid}, {x},
                                      {TestTensor::q8({5}, DataType::QAsymmU8, sigmoid_out, {5, 69, 128, 187, 255})});
  // s8 at scale 0.5, zero point 0: -8, -2, 0, 2, 12 are again -4, -1, 0, 1, 6. HardSwish: 0, -1/3,
  // 0, 2/3, 6; at scale 0.05, zero point -100: 0, -6.67 -> -7, 0, 13.33 -> 13, 120 -> -100, -107,
  // -100, -87, 20.
  const auto s = TestTensor::q8({5}, DataType::QAsymmS8, {{0.5f}, 0, {}}, {-8, -2, 0, 2, 12});
  const QuantizationInfo swish_out{{0.05f}, -100, {}};
  check_op<ops::Activation, TestType>(
      {F::HardSwish}, {s}, {TestTensor::q8({5}, DataType::QAsymmS8, swish_out, {-100, -107, -100, -87, 20})});
}

TEST_CASE("Activation in int8 refuses an output of another type, saying so", "[ops][activation][int8]") {
  const auto x = TestTensor::q8({2}, DataType::QAsymmU8, {{0.5f}, 128, {}}, {120, 130});
  auto mixed = run_op<ops::Activation>({ops::ActivationFunction::Sigmoid}, {x}, 0, nullptr,
                                       {{DataType::QAsymmS8, {{0.01f}, 0, {}}}});
  REQUIRE_FALSE(mixed);
  CHECK_THAT(mixed.status().message(), Catch::Contains("declared QAsymmS8 but Activation produces QAsymmU8"));
}

TEMPLATE_LIST_TEST_CASE("Activation in int8 is bit-exact with RefBackend for every function", "[ops][activation][int8]",
                        accelerated_backends) {
  std::uint32_t seed = 4100;
  for (DataType type : {DataType::QAsymmU8, DataType::QAsymmS8})
    for (std::uint32_t n : {1u, 17u, 40000u})  // the last is split over threads
      for (const auto& p : every_function) {
        INFO(to_string(type) << " function " << static_cast<int>(p.function) << ", " << n << " elements");
        const bool u8 = type == DataType::QAsymmU8;
        const auto x = random_q8({n}, type, {{0.047f}, u8 ? 140 : 12, {}}, ++seed);
        const std::vector<ops::OutputType> y{{type, {{0.023f}, u8 ? 60 : -70, {}}}};
        check_against_ref<ops::Activation, TestType>(p, {x}, 0, 0, y);
      }
}
