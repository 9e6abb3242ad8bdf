// SPDX-License-Identifier: Apache-2.0
// Pad: hand-computed modes, numpy.pad fixtures, errors.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Pad: hand-computed modes on [1 2 3]", "[ops][pad]") {
  auto x = TestTensor::f32({3}, {1, 2, 3});
  check_op<ops::Pad>({{2}, {1}, ops::PadMode::Constant, 9}, {x}, {TestTensor::f32({6}, {9, 9, 1, 2, 3, 9})}, 0, 0);
  check_op<ops::Pad>({{2}, {2}, ops::PadMode::Reflect}, {x}, {TestTensor::f32({7}, {3, 2, 1, 2, 3, 2, 1})}, 0, 0);
  check_op<ops::Pad>({{2}, {2}, ops::PadMode::Symmetric}, {x}, {TestTensor::f32({7}, {2, 1, 1, 2, 3, 3, 2})}, 0, 0);
  check_op<ops::Pad>({{1}, {2}, ops::PadMode::Edge}, {x}, {TestTensor::f32({6}, {1, 1, 2, 3, 3, 3})}, 0, 0);
}

TEST_CASE("Pad of Signed32 and Boolean tensors: the constant truncated, saturated, or nonzero", "[ops][pad]") {
  const auto x = TestTensor::i32({2}, {-2147483647 - 1, 7});
  check_op<ops::Pad>({{1}, {1}, ops::PadMode::Constant, -2.9f}, {x},
                     {TestTensor::i32({4}, {-2, -2147483647 - 1, 7, -2})}, 0, 0);
  check_op<ops::Pad>({{0}, {1}, ops::PadMode::Constant, 1e10f}, {x},
                     {TestTensor::i32({3}, {-2147483647 - 1, 7, 2147483647})}, 0, 0);
  check_op<ops::Pad>({{2}, {1}, ops::PadMode::Reflect}, {TestTensor::i32({3}, {1, 2, 3})},
                     {TestTensor::i32({6}, {3, 2, 1, 2, 3, 2})}, 0, 0);
  check_op<ops::Pad>({{1}, {1}, ops::PadMode::Constant, 0.5f}, {TestTensor::boolean({2}, {0, 1})},
                     {TestTensor::boolean({4}, {1, 0, 1, 1})}, 0, 0);
}

TEMPLATE_LIST_TEST_CASE("Pad matches numpy.pad", "[ops][pad]", tested_backends) {
  for (const auto& c : load_fixtures("pad")) {
    SECTION(c.name) {
      ops::Pad::Params p{c.list<std::uint32_t>("before"), c.list<std::uint32_t>("after"),
                         static_cast<ops::PadMode>(c.u32("mode")), c.f32("value")};
      check_op<ops::Pad, TestType>(p, {c.tensor("input")}, {c.tensor("output")}, 0, 0);
    }
  }
}

TEST_CASE("Pad rejects reflect padding as large as the dimension", "[ops][pad][errors]") {
  auto r = run_op<ops::Pad>({{3}, {0}, ops::PadMode::Reflect}, {TestTensor::f32({3}, {1, 2, 3})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("reflect padding of 3 needs dimension 0 larger than it"));
}

TEMPLATE_LIST_TEST_CASE("Pad matches RefBackend in every mode on odd shapes", "[ops][pad]", accelerated_backends) {
  using M = ops::PadMode;
  auto x = random_f32({2, 5, 7, 3}, 11);
  for (M mode : {M::Constant, M::Edge, M::Reflect, M::Symmetric}) {
    INFO("mode " << static_cast<int>(mode));
    check_against_ref<ops::Pad, TestType>({{0, 2, 1, 0}, {1, 3, 4, 2}, mode, -2.5f}, {x}, 0, 0);
    check_against_ref<ops::Pad, TestType>({{1, 0, 0, 2}, {0, 1, 6, 0}, mode, 0.5f}, {x}, 0, 0);  // innermost padded
    check_against_ref<ops::Pad, TestType>({{}, {}, mode}, {x}, 0, 0);                            // nothing to pad
  }
  // An empty dimension padded with the constant: every output element is the constant.
  check_against_ref<ops::Pad, TestType>({{1, 0}, {1, 2}, M::Constant, 7.0f}, {TestTensor::f32({0, 3}, {})}, 0, 0);
}

TEMPLATE_LIST_TEST_CASE("Pad moves 8-bit integers and fills with the constant's quantisation", "[ops][pad][int8]",
                        tested_backends) {
  // Scale 0.5, zero point 10: constant 3 quantises to 16, -100 saturates to 0. Zero point -128:
  // 1.25 / 0.5 = 2.5 rounds half to even, to -128 + 2 = -126.
  const QuantizationInfo u8{{0.5f}, 10, {}}, s8{{0.5f}, -128, {}};
  const auto x = TestTensor::q8({3}, DataType::QAsymmU8, u8, {0, 200, 255});
  check_op<ops::Pad, TestType>({{2}, {1}, ops::PadMode::Constant, 3.0f}, {x},
                               {TestTensor::q8({6}, DataType::QAsymmU8, u8, {16, 16, 0, 200, 255, 16})});
  check_op<ops::Pad, TestType>({{1}, {1}, ops::PadMode::Constant, -100.0f}, {x},
                               {TestTensor::q8({5}, DataType::QAsymmU8, u8, {0, 0, 200, 255, 0})});
  check_op<ops::Pad, TestType>({{2}, {2}, ops::PadMode::Reflect}, {x},
                               {TestTensor::q8({7}, DataType::QAsymmU8, u8, {255, 200, 0, 200, 255, 200, 0})});
  const auto y = TestTensor::q8({2}, DataType::QAsymmS8, s8, {-128, 127});
  check_op<ops::Pad, TestType>({{1}, {1}, ops::PadMode::Constant, 1.25f}, {y},
                               {TestTensor::q8({4}, DataType::QAsymmS8, s8, {-126, -128, 127, -126})});
}

TEMPLATE_LIST_TEST_CASE("8-bit Pad matches RefBackend in every mode on odd shapes", "[ops][pad][int8]",
                        accelerated_backends) {
  using M = ops::PadMode;
  for (const DataType type : {DataType::QAsymmU8, DataType::QAsymmS8}) {
    const QuantizationInfo q{{0.03f}, type == DataType::QAsymmU8 ? 131 : -7, {}};
    const auto x = random_q8({2, 5, 7, 3}, type, q, 19);
    for (M mode : {M::Constant, M::Edge, M::Reflect, M::Symmetric}) {
      INFO(to_string(type) << " mode " << static_cast<int>(mode));
      check_against_ref<ops::Pad, TestType>({{0, 2, 1, 0}, {1, 3, 4, 2}, mode, -2.5f}, {x}, 0, 0);
      check_against_ref<ops::Pad, TestType>({{1, 0, 0, 2}, {0, 1, 6, 0}, mode, 0.5f}, {x}, 0, 0);
    }
  }
}

TEST_CASE("Pad refuses tensors it cannot fill", "[ops][pad][int8][errors]") {
  auto per_axis = run_op<ops::Pad>(
      {{1}, {1}}, {TestTensor::q8({2}, DataType::QAsymmU8, {{0.5f, 0.25f}, 0, std::uint32_t{0}}, {1, 2})});
  REQUIRE_FALSE(per_axis);
  CHECK_THAT(per_axis.status().message(), Catch::Contains("pads 8-bit tensors quantised per tensor"));
}
