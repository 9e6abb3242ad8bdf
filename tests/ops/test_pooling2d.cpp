// SPDX-License-Identifier: Apache-2.0
// Pooling2d: hand-computed cases, PyTorch fixtures (padding, ceil mode, count_include_pad, global), errors.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Pooling2d: hand-computed max and average with padding", "[ops][pooling2d]") {
  auto x = TestTensor::f32({1, 2, 2, 1}, {1, 2, 3, 4});
  // 2x2 windows, stride 1, padding 1 all round: a 3x3 output; corner windows see one input each.
  ops::Pooling2d::Params p{.window = {2, 2}, .padding = {1, 1, 1, 1}};
  check_op<ops::Pooling2d>(p, {x}, {TestTensor::f32({1, 3, 3, 1}, {1, 2, 2, 3, 4, 4, 3, 4, 4})});
  p.kind = ops::PoolingKind::Average;
  check_op<ops::Pooling2d>(p, {x}, {TestTensor::f32({1, 3, 3, 1}, {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4})});
  p.count_include_pad = true;
  check_op<ops::Pooling2d>(p, {x},
                           {TestTensor::f32({1, 3, 3, 1}, {0.25f, 0.75f, 0.5f, 1, 2.5f, 1.5f, 0.75f, 1.75f, 1})});
}

TEMPLATE_LIST_TEST_CASE("Pooling2d matches PyTorch pooling", "[ops][pooling2d]", tested_backends) {
  for (const auto& c : load_fixtures("pooling2d")) {
    SECTION(c.name) {
      ops::Pooling2d::Params p;
      p.kind = c.u32("kind") == 0 ? ops::PoolingKind::Max : ops::PoolingKind::Average;
      p.window = c.size2d("window");
      p.stride = c.size2d("stride");
      p.padding = c.padding("padding");
      p.count_include_pad = c.flag("count_include_pad");
      p.ceil_mode = c.flag("ceil_mode");
      p.global = c.flag("global_");
      if (c.params.count("dilation") != 0) p.dilation = c.size2d("dilation");
      // Dilated windows are RefBackend's: NeonBackend walks them itself, ClBackend has no fallback.
      if (p.dilation != ops::Size2d{1, 1} && std::same_as<typename TestType::fallback, void>) return;
      check_op<ops::Pooling2d, TestType>(p, {c.tensor("input")}, {c.tensor("output")}, 1e-5, 1e-6);
    }
  }
}

TEST_CASE("Pooling2d rejects windows larger than the padded input and padding as large as the window",
          "[ops][pooling2d][errors]") {
  auto x = TestTensor::f32({1, 2, 2, 1}, {1, 2, 3, 4});
  auto r1 = run_op<ops::Pooling2d>({.window = {3, 3}}, {x});
  REQUIRE_FALSE(r1);
  CHECK_THAT(r1.status().message(), Catch::Contains("larger than the padded input"));
  auto r2 = run_op<ops::Pooling2d>({.window = {2, 2}, .padding = {2, 0, 0, 0}}, {x});
  REQUIRE_FALSE(r2);
  CHECK_THAT(r2.status().message(), Catch::Contains("padding must be smaller than the window"));
}

TEMPLATE_LIST_TEST_CASE("Pooling2d matches RefBackend with padding, strides and channel tails", "[ops][pooling2d]",
                        accelerated_backends) {
  using K = ops::PoolingKind;
  for (K kind : {K::Max, K::Average})
    for (std::uint32_t c : {1u, 5u, 16u, 17u, 24u, 33u}) {
      INFO("kind " << static_cast<int>(kind) << ", " << c << " channels");
      auto x = random_f32({2, 9, 11, c}, c);
      check_against_ref<ops::Pooling2d, TestType>(
          {.kind = kind, .window = {3, 3}, .stride = {2, 2}, .padding = {1, 1, 1, 1}}, {x});
      check_against_ref<ops::Pooling2d, TestType>({.kind = kind,
                                                   .window = {2, 3},
                                                   .stride = {2, 1},
                                                   .padding = {0, 1, 1, 0},
                                                   .count_include_pad = true,
                                                   .ceil_mode = true},
                                                  {x});
      check_against_ref<ops::Pooling2d, TestType>({.kind = kind, .global = true}, {x});
      if (std::same_as<typename TestType::fallback, void>) continue;  // ClBackend leaves dilation to RefBackend
      for (const bool include : {false, true})
        check_against_ref<ops::Pooling2d, TestType>({.kind = kind,
                                                     .window = {3, 2},
                                                     .stride = {2, 1},
                                                     .padding = {2, 1, 1, 2},
                                                     .count_include_pad = include,
                                                     .ceil_mode = true,
                                                     .dilation = {2, 3}},
                                                    {x});
    }
}

TEMPLATE_LIST_TEST_CASE("Pooling2d in int8: max, averages with ties up, rescaling (hand-computed)",
                        "[ops][pooling2d][int8]", tested_backends) {
  // q - zero point: [1 2 | -1 -2] over [3 4 | -3 -4]; 2x2 windows, stride 2. Maxima 4 and -1; sums
  // 10 and -10, averages 2.5 -> 3 and -2.5 -> -2 (ties go up, towards +infinity).
  const QuantizationInfo q{{1.0f}, -3, {}};
  const auto x = TestTensor::q8({1, 2, 4, 1}, DataType::QAsymmS8, q, {-2, -1, -4, -5, 0, 1, -6, -7});
  ops::Pooling2d::Params p{.window = {2, 2}, .stride = {2, 2}};
  check_op<ops::Pooling2d, TestType>(p, {x}, {TestTensor::q8({1, 1, 2, 1}, DataType::QAsymmS8, q, {1, -4})});
  // Rescaled to scale 2, zero point 5: 4 -> 2, -1 -> -0.5 -> 0 (tie up), plus 5.
  check_op<ops::Pooling2d, TestType>(p, {x},
                                     {TestTensor::q8({1, 1, 2, 1}, DataType::QAsymmS8, {{2.0f}, 5, {}}, {7, 5})});
  p.kind = ops::PoolingKind::Average;
  check_op<ops::Pooling2d, TestType>(p, {x}, {TestTensor::q8({1, 1, 2, 1}, DataType::QAsymmS8, q, {0, -5})});
  // The whole plane: a sum of 0 over 8 positions.
  check_op<ops::Pooling2d, TestType>({.kind = ops::PoolingKind::Average, .global = true}, {x},
                                     {TestTensor::q8({1, 1, 1, 1}, DataType::QAsymmS8, q, {-3})});
  // A 1x1 plane of q - 10 = 7 under 2x2 windows with padding 1: each window holds the one value;
  // divided by 1 (positions inside) it stays 7, by the padded window's 4 it is 1.75 -> 2.
  const QuantizationInfo u{{0.5f}, 10, {}};
  const auto one = TestTensor::q8({1, 1, 1, 1}, DataType::QAsymmU8, u, {17});
  ops::Pooling2d::Params padded{.kind = ops::PoolingKind::Average, .window = {2, 2}, .padding = {1, 1, 1, 1}};
  check_op<ops::Pooling2d, TestType>(padded, {one},
                                     {TestTensor::q8({1, 2, 2, 1}, DataType::QAsymmU8, u, {17, 17, 17, 17})});
  padded.count_include_pad = true;
  check_op<ops::Pooling2d, TestType>(padded, {one},
                                     {TestTensor::q8({1, 2, 2, 1}, DataType::QAsymmU8, u, {12, 12, 12, 12})});
}

namespace {
/// Random int8 pooling cases against RefBackend: odd planes, padding, ceil mode, channel tails
/// around the byte vectors' widths (16, 32, 64), and output quantizations `y_of(x quantization)`.
template <class Backend, class OutputQuantization>
void check_int8_pooling_against_ref(ops::PoolingKind kind, OutputQuantization&& y_of) {
  std::uint32_t seed = 500;
  for (DataType type : {DataType::QAsymmU8, DataType::QAsymmS8})
    for (std::uint32_t c : {1u, 15u, 16u, 33u, 64u, 77u}) {
      INFO(to_string(type) << ", " << c << " channels");
      const QuantizationInfo xq{{0.04f}, type == DataType::QAsymmU8 ? 121 : -9, {}};
      const std::vector<ops::OutputType> y{{type, y_of(xq)}};
      const auto x = random_q8({2, 9, 11, c}, type, xq, ++seed);
      check_against_ref<ops::Pooling2d, Backend>(
          {.kind = kind, .window = {3, 3}, .stride = {2, 2}, .padding = {1, 1, 1, 1}}, {x}, 0, 0, y);
      check_against_ref<ops::Pooling2d, Backend>({.kind = kind,
                                                  .window = {2, 3},
                                                  .stride = {2, 1},
                                                  .padding = {0, 1, 1, 0},
                                                  .count_include_pad = true,
                                                  .ceil_mode = true},
                                                 {x}, 0, 0, y);
      check_against_ref<ops::Pooling2d, Backend>({.kind = kind, .global = true}, {x}, 0, 0, y);
      if constexpr (!std::same_as<typename Backend::fallback, void>)  // ClBackend leaves dilation to RefBackend
        check_against_ref<ops::Pooling2d, Backend>({.kind = kind,
                                                    .window = {2, 3},
                                                    .stride = {1, 2},
                                                    .padding = {1, 0, 2, 1},
                                                    .count_include_pad = true,
                                                    .dilation = {3, 2}},
                                                   {x}, 0, 0, y);
    }
}
}  // namespace

TEMPLATE_LIST_TEST_CASE("Pooling2d in int8, max of one quantization in and out, is bit-exact with RefBackend",
                        "[ops][pooling2d][int8]", accelerated_backends) {
  check_int8_pooling_against_ref<TestType>(ops::PoolingKind::Max, [](const QuantizationInfo& q) { return q; });
}

TEMPLATE_LIST_TEST_CASE("Pooling2d in int8, averages and rescaled maxima, is bit-exact with RefBackend",
                        "[ops][pooling2d][int8]", accelerated_backends) {
  const auto rescaled = [](const QuantizationInfo& q) { return QuantizationInfo{{q.scales[0] * 0.7f}, 3, {}}; };
  check_int8_pooling_against_ref<TestType>(ops::PoolingKind::Max, rescaled);
  check_int8_pooling_against_ref<TestType>(ops::PoolingKind::Average, [](const QuantizationInfo& q) { return q; });
  check_int8_pooling_against_ref<TestType>(ops::PoolingKind::Average, rescaled);
}

TEMPLATE_LIST_TEST_CASE("Pooling2d in TensorFlow Lite's int8 arithmetic divides the integers' sum, ties away from zero",
                        "[ops][pooling2d][int8]", tested_backends) {
  // A global average of -4 and -5 at zero point 5: TensorFlow Lite divides the integers' sum, -9,
  // by 2 and rounds -4.5 away from zero to -5; kiln's arithmetic requantizes the sum less the zero
  // points, -19 / 2 = -9.5, ties up to -9, plus 5: -4. Then 1 and 2: 1.5 away from zero, 2.
  const QuantizationInfo q{{0.1f}, 5, {}};
  const auto x = TestTensor::q8({1, 2, 1, 2}, DataType::QAsymmS8, q, {-4, 1, -5, 2});
  const std::vector<ops::OutputType> y{{DataType::QAsymmS8, q}};
  const ops::Pooling2d::Params global{.kind = ops::PoolingKind::Average, .global = true};
  auto tflite = run_op<ops::Pooling2d, TestType>(global, {x}, 0, nullptr, y, QuantizedArithmetic::TfLite);
  REQUIRE(tflite);
  CHECK(tflite->front().integers() == std::vector<std::int32_t>{-5, 2});
  auto kiln = run_op<ops::Pooling2d, TestType>(global, {x}, 0, nullptr, y, QuantizedArithmetic::Kiln);
  REQUIRE(kiln);
  CHECK(kiln->front().integers() == std::vector<std::int32_t>{-4, 2});
}
