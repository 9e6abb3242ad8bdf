// SPDX-License-Identifier: Apache-2.0
// Attention: hand-computed, PyTorch's softmax(q k^T * scale + mask) v (fixtures), the accelerated
// backends against RefBackend on odd sizes, masks and more keys than a tile, errors.
#include <cmath>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEMPLATE_LIST_TEST_CASE("Attention: hand-computed", "[ops][attention]", tested_backends) {
  if (!has_own_workload<ops::Attention, TestType>(DataType::Float32)) {
    SUCCEED(TestType::id << " has no Attention workload");
    return;
  }
  // q = [1, 0] against keys [1, 0] and [0, 1] (the columns of the identity): scores [1, 0],
  // weights [e / (e + 1), 1 / (e + 1)] = [0.7310586, 0.2689414]; values [1, 2] and [3, 4] give
  // [0.7310586 + 3 * 0.2689414, 2 * 0.7310586 + 4 * 0.2689414] = [1.5378828, 2.5378828].
  const std::vector<TestTensor> inputs{TestTensor::f32({1, 1, 2}, {1, 0}), TestTensor::f32({1, 2, 2}, {1, 0, 0, 1}),
                                       TestTensor::f32({1, 2, 2}, {1, 2, 3, 4})};
  check_op<ops::Attention, TestType>({}, inputs, {TestTensor::f32({1, 1, 2}, {1.5378828f, 2.5378828f})}, 1e-6, 1e-6);
  // A mask of -1e9 on the second key leaves the first's value; scale 0 weighs both alike: [2, 3].
  std::vector<TestTensor> masked = inputs;
  masked.push_back(TestTensor::f32({2}, {0.0f, -1e9f}));
  check_op<ops::Attention, TestType>({}, masked, {TestTensor::f32({1, 1, 2}, {1, 2})}, 1e-6, 1e-6);
  check_op<ops::Attention, TestType>({.scale = 0.0f}, inputs, {TestTensor::f32({1, 1, 2}, {2, 3})}, 1e-6, 1e-6);
}

TEMPLATE_LIST_TEST_CASE("Attention matches PyTorch's softmax(q k^T scale + mask) v", "[ops][attention]",
                        tested_backends) {
  if (!has_own_workload<ops::Attention, TestType>(DataType::Float32)) {
    SUCCEED(TestType::id << " has no Attention workload");
    return;
  }
  for (const auto& c : load_fixtures("attention")) {
    SECTION(c.name) {
      std::vector<TestTensor> inputs{c.tensor("query"), c.tensor("key"), c.tensor("value")};
      if (c.has("mask")) inputs.push_back(c.tensor("mask"));
      check_op<ops::Attention, TestType>({c.f32("scale"), c.i64("key_rows") != 0}, inputs, {c.tensor("output")}, 1e-5,
                                         1e-5);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("Attention on an accelerated backend matches RefBackend", "[ops][attention]",
                        accelerated_backends) {
  if (!has_own_workload<ops::Attention, TestType>(DataType::Float32)) {
    SUCCEED(TestType::id << " leaves Attention to RefBackend");
    return;
  }
  std::uint32_t seed = 1;
  // Keys below, at and past a vector and a tile (256): the online softmax's rescaling across tiles.
  for (std::uint32_t n : {1u, 7u, 16u, 257u, 600u})
    for (std::uint32_t depth : {1u, 5u, 32u})
      for (bool key_rows : {false, true}) {
        const std::uint32_t m = 1 + n % 11, value_depth = 3 + depth % 7;
        INFO(m << " queries, " << n << " keys, depth " << depth << ", value depth " << value_depth << ", key rows "
               << key_rows);
        const TensorShape key = key_rows ? TensorShape{2, n, depth} : TensorShape{2, depth, n};
        // Large scores (scale 4 on values up to 2 in magnitude) test the shift by the maximum.
        std::vector<TestTensor> inputs{random_f32({2, m, depth}, seed++, -2.0f, 2.0f),
                                       random_f32(key, seed++, -2.0f, 2.0f), random_f32({2, n, value_depth}, seed++)};
        check_against_ref<ops::Attention, TestType>({.scale = 4.0f / float(depth), .key_rows = key_rows}, inputs, 1e-4,
                                                    1e-5);
        // Masks broadcast per key, per query and key, and across everything.
        for (const TensorShape& mask : {TensorShape{2, 1, n}, TensorShape{m, n}, TensorShape{1}}) {
          std::vector<TestTensor> masked = inputs;
          masked.push_back(random_f32(mask, seed++, -3.0f, 3.0f));
          check_against_ref<ops::Attention, TestType>({.scale = 0.5f, .key_rows = key_rows}, masked, 1e-4, 1e-5);
        }
      }
}

TEST_CASE("Attention refuses operands that do not line up", "[ops][attention][errors]") {
  const TestTensor q = random_f32({2, 3, 4}, 1), k = random_f32({2, 4, 5}, 2), v = random_f32({2, 5, 6}, 3);
  auto depth = run_op<ops::Attention>({.key_rows = true}, {q, k, v});
  REQUIRE_FALSE(depth);
  CHECK_THAT(depth.status().message(), Catch::Contains("key [2, 4, 5] (rows) has depth 5 but query [2, 3, 4] has 4"));
  auto heads = run_op<ops::Attention>({}, {q, random_f32({3, 4, 5}, 2), random_f32({3, 5, 6}, 3)});
  REQUIRE_FALSE(heads);
  CHECK_THAT(heads.status().message(), Catch::Contains("differ in their leading dimensions"));
  auto values = run_op<ops::Attention>({}, {q, k, random_f32({2, 4, 6}, 3)});
  REQUIRE_FALSE(values);
  CHECK_THAT(values.status().message(), Catch::Contains("value [2, 4, 6] has 4 rows but there are 5 keys"));
  auto mask = run_op<ops::Attention>({}, {q, k, v, random_f32({2, 3, 3}, 4)});
  REQUIRE_FALSE(mask);
  CHECK_THAT(mask.status().message(), Catch::Contains("do not broadcast"));
}
