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
