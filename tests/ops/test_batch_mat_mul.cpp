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

TEST_CASE("BatchMatMul of Signed32 (ONNX MatMulInteger of two activations): hand-computed, wrapping",
          "[ops][batch_mat_mul]") {
  auto a = TestTensor::i32({2, 2}, {1, 2, 3, 4});
  auto b = TestTensor::i32({2, 2}, {5, 6, 7, 8});
  check_op<ops::BatchMatMul>({}, {a, b}, {TestTensor::i32({2, 2}, {19, 22, 43, 50})});
  check_op<ops::BatchMatMul>({.transpose_b = true}, {a, b}, {TestTensor::i32({2, 2}, {17, 23, 39, 53})});
  // 2^16 x 2^16 + 1 x 1 = 2^32 + 1 wraps to 1.
  check_op<ops::BatchMatMul>({}, {TestTensor::i32({1, 2}, {65536, 1}), TestTensor::i32({2, 1}, {65536, 1})},
                             {TestTensor::i32({1, 1}, {1})});
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

TEMPLATE_LIST_TEST_CASE("BatchMatMul in int8: products of two activations requantized (hand-computed)",
                        "[ops][batch_mat_mul][int8]", tested_backends) {
  // a u8 at scale 0.5, zero point 2: bytes 4, 6, 8, 10 are 1, 2, 3, 4; b at scale 0.25, zero point
  // 1: bytes 21, 25, 29, 33 are 5, 6, 7, 8. a b = [[19, 22], [43, 50]] -> at scale 0.5: 38, 44, 86, 100.
  const auto a = TestTensor::q8({2, 2}, DataType::QAsymmU8, {{0.5f}, 2, {}}, {4, 6, 8, 10});
  const auto b = TestTensor::q8({2, 2}, DataType::QAsymmU8, {{0.25f}, 1, {}}, {21, 25, 29, 33});
  const QuantizationInfo half{{0.5f}, 0, {}};
  check_op<ops::BatchMatMul, TestType>({}, {a, b},
                                       {TestTensor::q8({2, 2}, DataType::QAsymmU8, half, {38, 44, 86, 100})});
  // a^T b = [[26, 30], [38, 44]]; at scale 0.1 the products pass 255 and saturate.
  check_op<ops::BatchMatMul, TestType>(
      {.transpose_a = true}, {a, b},
      {TestTensor::q8({2, 2}, DataType::QAsymmU8, {{0.1f}, 0, {}}, {255, 255, 255, 255})});
  check_op<ops::BatchMatMul, TestType>({.transpose_b = true}, {a, b},  // a b^T = [[17, 23], [39, 53]]
                                       {TestTensor::q8({2, 2}, DataType::QAsymmU8, half, {34, 46, 78, 106})});
  // s8: [1, -3] [1, 2]^T = -5, at scale 2 -2.5, a tie, which rounds up (decision 0014) -> -2 + 5.
  const QuantizationInfo unit{{1.0f}, 0, {}};
  check_op<ops::BatchMatMul, TestType>({},
                                       {TestTensor::q8({1, 2}, DataType::QAsymmS8, unit, {1, -3}),
                                        TestTensor::q8({2, 1}, DataType::QAsymmS8, unit, {1, 2})},
                                       {TestTensor::q8({1, 1}, DataType::QAsymmS8, {{2.0f}, 5, {}}, {3})});
}

TEMPLATE_LIST_TEST_CASE("BatchMatMul in int8 is bit-exact with RefBackend with broadcast batches and transposes",
                        "[ops][batch_mat_mul][int8]", accelerated_backends) {
  struct Case {
    TensorShape a, b;
    bool transpose_a = false, transpose_b = false;
  };
  const std::vector<Case> cases = {
      {{7, 9}, {9, 67}},  // a block and a tail of columns
      {{2, 3, 5, 17}, {3, 17, 1}},
      {{1, 19, 4}, {2, 19, 31}, true},
      {{3, 6, 37}, {3, 13, 37}, false, true},
      {{2, 37, 6}, {13, 37}, true, true},
      {{4, 8, 64}, {4, 64, 8}},  // attention-like: scores of 4 heads
  };
  std::uint32_t seed = 7300;
  for (DataType type : {DataType::QAsymmU8, DataType::QAsymmS8})
    for (const Case& c : cases) {
      INFO(to_string(type) << " " << c.a.to_string() << " x " << c.b.to_string()
                           << (c.transpose_a ? " (a transposed)" : "") << (c.transpose_b ? " (b transposed)" : ""));
      const bool u8 = type == DataType::QAsymmU8;
      const auto a = random_q8(c.a, type, {{0.031f}, u8 ? 131 : 5, {}}, ++seed);
      const auto b = random_q8(c.b, type, {{0.047f}, u8 ? 120 : -9, {}}, ++seed);
      for (float y_scale : {0.05f, 0.9f}) {
        const std::vector<ops::OutputType> y{{type, {{y_scale}, u8 ? 128 : 0, {}}}};
        check_against_ref<ops::BatchMatMul, TestType>({c.transpose_a, c.transpose_b}, {a, b}, 0, 0, y);
      }
    }
}
