// SPDX-License-Identifier: Apache-2.0
// Convolution2d: hand-computed cases, PyTorch fixtures (stride, dilation, padding, groups), errors.
#include "support/fixtures.hpp"
#if KILN_WITH_NEON && !KILN_NEON_DISPATCH
#include "kiln/backends/neon/simd/winograd.hpp"
#endif

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Convolution2d: hand-computed 3x3 input, 2x2 kernel, bias", "[ops][convolution2d]") {
  // input (1 channel):  1 2 3 / 4 5 6 / 7 8 9; kernel 1 0 / 0 -1; bias 10.
  // out[y][x] = in[y][x] - in[y+1][x+1] + 10 = -4 + 10 everywhere.
  auto x = TestTensor::f32({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto w = TestTensor::f32({1, 2, 2, 1}, {1, 0, 0, -1}).as_constant();
  auto b = TestTensor::f32({1}, {10}).as_constant();
  check_op<ops::Convolution2d>({}, {x, w, b}, {TestTensor::f32({1, 2, 2, 1}, {6, 6, 6, 6})});
}

TEST_CASE("Convolution2d: hand-computed padding and stride 2", "[ops][convolution2d]") {
  // 1x1 kernel of weight 2 on a zero-padded 2x2 input with stride 2 picks padded positions (0,0), (0,2), (2,0), (2,2).
  auto x = TestTensor::f32({1, 2, 2, 1}, {1, 2, 3, 4});
  auto w = TestTensor::f32({1, 1, 1, 1}, {2});
  check_op<ops::Convolution2d>({.padding = {1, 1, 1, 1}, .stride = {2, 2}}, {x, w},
                               {TestTensor::f32({1, 2, 2, 1}, {0, 0, 0, 8})});
}

TEST_CASE("Convolution2d of Signed32 (ONNX ConvInteger): hand-computed, sums wrapping as int32 does",
          "[ops][convolution2d]") {
  auto x = TestTensor::i32({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto w = TestTensor::i32({1, 2, 2, 1}, {1, 0, 0, -1}).as_constant();
  auto b = TestTensor::i32({1}, {10}).as_constant();
  check_op<ops::Convolution2d>({}, {x, w, b}, {TestTensor::i32({1, 2, 2, 1}, {6, 6, 6, 6})});
  // Padding adds nothing: the corners of a padded 1x1 kernel of 2 with stride 2, as in Float32.
  check_op<ops::Convolution2d>({.padding = {1, 1, 1, 1}, .stride = {2, 2}},
                               {TestTensor::i32({1, 2, 2, 1}, {1, 2, 3, 4}), TestTensor::i32({1, 1, 1, 1}, {2})},
                               {TestTensor::i32({1, 2, 2, 1}, {0, 0, 0, 8})});
  // 2 x (2^31 - 1) + 3 = 2^32 + 1, which wraps to 1.
  check_op<ops::Convolution2d>(
      {}, {TestTensor::i32({1, 1, 1, 1}, {2147483647}), TestTensor::i32({1, 1, 1, 1}, {2}), TestTensor::i32({1}, {3})},
      {TestTensor::i32({1, 1, 1, 1}, {1})});
  ops::Convolution2d::Params with_relu6;
  with_relu6.activation = ops::Activation::relu6();
  auto refused = run_op<ops::Convolution2d>(with_relu6, {x, w});
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.status().message(), Catch::Contains("applies no activation to Signed32"));
}

TEMPLATE_LIST_TEST_CASE("Convolution2d matches PyTorch conv2d", "[ops][convolution2d]", tested_backends) {
  for (const auto& c : load_fixtures("convolution2d")) {
    SECTION(c.name) {
      ops::Convolution2d::Params p;
      p.stride = c.size2d("stride");
      p.dilation = c.size2d("dilation");
      p.padding = c.padding("padding");
      p.groups = c.u32("groups");
      std::vector<TestTensor> inputs = {c.tensor("input"), c.tensor("weights").as_constant()};
      if (c.has("bias")) inputs.push_back(c.tensor("bias").as_constant());
      check_op<ops::Convolution2d, TestType>(p, inputs, {c.tensor("output")}, 1e-5, 1e-5);
    }
  }
}

TEST_CASE("Convolution2d weights may be a network input, not only a constant", "[ops][convolution2d]") {
  const auto c = load_fixtures("convolution2d").front();
  ops::Convolution2d::Params p;
  p.padding = {1, 1, 1, 1};
  check_op<ops::Convolution2d>(p, {c.tensor("input"), c.tensor("weights"), c.tensor("bias")}, {c.tensor("output")},
                               1e-5, 1e-5);
}

TEST_CASE("Convolution2d rejects bad descriptors and shapes with a clear message", "[ops][convolution2d][errors]") {
  auto x = TestTensor::f32({1, 4, 4, 4}, std::vector<float>(64, 1.0f));
  auto w = TestTensor::f32({2, 3, 3, 4}, std::vector<float>(72, 1.0f)).as_constant();
  auto message = [&](ops::Convolution2d::Params p, std::vector<TestTensor> inputs) {
    auto result = run_op<ops::Convolution2d>(p, inputs);
    REQUIRE_FALSE(result);
    return result.status().message();
  };
  CHECK_THAT(message({.stride = {0, 1}}, {x, w}), Catch::Contains("stride height is zero") && Catch::Contains("'op'"));
  CHECK_THAT(message({.dilation = {3, 3}}, {x, w}), Catch::Contains("larger than the padded input"));
  CHECK_THAT(message({.groups = 3}, {x, w}), Catch::Contains("groups 3 must divide"));
  CHECK_THAT(message({.groups = 2}, {x, w}), Catch::Contains("expect 8 input channels"));
  auto bad_bias = TestTensor::f32({3}, {1, 2, 3}).as_constant();
  CHECK_THAT(message({}, {x, w, bad_bias}), Catch::Contains("bias has 3 elements"));
  CHECK_THAT(message({}, {x}), Catch::Contains("has 1 inputs; it takes 2 to 3"));
}

TEMPLATE_LIST_TEST_CASE("Convolution2d matches RefBackend on odd shapes, strides, paddings, dilations, groups",
                        "[ops][convolution2d]", accelerated_backends) {
  struct Case {
    TensorShape input;
    std::uint32_t out_channels, kh, kw;
    ops::Convolution2d::Params params;
  };
  const Case cases[] = {
      {{1, 7, 9, 3}, 17, 3, 3, {.padding = {1, 1, 1, 1}}},
      {{2, 8, 8, 16}, 33, 1, 1, {}},                                            // pointwise: A read directly
      {{1, 5, 6, 17}, 7, 1, 1, {.stride = {2, 2}}},                             // strided 1x1
      {{1, 11, 10, 5}, 16, 3, 3, {.padding = {0, 2, 1, 0}, .stride = {2, 2}}},  // asymmetric padding
      {{1, 12, 12, 4}, 9, 3, 3, {.padding = {2, 2, 2, 2}, .dilation = {2, 2}}},
      {{1, 9, 9, 8}, 12, 3, 3, {.padding = {1, 1, 1, 1}, .groups = 4}},
      // Groups of 16 channels (RegNet's): every group's tiles in one task space.
      {{1, 9, 7, 48}, 48, 3, 3, {.padding = {1, 1, 1, 1}, .groups = 3}},
      {{2, 11, 9, 80}, 80, 3, 3, {.padding = {1, 1, 1, 1}, .stride = {2, 2}, .groups = 5}},
      {{1, 5, 6, 40}, 20, 1, 1, {.groups = 2, .activation = ops::Activation::relu6()}},  // grouped pointwise
      {{1, 13, 13, 3}, 32, 5, 5, {.padding = {2, 2, 2, 2}, .stride = {2, 2}}},
      {{1, 6, 6, 33}, 65, 3, 3, {.padding = {1, 1, 1, 1}, .activation = ops::Activation::relu6()}},
      {{1, 4, 4, 6},
       6,
       2,
       3,
       {.stride = {1, 2}, .activation = ops::Activation::Params{ops::ActivationFunction::HardSwish}}},
      // Few channels: one tap per kernel row, border windows assembled per inference.
      {{1, 30, 31, 3}, 32, 3, 3, {.padding = {1, 1, 1, 1}, .stride = {2, 2}}},   // a first layer, odd width
      {{2, 6, 2, 3}, 9, 3, 3, {.padding = {1, 1, 1, 1}}},                        // every window straddles; batch 2
      {{1, 9, 10, 1}, 8, 3, 3, {.padding = {1, 2, 1, 2}, .stride = {1, 2}}},     // rows of 3 values: gathered
      {{1, 10, 11, 2}, 5, 3, 3, {.padding = {2, 2, 1, 1}, .dilation = {2, 1}}},  // dilated vertically only
  };
  for (const Case& c : cases) {
    INFO("input " << c.input.to_string() << ", " << c.out_channels << " outputs, kernel " << c.kh << "x" << c.kw);
    const std::uint32_t group_in = c.input[3] / c.params.groups;
    auto x = random_f32(c.input, c.out_channels, -2, 2);
    auto w = random_f32({c.out_channels, c.kh, c.kw, group_in}, c.kh).as_constant();
    auto b = random_f32({c.out_channels}, c.kw).as_constant();
    check_against_ref<ops::Convolution2d, TestType>(c.params, {x, w, b}, 1e-5, 1e-5);
    check_against_ref<ops::Convolution2d, TestType>(c.params, {x, w}, 1e-5, 1e-5);
  }
}

TEMPLATE_LIST_TEST_CASE("Convolution2d 3x3 stride 1 with many channels (Winograd on Neon) matches RefBackend",
                        "[ops][convolution2d]", accelerated_backends) {
  struct Case {
    TensorShape input;
    std::uint32_t out_channels;
    ops::Convolution2d::Params params;
  };
  const Case cases[] = {
      {{1, 7, 9, 16}, 16, {.padding = {1, 1, 1, 1}}},  // odd sizes: half tiles
      {{2, 6, 5, 17}, 19, {}},                         // no padding, batch 2, tails
      {{1, 8, 11, 33}, 40, {.padding = {0, 2, 1, 0}, .activation = ops::Activation::relu6()}},
      {{1, 30, 30, 16}, 24, {.padding = {1, 1, 1, 1}}},  // several blocks of tiles
      {{1, 5, 5, 256},
       37,
       {.padding = {1, 1, 1, 1}, .activation = ops::Activation::Params{ops::ActivationFunction::HardSwish}}},
  };
  for (const Case& c : cases) {
    INFO("input " << c.input.to_string() << ", " << c.out_channels << " outputs");
    auto x = random_f32(c.input, c.out_channels, -2, 2);
    auto w = random_f32({c.out_channels, 3, 3, c.input[3]}, 3).as_constant();
    auto b = random_f32({c.out_channels}, 5).as_constant();
    // The transforms round differently from a direct sum: allow 1e-7 of the largest possible sum
    // of |x w| over a window (9 x channels x 2 x 1), under two units in its last place.
    check_against_ref<ops::Convolution2d, TestType>(c.params, {x, w, b}, 1e-5, 1e-7 * 9 * c.input[3] * 2);
  }
}

// The choice is made in this translation unit's instruction set only where the kernels are compiled
// into it (not in the dispatching build).
#if KILN_WITH_NEON && !KILN_NEON_DISPATCH
TEST_CASE("NeonBackend takes Winograd where its U fits in L2 or enough tiles share it", "[ops][convolution2d][neon]") {
  using neon::Winograd3x3;
  const ops::Convolution2d::Params same{.padding = {1, 1, 1, 1}};
  auto suits = [&](std::uint32_t side, std::uint32_t in, std::uint32_t out, const ops::Convolution2d::Params& p) {
    return Winograd3x3::suits({out, 3, 3, in}, p, {1, side, side, out});
  };
  // ResNet-18's 3x3 layers: U = 16 x in x out floats of 256 KiB, 1 MiB, 4 MiB, 16 MiB; 784, 196,
  // 49 and 16 tiles of 2x2 outputs.
  CHECK(suits(56, 64, 64, same));
  CHECK(suits(28, 128, 128, same));
  CHECK_FALSE(suits(14, 256, 256, same));
  CHECK_FALSE(suits(7, 512, 512, same));
  CHECK(suits(16, 256, 256, same));     // 64 tiles share a 4 MiB U
  CHECK(suits(13, 64, 256, same));      // SqueezeNet's last expand: 49 tiles, U of exactly 1 MiB
  CHECK_FALSE(suits(56, 8, 64, same));  // too few input channels for the transforms to pay
  CHECK_FALSE(suits(56, 64, 64, {.padding = {1, 1, 1, 1}, .stride = {2, 2}}));
}
#endif

namespace {
QuantizationInfo conv_quantization(std::vector<float> scales, std::int32_t zero_point,
                                   std::optional<std::uint32_t> axis = {}) {
  return {std::move(scales), zero_point, axis};
}
TestTensor int8_conv_bias(std::vector<std::int32_t> values, std::vector<float> scales) {
  auto bias = TestTensor::i32({static_cast<std::uint32_t>(values.size())}, values).as_constant();
  bias.info.quantization = conv_quantization(std::move(scales), 0, 0u);
  return bias;
}
}  // namespace

TEMPLATE_LIST_TEST_CASE("Convolution2d in int8: per-channel weights, bias, fused ReLU (hand-computed)",
                        "[ops][convolution2d][int8]", tested_backends) {
  // x = 0.5 (q - 10): 1, -1, 0, 10; w = [1, -1] as q 4 at 0.25 and -2 at 0.5; bias [1, -1].
  // Real outputs x + 1 and -x - 1, quantised at 0.25 with zero point 100.
  const auto x = TestTensor::q8({1, 2, 2, 1}, DataType::QAsymmU8, conv_quantization({0.5f}, 10), {12, 8, 10, 30});
  const auto w =
      TestTensor::q8({2, 1, 1, 1}, DataType::QSymmS8, conv_quantization({0.25f, 0.5f}, 0, 0u), {4, -2}).as_constant();
  const auto bias = int8_conv_bias({8, -4}, {0.125f, 0.25f});
  const auto y_q = conv_quantization({0.25f}, 100);
  check_op<ops::Convolution2d, TestType>(
      {}, {x, w, bias}, {TestTensor::q8({1, 2, 2, 2}, DataType::QAsymmU8, y_q, {108, 92, 100, 100, 104, 96, 144, 56})});
  // ReLU clamps at the zero point (real 0).
  check_op<ops::Convolution2d, TestType>(
      {.activation = ops::Activation::Params{}}, {x, w, bias},
      {TestTensor::q8({1, 2, 2, 2}, DataType::QAsymmU8, y_q, {108, 100, 100, 100, 104, 100, 144, 100})});
}

TEMPLATE_LIST_TEST_CASE("Convolution2d in int8 pads with the input's zero point", "[ops][convolution2d][int8]",
                        tested_backends) {
  // One pixel, q - zero point = 4, under a 3x3 kernel of ones with padding 1: only the centre tap
  // sees data; padding with 0 instead of the zero point would add 8 x (0 - 10).
  const auto x = TestTensor::q8({1, 1, 1, 1}, DataType::QAsymmU8, conv_quantization({1.0f}, 10), {14});
  const auto w =
      TestTensor::q8({1, 3, 3, 1}, DataType::QSymmS8, conv_quantization({1.0f}, 0), std::vector<std::int32_t>(9, 1))
          .as_constant();
  check_op<ops::Convolution2d, TestType>(
      {.padding = {1, 1, 1, 1}}, {x, w},
      {TestTensor::q8({1, 1, 1, 1}, DataType::QAsymmU8, conv_quantization({1.0f}, 0), {4})});
}

TEST_CASE("Convolution2d in int8 refuses what decision 0014 does not define, with reasons",
          "[ops][convolution2d][int8]") {
  const auto x = TestTensor::q8({1, 1, 1, 1}, DataType::QAsymmU8, conv_quantization({1.0f}, 10), {14});
  const auto asymmetric =
      TestTensor::q8({1, 1, 1, 1}, DataType::QAsymmU8, conv_quantization({1.0f}, 3), {7}).as_constant();
  auto refused = run_op<ops::Convolution2d>({}, {x, asymmetric});
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.status().message(), Catch::Contains("on QSymmS8 weights"));
  const auto w = TestTensor::q8({1, 1, 1, 1}, DataType::QSymmS8, conv_quantization({1.0f}, 0), {7}).as_constant();
  auto sigmoid =
      run_op<ops::Convolution2d>({.activation = ops::Activation::Params{ops::ActivationFunction::Sigmoid}}, {x, w});
  REQUIRE_FALSE(sigmoid);
  CHECK_THAT(sigmoid.status().message(), Catch::Contains("ReLU-family clamps only"));
  auto wrong_bias = run_op<ops::Convolution2d>({}, {x, w, int8_conv_bias({1}, {0.3f})});
  REQUIRE_FALSE(wrong_bias);
  CHECK_THAT(wrong_bias.status().message(), Catch::Contains("at input scale x weight scale"));
}

TEMPLATE_LIST_TEST_CASE("Convolution2d in int8 is bit-exact with RefBackend", "[ops][convolution2d][int8]",
                        accelerated_backends) {
  struct Case {
    TensorShape input;
    std::uint32_t out_channels, kh, kw;
    ops::Convolution2d::Params params;
    DataType type;
    std::int32_t x_zero, y_zero;
    bool per_channel;
  };
  const auto relu6 = ops::Activation::relu6();
  const Case cases[] = {
      {{1, 5, 7, 19}, 37, 1, 1, {}, DataType::QAsymmU8, 128, 120, true},  // pointwise: tails in K, N and M
      // Pointwise with K whole steps: unsigned rows read in place (AVX512-VNNI), signed ones packed.
      {{1, 6, 11, 24}, 40, 1, 1, {}, DataType::QAsymmU8, 3, 77, true},
      {{1, 5, 5, 16}, 10, 1, 1, {.groups = 2}, DataType::QAsymmU8, 250, 1, true},
      {{1, 7, 3, 16}, 17, 1, 1, {.activation = relu6}, DataType::QAsymmS8, 9, -20, true},
      {{1, 6, 5, 13}, 21, 3, 3, {.padding = {1, 1, 1, 1}}, DataType::QAsymmS8, -3, 5, true},
      {{2, 9, 8, 3},
       8,
       3,
       3,
       {.padding = {0, 1, 1, 0}, .stride = {2, 2}, .activation = relu6},
       DataType::QAsymmU8,
       0,
       0,
       false},  // an RGB first layer: three channels a tap
      {{1, 7, 7, 12},
       9,
       3,
       3,
       {.padding = {2, 2, 2, 2}, .dilation = {2, 2}, .groups = 3},
       DataType::QAsymmS8,
       127,
       -128,
       true},
      {{1, 4, 4, 8}, 6, 2, 2, {.stride = {1, 2}, .groups = 2}, DataType::QAsymmU8, 255, 255, false},
      {{1, 8, 9, 64},
       64,
       3,
       3,
       {.padding = {1, 1, 1, 1}, .activation = ops::Activation::Params{}},
       DataType::QAsymmU8,
       97,
       0,
       true},  // K = 576, the bench's conv-shaped GEMM
      {{1, 3, 3, 40}, 33, 3, 3, {.padding = {1, 1, 1, 1}}, DataType::QAsymmS8, -128, 127, true},
  };
  std::uint32_t seed = 1;
  for (const Case& c : cases) {
    INFO("input " << c.input.to_string() << " " << to_string(c.type) << ", " << c.out_channels << " outputs " << c.kh
                  << "x" << c.kw << ", groups " << c.params.groups);
    const std::uint32_t group_in = c.input[3] / c.params.groups;
    std::vector<float> weight_scales{0.004f};
    if (c.per_channel) {
      weight_scales.clear();
      for (std::uint32_t j = 0; j < c.out_channels; ++j)
        weight_scales.push_back(0.002f * static_cast<float>(1 + j % 5));
    }
    const auto x = random_q8(c.input, c.type, {{0.02f}, c.x_zero, {}}, ++seed);
    const auto w = random_q8({c.out_channels, c.kh, c.kw, group_in}, DataType::QSymmS8,
                             {weight_scales, 0, c.per_channel ? std::optional<std::uint32_t>(0) : std::nullopt}, ++seed)
                       .as_constant();
    std::vector<std::int32_t> bias(c.out_channels);
    for (std::uint32_t j = 0; j < c.out_channels; ++j) bias[j] = static_cast<std::int32_t>(j * 7919 % 100001) - 50000;
    const auto b = TestTensor::i32({c.out_channels}, bias).as_constant();
    // An output scale that spreads a window's sums over the 8-bit range, some saturating.
    const double window = static_cast<double>(c.kh) * c.kw * group_in;
    const auto y_scale = static_cast<float>(0.02 * 0.006 * 74 * 74 * std::sqrt(window) / 50);
    const std::vector<ops::OutputType> y_type{{c.type, {{y_scale}, c.y_zero, {}}}};
    check_against_ref<ops::Convolution2d, TestType>(c.params, {x, w, b}, 0, 0, y_type);
    check_against_ref<ops::Convolution2d, TestType>(c.params, {x, w}, 0, 0, y_type);
  }
}
