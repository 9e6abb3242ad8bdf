// SPDX-License-Identifier: Apache-2.0
// Transpose: a hand-computed case, numpy fixtures (rank 2 to 5, default reversal), errors.
#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("Transpose: hand-computed matrix", "[ops][transpose]") {
  check_op<ops::Transpose>({{1, 0}}, {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})},
                           {TestTensor::f32({3, 2}, {1, 4, 2, 5, 3, 6})}, 0, 0);
}

TEMPLATE_LIST_TEST_CASE("Transpose matches numpy.transpose", "[ops][transpose]", tested_backends) {
  for (const auto& c : load_fixtures("transpose")) {
    SECTION(c.name) {
      check_op<ops::Transpose, TestType>({c.list<std::uint32_t>("permutation")}, {c.tensor("input")},
                                         {c.tensor("output")}, 0, 0);
    }
  }
}

TEST_CASE("Transpose moves Signed32 data too", "[ops][transpose]") {
  auto r = run_op<ops::Transpose>({{1, 0}}, {TestTensor::i32({2, 2}, {1, 2, 3, 4})});
  REQUIRE(r);
  const auto* values = reinterpret_cast<const std::int32_t*>((*r)[0].bytes.data());
  CHECK(std::vector<std::int32_t>(values, values + 4) == std::vector<std::int32_t>{1, 3, 2, 4});
}

TEST_CASE("Transpose rejects a non-permutation", "[ops][transpose][errors]") {
  auto x = TestTensor::f32({2, 3}, std::vector<float>(6));
  auto r1 = run_op<ops::Transpose>({{0, 0}}, {x});
  REQUIRE_FALSE(r1);
  CHECK_THAT(r1.status().message(), Catch::Contains("is not a permutation of 0..1"));
  CHECK_FALSE(run_op<ops::Transpose>({{0, 1, 2}}, {x}));
}

TEMPLATE_LIST_TEST_CASE("Transpose matches RefBackend on odd shapes, moved and kept innermost axes", "[ops][transpose]",
                        accelerated_backends) {
  const std::vector<std::pair<TensorShape, std::vector<std::uint32_t>>> cases = {
      {{1, 7, 9, 17}, {0, 3, 1, 2}},       // NHWC -> NCHW: the innermost axis moves (tiled)
      {{2, 17, 5, 33}, {0, 2, 3, 1}},      // NCHW -> NHWC
      {{3, 5, 7}, {1, 0, 2}},              // innermost kept: runs of 7
      {{33, 31}, {1, 0}},                  // a plain matrix, tiles with tails on both sides
      {{2, 1, 3, 1, 5}, {4, 3, 2, 1, 0}},  // size-1 axes dropped
      {{4, 200, 3}, {2, 0, 1}},
      {{1}, {0}},
      {{2, 3, 13, 11}, {0, 2, 3, 1}},  // RGB NCHW -> NHWC: rows of 3 gathered whole
      {{5, 7, 2, 9}, {0, 1, 3, 2}},    // a channel shuffle of 2 groups: rows of 2
      {{3, 5, 2, 37}, {0, 1, 3, 2}},   // the same with whole vectors interleaved, and a tail
      {{1, 4, 6, 5}, {0, 2, 3, 1}},    // rows of 4
      {{3, 5, 17}, {0, 2, 1}},         // rows of 5: tiles again
      // Rows split into blocks copied as tasks of their own (threads share an image's transpose).
      {{1, 3, 64, 80}, {0, 2, 3, 1}},  // 5,120 rows of 3 in 4 blocks of 1,280
      {{2, 3, 48, 48}, {0, 2, 3, 1}},  // and a batch
      {{1, 2, 8192}, {0, 2, 1}},       // rows of 2, interleaved a vector at a time, 4 blocks
      {{1, 3, 37, 41}, {0, 2, 3, 1}},  // 1,517 rows: no divisor gives 4-16 KiB blocks, one piece
      {{1, 8, 50, 40}, {0, 2, 3, 1}},  // rows of 8: 16x16 tiles within blocks
  };
  for (const auto& [shape, perm] : cases) {
    INFO("shape " << shape.to_string());
    check_against_ref<ops::Transpose, TestType>({perm}, {random_f32(shape, shape.rank())}, 0, 0);
  }
}

TEMPLATE_LIST_TEST_CASE("Transpose moves Signed32 data on every backend", "[ops][transpose]", accelerated_backends) {
  std::vector<std::int32_t> values(3 * 5 * 7);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i * 7919 % 1000) - 500;
  check_against_ref<ops::Transpose, TestType>({{2, 0, 1}}, {TestTensor::i32({3, 5, 7}, values)}, 0, 0);
}

TEMPLATE_LIST_TEST_CASE("Transpose moves 1- and 2-byte data on every backend", "[ops][transpose]",
                        accelerated_backends) {
  const std::vector<std::pair<TensorShape, std::vector<std::uint32_t>>> cases = {
      {{2, 3, 13, 11}, {0, 2, 3, 1}}, {{5, 7, 2, 9}, {0, 1, 3, 2}}, {{1, 7, 9, 17}, {0, 3, 1, 2}}};
  for (DataType type : {DataType::QAsymmU8, DataType::Float16}) {
    for (const auto& [shape, perm] : cases) {
      INFO("type " << to_string(type) << ", shape " << shape.to_string());
      std::vector<std::byte> values(shape.num_elements() * size_of(type));
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::byte>(i * 131 % 251);
      const QuantizationInfo quantization = is_quantized(type) ? QuantizationInfo{{0.5f}, 3, {}} : QuantizationInfo{};
      const auto input = TestTensor::make(TensorInfo{shape, type, quantization}, values.data(), values.size());
      auto expected = run_op<ops::Transpose, RefBackend>({perm}, {input});
      std::string_view owner;
      auto actual = run_op<ops::Transpose, TestType>({perm}, {input}, 1, &owner);
      if (!expected) FAIL(expected.status().message());
      if (!actual) FAIL(actual.status().message());
      CHECK(owner == TestType::id);
      const bool same_bytes = (*actual)[0].bytes == (*expected)[0].bytes;
      CHECK(same_bytes);
    }
  }
}
