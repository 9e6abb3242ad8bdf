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
    }
}
