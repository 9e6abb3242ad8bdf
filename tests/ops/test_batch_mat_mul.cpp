// SPDX-License-Identifier: Apache-2.0
// BatchMatMul: a hand-computed case, torch.matmul fixtures (broadcast batches, transposes), errors.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("BatchMatMul: hand-computed 2x2 products", "[ops][batch_mat_mul]") {
  auto a = TestTensor::f32({2, 2}, {1, 2, 3, 4});
  auto b = TestTensor::f32({2, 2}, {5, 6, 7, 8});
  check_op<ops::BatchMatMul>({}, {a, b}, {TestTensor::f32({2, 2}, {19, 22, 43, 50})});
  check_op<ops::BatchMatMul>({.transpose_a = true}, {a, b}, {TestTensor::f32({2, 2}, {26, 30, 38, 44})});
}

TEMPLATE_LIST_TEST_CASE("BatchMatMul matches torch.matmul", "[ops][batch_mat_mul]", tested_backends) {
  for (const auto& c : load_fixtures("batch_mat_mul")) {
    SECTION(c.name) {
      check_op<ops::BatchMatMul, TestType>({c.flag("transpose_a"), c.flag("transpose_b")},
                                           {c.tensor("a"), c.tensor("b")}, {c.tensor("output")}, 1e-5, 1e-5);
    }
  }
}

TEST_CASE("BatchMatMul rejects mismatched inner or batch dimensions", "[ops][batch_mat_mul][errors]") {
  auto r1 = run_op<ops::BatchMatMul>(
      {}, {TestTensor::f32({2, 3}, std::vector<float>(6)), TestTensor::f32({2, 3}, std::vector<float>(6))});
  REQUIRE_FALSE(r1);
  CHECK_THAT(r1.status().message(), Catch::Contains("inner dimensions differ"));
  auto r2 = run_op<ops::BatchMatMul>(
      {}, {TestTensor::f32({2, 1, 1}, std::vector<float>(2)), TestTensor::f32({3, 1, 1}, std::vector<float>(3))});
  REQUIRE_FALSE(r2);
  CHECK_THAT(r2.status().message(), Catch::Contains("do not broadcast"));
}

TEMPLATE_LIST_TEST_CASE("BatchMatMul matches RefBackend with broadcast batches, transposes and odd sizes",
                        "[ops][batch_mat_mul]", accelerated_backends) {
  struct Case {
    TensorShape a, b;
    bool transpose_a = false, transpose_b = false;
  };
  const std::vector<Case> cases = {
      {{7, 9}, {9, 33}},                       // tails in both vectors of the tile, rows not a multiple of 4
      {{2, 3, 5, 17}, {3, 17, 1}},             // broadcast batch, a single column
      {{1, 19, 4}, {2, 19, 31}, true},         // a stored [K, M]
      {{3, 6, 37}, {3, 13, 37}, false, true},  // b stored [N, K]: dot products with a K tail
      {{64, 64}, {64, 64}},
      {{1, 1}, {1, 1}},
  };
  for (const Case& c : cases) {
    INFO(c.a.to_string() << " x " << c.b.to_string() << (c.transpose_a ? " (a transposed)" : "")
                         << (c.transpose_b ? " (b transposed)" : ""));
    check_against_ref<ops::BatchMatMul, TestType>({c.transpose_a, c.transpose_b},
                                                  {random_f32(c.a, 1), random_f32(c.b, 2)}, 1e-5, 1e-5);
  }
}
