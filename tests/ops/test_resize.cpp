// SPDX-License-Identifier: Apache-2.0
// Resize: hand-computed nearest, bilinear and bicubic, PyTorch interpolate fixtures, errors.
#include <tuple>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Resize: hand-computed 1x2 -> 1x4", "[ops][resize]") {
  using T = ops::CoordinateTransform;
  auto x = TestTensor::f32({1, 1, 2, 1}, {0, 8});
  ops::Resize::Params p{ops::ResizeMethod::Nearest, 1, 4};
  check_op<ops::Resize>(p, {x}, {TestTensor::f32({1, 1, 4, 1}, {0, 0, 8, 8})});
  // Bilinear, asymmetric: sample at 0, 0.5, 1, 1.5 (clamped to 1).
  p.method = ops::ResizeMethod::Bilinear;
  check_op<ops::Resize>(p, {x}, {TestTensor::f32({1, 1, 4, 1}, {0, 4, 8, 8})});
  // Half pixel: sample at -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
  p.transform = T::HalfPixel;
  check_op<ops::Resize>(p, {x}, {TestTensor::f32({1, 1, 4, 1}, {0, 2, 6, 8})});
  // Align corners: sample at 0, 1/3, 2/3, 1.
  p.transform = T::AlignCorners;
  check_op<ops::Resize>(p, {x}, {TestTensor::f32({1, 1, 4, 1}, {0, 8.0f / 3, 16.0f / 3, 8})});
}

TEMPLATE_LIST_TEST_CASE("Resize matches PyTorch interpolate", "[ops][resize]", tested_backends) {
  for (const auto& c : load_fixtures("resize")) {
    SECTION(c.name) {
      ops::Resize::Params p{static_cast<ops::ResizeMethod>(c.u32("method")), c.u32("size", 0), c.u32("size", 1),
                            static_cast<ops::CoordinateTransform>(c.u32("transform")),
                            static_cast<ops::NearestRounding>(c.u32("rounding"))};
      if (c.params.count("scale") != 0) {
        p.height_scale = c.f32("scale", 0);
        p.width_scale = c.f32("scale", 1);
      }
      // Bicubic is RefBackend's: NeonBackend runs it through its fallback; ClBackend has none.
      if (p.method == ops::ResizeMethod::Bicubic && std::same_as<typename TestType::fallback, void>) return;
      check_op<ops::Resize, TestType>(p, {c.tensor("input")}, {c.tensor("output")}, 1e-5, 1e-6);
    }
  }
}

TEST_CASE("Bicubic Resize: Keys' kernel by hand, edge taps clamped or excluded", "[ops][resize]") {
  // 1 x 4 -> 1 x 2, asymmetric: output column 1 samples x = 2, a whole coordinate, which takes
  // its pixel alone; column 0 samples x = 0, whose left taps (-1) clamp to pixel 0 and weigh 0.
  const auto x = TestTensor::f32({1, 1, 4, 1}, {1, 2, 4, 8});
  ops::Resize::Params p{.method = ops::ResizeMethod::Bicubic, .height = 1, .width = 2};
  check_op<ops::Resize>(p, {x}, {TestTensor::f32({1, 1, 2, 1}, {1, 4})});
  // Half pixel, 1 x 4 -> 1 x 8: column 0 samples x = -0.25. With a = -0.5 the taps -2..1 sit at
  // distances 1.75, 0.75, 0.25, 1.25, weights -0.0234375, 0.2265625, 0.8671875, -0.0703125. Clamped,
  // taps -2 and -1 read pixel 0: 0.203125 * 1 + 0.8671875 * 1 - 0.0703125 * 2 = 0.9296875. With
  // exclude_outside they weigh nothing and the others are divided by 0.796875: (0.8671875 - 0.140625)
  // / 0.796875 = 0.91176470...
  p = {.method = ops::ResizeMethod::Bicubic, .height = 1, .width = 8, .transform = ops::CoordinateTransform::HalfPixel};
  p.cubic_coefficient = -0.5f;
  auto clamped = run_op<ops::Resize>(p, {x});
  REQUIRE(clamped);
  CHECK((*clamped)[0].floats()[0] == Approx(0.9296875f));
  p.exclude_outside = true;
  auto excluded = run_op<ops::Resize>(p, {x});
  REQUIRE(excluded);
  CHECK((*excluded)[0].floats()[0] == Approx(0.7265625f / 0.796875f));
}

TEST_CASE("Resize rejects an empty output size", "[ops][resize][errors]") {
  auto r = run_op<ops::Resize>({.height = 0, .width = 3}, {TestTensor::f32({1, 1, 1, 1}, {1})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("output size 0 x 3 is empty"));
}

TEMPLATE_LIST_TEST_CASE("Resize matches RefBackend up and down with every transform and channel tails", "[ops][resize]",
                        accelerated_backends) {
  using T = ops::CoordinateTransform;
  using R = ops::NearestRounding;
  for (std::uint32_t channels : {1u, 3u, 17u, 33u})
    for (T transform : {T::Asymmetric, T::HalfPixel, T::AlignCorners, T::PytorchHalfPixel, T::TfHalfPixelForNearest}) {
      INFO(channels << " channels, transform " << static_cast<int>(transform));
      auto x = random_f32({2, 5, 7, channels}, channels);
      // Sizes from sizes, and from fractional scales that map coordinates themselves (5 x 0.7, 7 x 1.9).
      using Target = std::tuple<std::uint32_t, std::uint32_t, float, float>;  // sizes, scales (0: sizes' ratio)
      for (auto [h, w, h_scale, w_scale] :
           std::initializer_list<Target>{{11, 13, 0, 0}, {3, 4, 0, 0}, {1, 1, 0, 0}, {3, 13, 0.7f, 1.9f}}) {
        ops::Resize::Params p{ops::ResizeMethod::Bilinear, h, w, transform};
        p.height_scale = h_scale;
        p.width_scale = w_scale;
        check_against_ref<ops::Resize, TestType>(p, {x}, 1e-5, 1e-6);
        p.method = ops::ResizeMethod::Nearest;
        for (R rounding : {R::Floor, R::Ceil, R::RoundPreferFloor, R::RoundPreferCeil}) {
          p.rounding = rounding;
          check_against_ref<ops::Resize, TestType>(p, {x}, 0, 0);
        }
      }
    }
}

TEMPLATE_LIST_TEST_CASE("Nearest Resize moves 8-bit integers; bilinear refuses them", "[ops][resize][int8]",
                        tested_backends) {
  const QuantizationInfo q{{0.1f}, 128, {}};
  const auto x = TestTensor::q8({1, 1, 2, 2}, DataType::QAsymmU8, q, {0, 255, 7, 128});
  // Two pixels of 2 channels, doubled in width: each pixel repeats.
  check_op<ops::Resize, TestType>(
      {ops::ResizeMethod::Nearest, 1, 4}, {x},
      {TestTensor::q8({1, 1, 4, 2}, DataType::QAsymmU8, q, {0, 255, 0, 255, 7, 128, 7, 128})});
  auto bilinear = run_op<ops::Resize, TestType>({ops::ResizeMethod::Bilinear, 1, 4}, {x});
  REQUIRE_FALSE(bilinear);
  CHECK_THAT(bilinear.status().message(), Catch::Contains("8-bit ones by nearest neighbour"));
}

TEST_CASE("Bilinear Resize of 8-bit tensors in TensorFlow Lite's arithmetic interpolates in 10-bit fixed point",
          "[ops][resize][int8]") {
  // Two pixels to four: positions 0, 512, 1024, 1536 in 1/1024ths of a pixel; the second output is
  // halfway, (10 + -3) / 2 = 3.5, rounded away from zero from 2^-20 units: 4. TensorFlow Lite
  // interpolates the integers themselves (one quantisation in and out).
  const QuantizationInfo q{{0.1f}, 3, {}};
  const auto x = TestTensor::q8({1, 1, 2, 1}, DataType::QAsymmS8, q, {10, -3});
  auto y = run_op<ops::Resize>({ops::ResizeMethod::Bilinear, 1, 4}, {x}, 0, nullptr, {{DataType::QAsymmS8, q}},
                               QuantizedArithmetic::TfLite);
  REQUIRE(y);
  CHECK(y->front().integers() == std::vector<std::int32_t>{10, 4, -3, -3});
  // Aligned corners: (2 - 1) / (4 - 1) of a pixel a step, 341/1024 rounded: 10, 5.67 -> 6, 1.33 -> 1, -3.
  auto aligned = run_op<ops::Resize>({ops::ResizeMethod::Bilinear, 1, 4, ops::CoordinateTransform::AlignCorners}, {x},
                                     0, nullptr, {{DataType::QAsymmS8, q}}, QuantizedArithmetic::TfLite);
  REQUIRE(aligned);
  CHECK(aligned->front().integers() == std::vector<std::int32_t>{10, 6, 1, -3});
}

TEMPLATE_LIST_TEST_CASE("8-bit nearest Resize matches RefBackend with every transform and rounding",
                        "[ops][resize][int8]", accelerated_backends) {
  using T = ops::CoordinateTransform;
  using R = ops::NearestRounding;
  for (const DataType type : {DataType::QAsymmU8, DataType::QAsymmS8})
    for (std::uint32_t channels : {1u, 3u, 33u}) {
      const auto x = random_q8({2, 5, 7, channels}, type, {{0.05f}, 3, {}}, channels + 5);
      for (T transform : {T::Asymmetric, T::HalfPixel, T::AlignCorners})
        for (auto [h, w] : {std::pair{11u, 13u}, std::pair{3u, 4u}})
          for (R rounding : {R::Floor, R::RoundPreferCeil}) {
            INFO(to_string(type) << ", " << channels << " channels, transform " << static_cast<int>(transform));
            check_against_ref<ops::Resize, TestType>({ops::ResizeMethod::Nearest, h, w, transform, rounding}, {x}, 0,
                                                     0);
          }
    }
}
