// SPDX-License-Identifier: Apache-2.0
// DepthwiseConvolution2d: a hand-computed case, PyTorch fixtures (multiplier, stride, dilation), errors.
#include <limits>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("DepthwiseConvolution2d: hand-computed channel multiplier 2", "[ops][depthwise_convolution2d]") {
  // Two channels [1 2; 3 4] and [10 20; 30 40]; 2x2 kernels per output channel c*2+m:
  // oc0 = sum(ch0) = 10, oc1 = ch0[0][0] = 1, oc2 = -sum(ch1) = -100, oc3 = ch1[1][1] = 40.
  auto x = TestTensor::f32({1, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  auto w = TestTensor::f32({1, 2, 2, 4}, {1, 1, -1, 0, 1, 0, -1, 0, 1, 0, -1, 0, 1, 0, -1, 1}).as_constant();
  check_op<ops::DepthwiseConvolution2d>({}, {x, w}, {TestTensor::f32({1, 1, 1, 4}, {10, 1, -100, 40})});
}

TEST_CASE("DepthwiseConvolution2d of Signed32 (ONNX ConvInteger with groups): hand-computed",
          "[ops][depthwise_convolution2d]") {
  // The Float32 case above in integers, and (2^31 - 1) x 2 wrapping to -2.
  auto x = TestTensor::i32({1, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  auto w = TestTensor::i32({1, 2, 2, 4}, {1, 1, -1, 0, 1, 0, -1, 0, 1, 0, -1, 0, 1, 0, -1, 1}).as_constant();
  check_op<ops::DepthwiseConvolution2d>({}, {x, w}, {TestTensor::i32({1, 1, 1, 4}, {10, 1, -100, 40})});
  check_op<ops::DepthwiseConvolution2d>(
      {}, {TestTensor::i32({1, 1, 1, 1}, {2147483647}), TestTensor::i32({1, 1, 1, 1}, {2})},
      {TestTensor::i32({1, 1, 1, 1}, {-2})});
}

TEMPLATE_LIST_TEST_CASE("DepthwiseConvolution2d matches PyTorch grouped conv2d", "[ops][depthwise_convolution2d]",
                        tested_backends) {
  for (const auto& c : load_fixtures("depthwise_convolution2d")) {
    SECTION(c.name) {
      ops::DepthwiseConvolution2d::Params p;
      p.stride = c.size2d("stride");
      p.dilation = c.size2d("dilation");
      p.padding = c.padding("padding");
      check_op<ops::DepthwiseConvolution2d, TestType>(
          p, {c.tensor("input"), c.tensor("weights").as_constant(), c.tensor("bias").as_constant()},
          {c.tensor("output")}, 1e-5, 1e-5);
    }
  }
}

TEST_CASE("DepthwiseConvolution2d rejects weights that do not match the channels",
          "[ops][depthwise_convolution2d][errors]") {
  auto x = TestTensor::f32({1, 4, 4, 3}, std::vector<float>(48, 1.0f));
  auto w = TestTensor::f32({1, 3, 3, 4}, std::vector<float>(36, 1.0f)).as_constant();
  auto result = run_op<ops::DepthwiseConvolution2d>({}, {x, w});
  REQUIRE_FALSE(result);
  CHECK_THAT(result.status().message(), Catch::Contains("not a multiple of the 3 input channels"));
  auto w2 = TestTensor::f32({2, 3, 3, 3}, std::vector<float>(54, 1.0f)).as_constant();
  CHECK_FALSE(run_op<ops::DepthwiseConvolution2d>({}, {x, w2}));
}

TEMPLATE_LIST_TEST_CASE("DepthwiseConvolution2d matches RefBackend on odd shapes, strides, paddings, dilations",
                        "[ops][depthwise_convolution2d]", accelerated_backends) {
  struct Case {
    TensorShape input;
    std::uint32_t kh, kw;
    ops::DepthwiseConvolution2d::Params params;
  };
  const Case cases[] = {
      {{1, 7, 9, 3}, 3, 3, {.padding = {1, 1, 1, 1}}},
      {{2, 8, 8, 17}, 3, 3, {.padding = {1, 1, 1, 1}, .stride = {2, 2}}},
      {{1, 9, 10, 33}, 5, 5, {.padding = {2, 2, 2, 2}}},
      {{1, 11, 11, 16}, 5, 5, {.padding = {1, 2, 2, 1}, .stride = {2, 2}}},
      {{1, 12, 12, 5}, 3, 3, {.padding = {2, 2, 2, 2}, .dilation = {2, 2}}},
      {{1, 6, 7, 31}, 2, 3, {.padding = {0, 1, 1, 0}, .stride = {1, 2}, .activation = ops::Activation::relu6()}},
      // Channel tails with an activation applied after the row: the last vector overlaps the one before.
      {{1, 7, 9, 40},
       3,
       3,
       {.padding = {1, 1, 1, 1}, .activation = ops::Activation::Params{ops::ActivationFunction::HardSwish}}},
      {{1, 6, 6, 21},
       5,
       5,
       {.padding = {2, 2, 2, 2},
        .stride = {2, 2},
        .activation = ops::Activation::Params{ops::ActivationFunction::SiLU}}},
      {{1, 5, 5, 144},
       3,
       3,
       {.padding = {1, 1, 1, 1}, .activation = ops::Activation::Params{ops::ActivationFunction::ELU, 1.0f}}},
      // Rows walked in groups of four pixels and the ones left, with and without edges.
      {{1, 5, 23, 16}, 3, 3, {}},
      {{1, 3, 3, 16}, 5, 5, {.padding = {2, 2, 2, 2}}},  // every window crosses an edge
      {{1, 9, 27, 20}, 5, 5, {.padding = {2, 1, 1, 2}, .stride = {2, 2}}},
      {{2, 6, 30, 48}, 3, 3, {.padding = {1, 1, 1, 1}, .stride = {2, 2}, .activation = ops::Activation::relu6()}},
      // Few output rows: the channels split into slices of whole vectors as well, the last with the
      // tail vector and each with its part of the activation.
      {{1, 7, 7, 70}, 3, 3, {.padding = {1, 1, 1, 1}, .activation = ops::Activation::relu6()}},
      {{2, 3, 4, 37},
       5,
       5,
       {.padding = {2, 2, 2, 2}, .activation = ops::Activation::Params{ops::ActivationFunction::SiLU}}},
  };
  for (const Case& c : cases) {
    INFO("input " << c.input.to_string() << ", kernel " << c.kh << "x" << c.kw);
    auto x = random_f32(c.input, c.kh, -2, 2);
    auto w = random_f32({1, c.kh, c.kw, c.input[3]}, c.kw).as_constant();
    auto b = random_f32({c.input[3]}, 5).as_constant();
    check_against_ref<ops::DepthwiseConvolution2d, TestType>(c.params, {x, w, b}, 1e-5, 1e-5);
    check_against_ref<ops::DepthwiseConvolution2d, TestType>(c.params, {x, w}, 1e-5, 1e-5);
  }
}

TEMPLATE_LIST_TEST_CASE("DepthwiseConvolution2d in int8: per-channel scales, ties up, ReLU6 clamp (hand-computed)",
                        "[ops][depthwise_convolution2d][int8]", tested_backends) {
  // q - 128 = (2, -28) and (0, 127); w q = (3, -4) at scales (1, 0.5); bias q (1, 0); output scale 1:
  // M = (0.5, 0.25). Channel 0: 7 x 0.5 = 3.5 -> 4, 1 x 0.5 -> 1 (ties up). Channel 1: 112 x 0.25 = 28,
  // clamped by ReLU6 to 6; -508 x 0.25 = -127, clamped to 0.
  const auto x = TestTensor::q8({1, 1, 2, 2}, DataType::QAsymmU8, {{0.5f}, 128, {}}, {130, 100, 128, 255});
  const auto w = TestTensor::q8({1, 1, 1, 2}, DataType::QSymmS8, {{1.0f, 0.5f}, 0, 3u}, {3, -4}).as_constant();
  auto bias = TestTensor::i32({2}, {1, 0}).as_constant();
  bias.info.quantization = {{0.5f, 0.25f}, 0, 0u};
  check_op<ops::DepthwiseConvolution2d, TestType>(
      {.activation = ops::Activation::relu6()}, {x, w, bias},
      {TestTensor::q8({1, 1, 2, 2}, DataType::QAsymmU8, {{1.0f}, 0, {}}, {4, 6, 1, 0})});
}

TEMPLATE_LIST_TEST_CASE("DepthwiseConvolution2d in int8 is bit-exact with RefBackend",
                        "[ops][depthwise_convolution2d][int8]", accelerated_backends) {
  struct Case {
    TensorShape input;
    std::uint32_t kh, kw;
    ops::DepthwiseConvolution2d::Params params;
    DataType type;
    std::int32_t x_zero, y_zero;
    bool per_channel;
  };
  const Case cases[] = {
      {{1, 7, 9, 16}, 3, 3, {.padding = {1, 1, 1, 1}}, DataType::QAsymmU8, 128, 120, true},
      {{2, 6, 5, 37}, 3, 3, {.padding = {1, 1, 1, 1}, .stride = {2, 2}}, DataType::QAsymmS8, -3, 5, true},
      {{1, 9, 8, 3},
       5,
       5,
       {.padding = {2, 2, 2, 2}, .activation = ops::Activation::relu6()},
       DataType::QAsymmU8,
       0,
       0,
       false},
      {{1, 8, 8, 21}, 3, 3, {.padding = {2, 0, 1, 2}, .dilation = {2, 2}}, DataType::QAsymmS8, 127, -128, true},
      {{1, 5, 6, 70},
       2,
       3,
       {.stride = {1, 2}, .activation = ops::Activation::Params{}},
       DataType::QAsymmU8,
       255,
       255,
       true},
      {{1, 4, 4, 33}, 3, 3, {.padding = {1, 1, 1, 1}}, DataType::QAsymmS8, -128, 127, false},
      // Wide rows and blocks of 64 channels and a part (AVX512-VNNI's four taps at a time; 100
      // channels have too many phases for byte blocks at stride 1).
      {{1, 6, 11, 100}, 3, 3, {.padding = {1, 1, 1, 1}}, DataType::QAsymmS8, -128, 17, true},
      {{1, 10, 9, 65}, 3, 3, {.padding = {0, 1, 0, 1}, .stride = {2, 2}}, DataType::QAsymmU8, 3, 250, true},
      {{1, 7, 10, 64},
       5,
       5,
       {.padding = {1, 2, 2, 1}, .activation = ops::Activation::Params{}},
       DataType::QAsymmS8,
       40,
       -100,
       true},
      // Few channels at stride 1: 64 / C whole pixels a block (VNNI), the last block part full.
      {{1, 6, 13, 32}, 3, 3, {.padding = {1, 1, 1, 1}}, DataType::QAsymmU8, 0, 0, true},
      {{1, 7, 12, 16},
       5,
       5,
       {.padding = {2, 2, 2, 2}, .activation = ops::Activation::relu6()},
       DataType::QAsymmS8,
       -7,
       3,
       true},
      {{1, 5, 17, 8}, 3, 3, {.padding = {0, 1, 1, 0}}, DataType::QAsymmS8, 11, 0, false},
      {{1, 5, 10, 24}, 3, 3, {.padding = {1, 1, 1, 1}}, DataType::QAsymmU8, 200, 30, true},
      {{1, 4, 9, 144}, 3, 3, {.padding = {1, 1, 1, 1}}, DataType::QAsymmS8, 5, 5, true},  // 9 phases
      {{1, 9, 13, 130},
       5,
       5,
       {.padding = {2, 2, 2, 2}, .stride = {2, 2}, .activation = ops::Activation::relu6()},
       DataType::QAsymmU8,
       255,
       0,
       true},
  };
  std::uint32_t seed = 100;
  for (const Case& c : cases) {
    INFO("input " << c.input.to_string() << " " << to_string(c.type) << ", " << c.kh << "x" << c.kw);
    const std::uint32_t channels = c.input[3];
    std::vector<float> weight_scales{0.004f};
    if (c.per_channel) {
      weight_scales.clear();
      for (std::uint32_t j = 0; j < channels; ++j) weight_scales.push_back(0.002f * static_cast<float>(1 + j % 5));
    }
    const auto x = random_q8(c.input, c.type, {{0.02f}, c.x_zero, {}}, ++seed);
    const auto w = random_q8({1, c.kh, c.kw, channels}, DataType::QSymmS8,
                             {weight_scales, 0, c.per_channel ? std::optional<std::uint32_t>(3) : std::nullopt}, ++seed)
                       .as_constant();
    std::vector<std::int32_t> bias(channels);
    for (std::uint32_t j = 0; j < channels; ++j) bias[j] = static_cast<std::int32_t>(j * 7919 % 20001) - 10000;
    const auto b = TestTensor::i32({channels}, bias).as_constant();
    const double window = static_cast<double>(c.kh) * c.kw;
    const auto y_scale = static_cast<float>(0.02 * 0.006 * 74 * 74 * std::sqrt(window) / 50);
    const std::vector<ops::OutputType> y_type{{c.type, {{y_scale}, c.y_zero, {}}}};
    check_against_ref<ops::DepthwiseConvolution2d, TestType>(c.params, {x, w, b}, 0, 0, y_type);
    check_against_ref<ops::DepthwiseConvolution2d, TestType>(c.params, {x, w}, 0, 0, y_type);
  }
}

// NeonBackend's int8 depthwise takes channel multiplier 1 and constant weights only (it widens them
// at load); ClBackend reads any multiplier, and weights and a bias of any value fed at run time.
#if KILN_TEST_CL
TEST_CASE(
    "DepthwiseConvolution2d in int8 with channel multiplier 2, weights fed at run time, is bit-exact with "
    "RefBackend on ClBackend",
    "[ops][depthwise_convolution2d][int8]") {
  for (const DataType type : {DataType::QAsymmU8, DataType::QAsymmS8}) {
    INFO(to_string(type));
    const std::int32_t x_zero = type == DataType::QAsymmU8 ? 131 : -7;
    const auto x = random_q8({2, 6, 7, 5}, type, {{0.03f}, x_zero, {}}, 7);
    std::vector<float> scales;
    for (std::uint32_t j = 0; j < 10; ++j) scales.push_back(0.003f * static_cast<float>(1 + j % 4));
    const auto w = random_q8({1, 3, 3, 10}, DataType::QSymmS8, {scales, 0, 3u}, 8);
    std::vector<std::int32_t> bias(10);
    for (std::uint32_t j = 0; j < 10; ++j) bias[j] = static_cast<std::int32_t>(j * 7919 % 4001) - 2000;
    // A bias fed at run time is not checked at load: these saturate the accumulator.
    bias[3] = std::numeric_limits<std::int32_t>::max();
    bias[4] = std::numeric_limits<std::int32_t>::min();
    const std::vector<ops::OutputType> y_type{{type, {{0.05f}, type == DataType::QAsymmU8 ? 100 : 3, {}}}};
    const ops::DepthwiseConvolution2d::Params p{
        .padding = {1, 0, 2, 1}, .stride = {2, 1}, .activation = ops::Activation::relu6()};
    check_against_ref<ops::DepthwiseConvolution2d, ClBackend>(p, {x, w, TestTensor::i32({10}, bias)}, 0, 0, y_type);
    check_against_ref<ops::DepthwiseConvolution2d, ClBackend>(p, {x, w.as_constant()}, 0, 0, y_type);
  }
}
#endif
