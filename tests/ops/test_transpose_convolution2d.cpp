// SPDX-License-Identifier: Apache-2.0
// TransposeConvolution2d: a hand-computed case, PyTorch conv_transpose2d fixtures, errors.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("TransposeConvolution2d: hand-computed stride 2 scatter", "[ops][transpose_convolution2d]") {
  // Input [1 2] (1x2), kernel 1x2 of [1 10], stride 2: out = [1 10 2 20].
  auto x = TestTensor::f32({1, 1, 2, 1}, {1, 2});
  auto w = TestTensor::f32({1, 1, 2, 1}, {1, 10}).as_constant();
  check_op<ops::TransposeConvolution2d>({.stride = {1, 2}}, {x, w}, {TestTensor::f32({1, 1, 4, 1}, {1, 10, 2, 20})});
  // Overlapping taps add up with stride 1: [1, 10 + 2, 20].
  check_op<ops::TransposeConvolution2d>({}, {x, w}, {TestTensor::f32({1, 1, 3, 1}, {1, 12, 20})});
}

TEMPLATE_LIST_TEST_CASE("TransposeConvolution2d matches PyTorch conv_transpose2d", "[ops][transpose_convolution2d]",
                        tested_backends) {
  for (const auto& c : load_fixtures("transpose_convolution2d")) {
    SECTION(c.name) {
      ops::TransposeConvolution2d::Params p;
      p.stride = c.size2d("stride");
      p.padding = c.padding("padding");
      p.output_padding = c.size2d("output_padding");
      std::vector<TestTensor> inputs = {c.tensor("input"), c.tensor("weights").as_constant()};
      if (c.has("bias")) inputs.push_back(c.tensor("bias").as_constant());
      check_op<ops::TransposeConvolution2d, TestType>(p, inputs, {c.tensor("output")}, 1e-5, 1e-5);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("TransposeConvolution2d matches RefBackend on odd shapes, strides and paddings",
                        "[ops][transpose_convolution2d]", accelerated_backends) {
  struct Case {
    TensorShape input;
    std::uint32_t out_channels, kh, kw;
    ops::TransposeConvolution2d::Params params;
  };
  const Case cases[] = {
      {{2, 4, 3, 17}, 9, 2, 2, {.stride = {2, 2}}},  // U-Net's upsampling: taps never overlap; batch 2
      {{1, 5, 7, 3}, 4, 3, 3, {.padding = {1, 1, 1, 1}, .stride = {2, 2}, .output_padding = {1, 1}}},  // overlapping
      {{1, 3, 4, 8}, 33, 4, 4, {.padding = {1, 2, 1, 0}, .stride = {2, 2}}},  // asymmetric padding, 33 outputs
      {{1, 6, 5, 2}, 5, 3, 1, {.stride = {1, 3}, .output_padding = {0, 2}}},  // a column kernel, gaps between taps
      {{1, 40, 9, 3}, 16, 5, 5, {.padding = {2, 2, 2, 2}}},  // stride 1: several bands, rows fed by two of them
      {{1, 7, 6, 5}, 3, 1, 1, {}},                           // 1x1: a plain GEMM
  };
  for (const Case& c : cases) {
    INFO("input " << c.input.to_string() << ", " << c.out_channels << " outputs, kernel " << c.kh << "x" << c.kw);
    auto x = random_f32(c.input, c.out_channels, -2, 2);
    auto w = random_f32({c.out_channels, c.kh, c.kw, c.input[3]}, c.kh).as_constant();
    auto b = random_f32({c.out_channels}, c.kw).as_constant();
    check_against_ref<ops::TransposeConvolution2d, TestType>(c.params, {x, w, b}, 1e-5, 1e-5);
    check_against_ref<ops::TransposeConvolution2d, TestType>(c.params, {x, w}, 1e-5, 1e-5);
  }
}

TEST_CASE("TransposeConvolution2d rejects impossible configurations", "[ops][transpose_convolution2d][errors]") {
  auto x = TestTensor::f32({1, 2, 2, 1}, {1, 2, 3, 4});
  auto w = TestTensor::f32({1, 2, 2, 1}, {1, 1, 1, 1}).as_constant();
  auto r1 = run_op<ops::TransposeConvolution2d>({.padding = {2, 2, 0, 0}}, {x, w});
  REQUIRE_FALSE(r1);
  CHECK_THAT(r1.status().message(), Catch::Contains("crops away the whole output"));
  auto r2 = run_op<ops::TransposeConvolution2d>({.stride = {2, 2}, .output_padding = {2, 0}}, {x, w});
  REQUIRE_FALSE(r2);
  CHECK_THAT(r2.status().message(), Catch::Contains("output padding must be smaller than the stride"));
}

TEST_CASE("TransposeConvolution2d in int8: weights and bias (hand-computed)", "[ops][transpose_convolution2d][int8]") {
  // x = {3, -1} at scale 0.5, zero point 1 (1 and -1); weights {2, -1} at 0.25 (0.5 and -0.25),
  // stride 2 along the width, so each input places its own two products: (x - 1) w = 4, -2, -4, 2,
  // plus the bias 3 (at 0.5 x 0.25), times 0.125 / 0.25: 3.5, 0.5, -0.5, 2.5, ties up: 4, 1, 0, 3
  // (a multiplier of 0.5 rounds once in either arithmetic). Only RefBackend has an int8 transposed
  // convolution (NeonBackend inherits it; ClBackend's networks fall back to it).
  const auto x = TestTensor::q8({1, 1, 2, 1}, DataType::QAsymmS8, {{0.5f}, 1, {}}, {3, -1});
  const auto w = TestTensor::q8({1, 1, 2, 1}, DataType::QSymmS8, {{0.25f}, 0, {}}, {2, -1}).as_constant();
  const auto bias = TestTensor::i32({1}, {3}).as_constant();
  const std::vector<ops::OutputType> y{{DataType::QAsymmS8, {{0.25f}, 0, {}}}};
  for (QuantizedArithmetic arithmetic : {QuantizedArithmetic::Kiln, QuantizedArithmetic::TfLite}) {
    auto out = run_op<ops::TransposeConvolution2d>({.stride = {1, 2}}, {x, w, bias}, 0, nullptr, y, arithmetic);
    REQUIRE(out);
    CHECK(out->front().integers() == std::vector<std::int32_t>{4, 1, 0, 3});
  }
}
