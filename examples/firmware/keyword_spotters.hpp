// SPDX-License-Identifier: Apache-2.0
// The two keyword spotters the firmware and its host tests run, each a header `kiln compile` wrote
// with the test case it is checked on: DS-CNN in Float32 against PyTorch's scores, and the same
// network quantised to int8 by `kiln quantize` against ONNX Runtime's scores on that int8 model
// (tests/fixtures/quantized/ds_cnn_kiln_s8, tools/make_qdq_fixtures.py).
#pragma once

#include <cmath>

#include "ds_cnn.hpp"
#include "ds_cnn_int8.hpp"
#include "ds_cnn_int8_test_data.hpp"
#include "ds_cnn_test_data.hpp"

struct Float32Spotter {
  static constexpr const char* name = "DS-CNN (Float32)";
  static constexpr const char* reference = "PyTorch";
  template <class Backend>
  using Model = ds_cnn::Model<Backend>;
  using Ops = ds_cnn::Ops;
  static constexpr auto& layers = ds_cnn::layers;
  static constexpr auto& tensors = ds_cnn::tensors;
  static constexpr auto arena_bytes = ds_cnn::arena_bytes;
  static constexpr auto arena_lower_bound = ds_cnn::arena_lower_bound;
  static constexpr auto& input = ds_cnn_test_data::input;
  static constexpr auto& expected = ds_cnn_test_data::expected_output;
  /// The tolerance of `kiln check`.
  static bool agrees(float score, float expected) {
    return std::fabs(score - expected) <= 1e-4f + 1e-3f * std::fabs(expected);
  }
};

struct Int8Spotter {
  static constexpr const char* name = "DS-CNN (int8)";
  static constexpr const char* reference = "ONNX Runtime";
  template <class Backend>
  using Model = ds_cnn_int8::Model<Backend>;
  using Ops = ds_cnn_int8::Ops;
  static constexpr auto& layers = ds_cnn_int8::layers;
  static constexpr auto& tensors = ds_cnn_int8::tensors;
  static constexpr auto arena_bytes = ds_cnn_int8::arena_bytes;
  static constexpr auto arena_lower_bound = ds_cnn_int8::arena_lower_bound;
  static constexpr auto& input = ds_cnn_int8_test_data::input;
  static constexpr auto& expected = ds_cnn_int8_test_data::expected_output;
  /// The int8 scores the output's Dequantize reads.
  static constexpr const kiln::StaticTensor& logits = ds_cnn_int8::tensors[34];
  static_assert(logits.type == kiln::DataType::QAsymmS8 && logits.shape == kiln::TensorShape{1, 12},
                "ds_cnn_int8.hpp numbers its tensors otherwise: point `logits` at the input of its Dequantize");
  /// Within one unit of the int8 scores: decision 0014 lets a requantization round a tie the other way.
  static bool agrees(float score, float expected) {
    return std::fabs(score - expected) <= logits.quantization.scale * 1.001f;
  }
};
