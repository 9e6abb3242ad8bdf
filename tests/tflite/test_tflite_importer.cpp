// SPDX-License-Identifier: Apache-2.0
// The TensorFlow Lite importer on models built here with FlatBuffers (the schema kiln compiles,
// src/import/tflite/tflite_subset.fbs) against hand-computed values, and on files that must be
// refused with a message naming what is wrong. The converted models of tools/make_tflite_fixtures.py
// are checked against LiteRT by `kiln check` (tests/meson.build).
#include <cstring>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <catch2/catch.hpp>
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/import/tflite.hpp>
#include <kiln/runtime/runtime.hpp>

#include "tflite_subset_generated.h"

namespace {

namespace format = kiln::tflite::format;
using flatbuffers::Offset;

/// A one-subgraph model, built tensor by tensor and operator by operator.
class ModelBuilder {
 public:
  /// Adds a tensor; `data`, when given, is its constant value (in a buffer of its own).
  int tensor(const std::string& name, std::vector<int> shape, format::TensorType type = format::TensorType::FLOAT32,
             const std::vector<float>& data = {}) {
    std::uint32_t buffer = 0;
    if (!data.empty()) {
      auto bytes = fbb_.CreateVector(reinterpret_cast<const std::uint8_t*>(data.data()), data.size() * 4);
      buffers_.push_back(format::CreateBuffer(fbb_, bytes));
      buffer = static_cast<std::uint32_t>(buffers_.size() - 1);
    }
    return tensor_in_buffer(name, std::move(shape), type, buffer);
  }
  /// A quantised tensor (one scale and zero point); `bytes`, when given, is its constant value.
  int quantized(const std::string& name, std::vector<int> shape, format::TensorType type, float scale,
                std::int64_t zero_point, const std::vector<std::uint8_t>& bytes = {}) {
    std::uint32_t buffer = 0;
    if (!bytes.empty()) {
      buffers_.push_back(format::CreateBuffer(fbb_, fbb_.CreateVector(bytes)));
      buffer = static_cast<std::uint32_t>(buffers_.size() - 1);
    }
    auto q = format::CreateQuantizationParameters(fbb_, 0, 0, fbb_.CreateVector(std::vector<float>{scale}),
                                                  fbb_.CreateVector(std::vector<std::int64_t>{zero_point}));
    tensors_.push_back(format::CreateTensor(fbb_, fbb_.CreateVector(shape), type, buffer, fbb_.CreateString(name), q));
    return static_cast<int>(tensors_.size() - 1);
  }
  /// An INT32 constant.
  int ints(const std::string& name, std::vector<int> shape, const std::vector<std::int32_t>& values) {
    std::vector<float> bits(values.size());
    std::memcpy(bits.data(), values.data(), values.size() * 4);
    return tensor(name, std::move(shape), format::TensorType::INT32, bits);
  }
  int tensor_in_buffer(const std::string& name, std::vector<int> shape, format::TensorType type, std::uint32_t buffer) {
    tensors_.push_back(format::CreateTensor(fbb_, fbb_.CreateVector(shape), type, buffer, fbb_.CreateString(name)));
    return static_cast<int>(tensors_.size() - 1);
  }
  void op(format::BuiltinOperator code, std::vector<int> inputs, std::vector<int> outputs,
          format::BuiltinOptions options_type = format::BuiltinOptions::NONE, Offset<void> options = 0) {
    codes_.push_back(
        format::CreateOperatorCode(fbb_, static_cast<std::int8_t>(std::min<int>(int(code), 127)), 0, 1, code));
    operators_.push_back(format::CreateOperator(fbb_, static_cast<std::uint32_t>(codes_.size() - 1),
                                                fbb_.CreateVector(inputs), fbb_.CreateVector(outputs), options_type,
                                                options));
  }
  flatbuffers::FlatBufferBuilder& fbb() { return fbb_; }

  std::vector<std::byte> finish(std::vector<int> inputs, std::vector<int> outputs) {
    auto graph = format::CreateSubGraph(fbb_, fbb_.CreateVector(tensors_), fbb_.CreateVector(inputs),
                                        fbb_.CreateVector(outputs), fbb_.CreateVector(operators_));
    std::vector<Offset<format::SubGraph>> graphs{graph};
    auto model = format::CreateModel(fbb_, 3, fbb_.CreateVector(codes_), fbb_.CreateVector(graphs),
                                     fbb_.CreateString("kiln test"), fbb_.CreateVector(buffers_));
    format::FinishModelBuffer(fbb_, model);
    const auto* data = reinterpret_cast<const std::byte*>(fbb_.GetBufferPointer());
    return {data, data + fbb_.GetSize()};
  }

 private:
  flatbuffers::FlatBufferBuilder fbb_;
  std::vector<Offset<format::Tensor>> tensors_;
  std::vector<Offset<format::Buffer>> buffers_{format::CreateBuffer(fbb_)};  // buffer 0: the format's empty one
  std::vector<Offset<format::Operator>> operators_;
  std::vector<Offset<format::OperatorCode>> codes_;
};

/// Runs an imported one-input, one-output Float32 model on RefBackend.
std::vector<float> run(kiln::ImportedModel& model, const std::vector<float>& x) {
  using Runtime = kiln::Runtime<kiln::RefBackend>;
  auto optimized = Runtime::optimize(std::move(model.network));
  REQUIRE(optimized);
  Runtime runtime;
  auto id = runtime.load(std::move(*optimized));
  REQUIRE(id);
  std::vector<float> y(runtime.output_info(*id, 0)->num_elements());
  const kiln::InputBinding in[] = {{0, {*runtime.input_info(*id, 0), x.data()}}};
  const kiln::OutputBinding out[] = {{0, {*runtime.output_info(*id, 0), y.data()}}};
  REQUIRE(runtime.enqueue(*id, in, out));
  return y;
}

}  // namespace

TEST_CASE("A TensorFlow Lite ADD with a fused ReLU and a constant operand imports and runs", "[tflite]") {
  ModelBuilder b;
  const int x = b.tensor("x", {1, 2, 2, 1});
  const int c = b.tensor("c", {1, 1, 1, 1}, format::TensorType::FLOAT32, {-1.5f});  // broadcast
  const int y = b.tensor("y", {1, 2, 2, 1});
  b.op(format::BuiltinOperator::ADD, {x, c}, {y}, format::BuiltinOptions::AddOptions,
       format::CreateAddOptions(b.fbb(), format::ActivationFunctionType::RELU).Union());
  auto model = kiln::tflite::import_model(b.finish({x}, {y}));
  REQUIRE(model);
  CHECK(model->inputs.size() == 1);
  CHECK(model->inputs[0].name == "x");
  CHECK(model->outputs[0].info.shape == kiln::TensorShape{1, 2, 2, 1});
  CHECK(model->producer == "kiln test");
  CHECK(model->network.arithmetic() == kiln::QuantizedArithmetic::TfLite);  // decision 0023
  CHECK(run(*model, {1, 2, 3, -4}) == std::vector<float>{0, 0.5f, 1.5f, 0});
}

TEST_CASE("A TensorFlow Lite model imports from bytes at any alignment", "[tflite]") {
  // Aligned bytes are read in place; others are copied where FlatBuffers can read their scalars.
  ModelBuilder b;
  const int x = b.tensor("x", {1, 2, 2, 1});
  const int c = b.tensor("c", {1, 1, 1, 1}, format::TensorType::FLOAT32, {2.0f});
  const int y = b.tensor("y", {1, 2, 2, 1});
  b.op(format::BuiltinOperator::MUL, {x, c}, {y}, format::BuiltinOptions::MulOptions,
       format::CreateMulOptions(b.fbb()).Union());
  const std::vector<std::byte> bytes = b.finish({x}, {y});
  std::vector<std::byte> shifted(bytes.size() + 16);
  for (std::size_t offset : {0, 1, 3, 8}) {
    INFO("offset " << offset);
    std::copy(bytes.begin(), bytes.end(), shifted.begin() + static_cast<std::ptrdiff_t>(offset));
    auto model = kiln::tflite::import_model(std::span(shifted).subspan(offset, bytes.size()));
    REQUIRE(model);
    CHECK(run(*model, {1, -2, 3.5f, 0}) == std::vector<float>{2, -4, 7, 0});
  }
}

TEST_CASE("A TensorFlow Lite CONV_2D with SAME padding pads as TensorFlow does", "[tflite]") {
  // A 3x3 window of ones at stride 2 over a 5x5 input of ones: SAME pads one row and column on each
  // side (out = ceil(5 / 2) = 3; (3 - 1) x 2 + 3 - 5 = 2 to share), so each output counts the
  // input positions its window covers: 4 at the corners, 6 on the edges, 9 in the middle; plus the bias.
  ModelBuilder b;
  const int x = b.tensor("x", {1, 5, 5, 1});
  const int w = b.tensor("w", {1, 3, 3, 1}, format::TensorType::FLOAT32, std::vector<float>(9, 1.0f));
  const int bias = b.tensor("bias", {1}, format::TensorType::FLOAT32, {0.5f});
  const int y = b.tensor("y", {1, 3, 3, 1});
  b.op(format::BuiltinOperator::CONV_2D, {x, w, bias}, {y}, format::BuiltinOptions::Conv2DOptions,
       format::CreateConv2DOptions(b.fbb(), format::Padding::SAME, 2, 2).Union());
  auto model = kiln::tflite::import_model(b.finish({x}, {y}));
  REQUIRE(model);
  CHECK(run(*model, std::vector<float>(25, 1.0f)) ==
        std::vector<float>{4.5f, 6.5f, 4.5f, 6.5f, 9.5f, 6.5f, 4.5f, 6.5f, 4.5f});
}

TEST_CASE("A TensorFlow Lite FULLY_CONNECTED reads its input as rows and gives the model's output shape", "[tflite]") {
  ModelBuilder b;
  const int x = b.tensor("x", {1, 2, 1, 2});  // read as one row of 4
  const int w = b.tensor("w", {2, 4}, format::TensorType::FLOAT32, {1, 0, 0, 0, 1, 1, 1, 1});
  const int y = b.tensor("y", {1, 2});
  b.op(format::BuiltinOperator::FULLY_CONNECTED, {x, w, -1}, {y}, format::BuiltinOptions::FullyConnectedOptions,
       format::CreateFullyConnectedOptions(b.fbb()).Union());
  auto model = kiln::tflite::import_model(b.finish({x}, {y}));
  REQUIRE(model);
  CHECK(run(*model, {3, -1, 2, 5}) == std::vector<float>{3, 9});
}

TEST_CASE("A TensorFlow Lite STRIDED_SLICE takes its masks, a negative stride and a shrunk axis as TensorFlow does",
          "[tflite]") {
  // Row 1 of a 3x4 matrix (the shrink mask drops axis 0), its columns from the last to the first
  // (begin and end masked on axis 1) two at a time: 7, 5.
  ModelBuilder b;
  const int x = b.tensor("x", {3, 4});
  const int begin = b.ints("begin", {2}, {1, 0}), end = b.ints("end", {2}, {0, 0});
  const int strides = b.ints("strides", {2}, {1, -2});
  const int y = b.tensor("y", {2});
  b.op(format::BuiltinOperator::STRIDED_SLICE, {x, begin, end, strides}, {y},
       format::BuiltinOptions::StridedSliceOptions,
       format::CreateStridedSliceOptions(b.fbb(), 0b10, 0b10, 0, 0, 0b01).Union());
  auto model = kiln::tflite::import_model(b.finish({x}, {y}));
  REQUIRE(model);
  CHECK(run(*model, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}) == std::vector<float>{7, 5});
}

TEST_CASE("A TensorFlow Lite TRANSPOSE_CONV makes the output shape it is given", "[tflite]") {
  // A 2x2 input through a 2x2 window of ones at stride 2, VALID: each input fills a 2x2 block of
  // a 4x4 output; the model asks for 5x5, so the last row and column are zeros (kiln's output
  // padding), and the bias adds 0.5 everywhere.
  ModelBuilder b;
  const int shape = b.ints("shape", {4}, {1, 5, 5, 1});
  const int w = b.tensor("w", {1, 2, 2, 1}, format::TensorType::FLOAT32, std::vector<float>(4, 1.0f));
  const int x = b.tensor("x", {1, 2, 2, 1});
  const int bias = b.tensor("bias", {1}, format::TensorType::FLOAT32, {0.5f});
  const int y = b.tensor("y", {1, 5, 5, 1});
  b.op(format::BuiltinOperator::TRANSPOSE_CONV, {shape, w, x, bias}, {y}, format::BuiltinOptions::TransposeConvOptions,
       format::CreateTransposeConvOptions(b.fbb(), format::Padding::VALID, 2, 2).Union());
  auto model = kiln::tflite::import_model(b.finish({x}, {y}));
  REQUIRE(model);
  // clang-format off
  CHECK(run(*model, {1, 2, 3, 4}) == std::vector<float>{1.5f, 1.5f, 2.5f, 2.5f, 0.5f,
                                                         1.5f, 1.5f, 2.5f, 2.5f, 0.5f,
                                                         3.5f, 3.5f, 4.5f, 4.5f, 0.5f,
                                                         3.5f, 3.5f, 4.5f, 4.5f, 0.5f,
                                                         0.5f, 0.5f, 0.5f, 0.5f, 0.5f});
  // clang-format on
}

TEST_CASE("A legacy uint8 TensorFlow Lite CONV_2D, weights with a zero point, runs in Float32 between conversions",
          "[tflite]") {
  // x = 2, -2 (uint8 132, 124 at 0.5, zero point 128); the weight 0.5 (130 at 0.25, zero point 128)
  // and the bias 0.5 (4 at 0.125): 1.5 and -0.5, which the output's uint8 (0.25, zero point 100)
  // holds exactly as 106 and 98.
  ModelBuilder b;
  using T = format::TensorType;
  const int x = b.tensor("x", {1, 1, 2, 1});
  const int xq = b.quantized("xq", {1, 1, 2, 1}, T::UINT8, 0.5f, 128);
  const int w = b.quantized("w", {1, 1, 1, 1}, T::UINT8, 0.25f, 128, {130});
  const std::int32_t bias_value = 4;
  std::vector<std::uint8_t> bias_bytes(4);
  std::memcpy(bias_bytes.data(), &bias_value, 4);
  const int bias = b.quantized("bias", {1}, T::INT32, 0.125f, 0, bias_bytes);
  const int yq = b.quantized("yq", {1, 1, 2, 1}, T::UINT8, 0.25f, 100);
  const int y = b.tensor("y", {1, 1, 2, 1});
  b.op(format::BuiltinOperator::QUANTIZE, {x}, {xq});
  b.op(format::BuiltinOperator::CONV_2D, {xq, w, bias}, {yq}, format::BuiltinOptions::Conv2DOptions,
       format::CreateConv2DOptions(b.fbb(), format::Padding::VALID, 1, 1).Union());
  b.op(format::BuiltinOperator::DEQUANTIZE, {yq}, {y});
  auto model = kiln::tflite::import_model(b.finish({x}, {y}));
  REQUIRE(model);
  CHECK(run(*model, {2.0f, -2.0f}) == std::vector<float>{1.5f, -0.5f});
}

TEST_CASE("A TensorFlow Lite SPLIT gives each part, and operators nothing reads are left out", "[tflite]") {
  // The model's output is the second half of the split; the first half feeds an operator kiln does
  // not read (SHAPE, 77), whose result nothing reads: it is left out, not refused.
  ModelBuilder b;
  const int axis = b.ints("axis", {}, {1});
  const int x = b.tensor("x", {2, 4});
  const int first = b.tensor("first", {2, 2}), second = b.tensor("second", {2, 2});
  const int shape = b.tensor("shape", {2}, format::TensorType::INT32);
  b.op(format::BuiltinOperator::SPLIT, {axis, x}, {first, second}, format::BuiltinOptions::SplitOptions,
       format::CreateSplitOptions(b.fbb(), 2).Union());
  b.op(format::BuiltinOperator(77), {first}, {shape});
  auto model = kiln::tflite::import_model(b.finish({x}, {second}));
  REQUIRE(model);
  CHECK(model->num_unused == 1);
  CHECK(run(*model, {0, 1, 2, 3, 4, 5, 6, 7}) == std::vector<float>{2, 3, 6, 7});
}

TEST_CASE("TensorFlow Lite files kiln cannot read are refused with what is wrong", "[tflite][errors]") {
  auto add_model = [](std::uint32_t buffer_of_b, format::BuiltinOperator code, std::vector<int> y_shape) {
    ModelBuilder b;
    const int a = b.tensor("a", {1, 2});
    const int c = b.tensor_in_buffer("b", {1, 2}, format::TensorType::FLOAT32, buffer_of_b);
    const int y = b.tensor("y", std::move(y_shape));
    b.op(code, {a, c}, {y}, format::BuiltinOptions::AddOptions, format::CreateAddOptions(b.fbb()).Union());
    return b.finish({a}, {y});
  };
  const std::vector<std::byte> good = add_model(0, format::BuiltinOperator::ADD, {1, 2});

  SECTION("not a model") {
    const std::vector<std::byte> text(64, std::byte{'x'});
    CHECK_THAT(kiln::tflite::import_model(text).status().message(), Catch::Contains("not a TensorFlow Lite model"));
  }
  SECTION("truncated") {
    const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
    CHECK_THAT(kiln::tflite::import_model(cut).status().message(), Catch::Contains("does not verify"));
  }
  SECTION("a buffer out of range") {
    CHECK(kiln::tflite::import_model(add_model(7, format::BuiltinOperator::ADD, {1, 2})).status().message() ==
          "operator 0 (ADD): tensor 'b' reads buffer 7; the model has 1");
  }
  SECTION("an operand that nothing computes") {
    CHECK(kiln::tflite::import_model(good).status().message() ==
          "operator 0 (ADD): input 1 (tensor 'b') is neither a model input, a constant, nor the output of an "
          "earlier operator");
  }
  SECTION("an operator kiln does not read") {
    CHECK_THAT(kiln::tflite::import_model(add_model(0, format::BuiltinOperator(53), {1, 2})).status().message(),
               Catch::StartsWith("operator 0: builtin operator 53 (BuiltinOperator in TensorFlow Lite's schema.fbs) "
                                 "is not one kiln reads"));
  }
  SECTION("shapes that do not agree") {
    ModelBuilder b;
    const int a = b.tensor("a", {1, 2});
    const int y = b.tensor("y", {1, 3});
    b.op(format::BuiltinOperator::RELU, {a}, {y});
    CHECK(kiln::tflite::import_model(b.finish({a}, {y})).status().message() ==
          "operator 0 (RELU): kiln computes output 0 as Float32 [1, 2]; the model says Float32 [1, 3]");
  }
  SECTION("a split into more parts than outputs") {
    ModelBuilder b;
    const int axis = b.ints("axis", {}, {0});
    const int x = b.tensor("x", {6});
    const int y = b.tensor("y", {3});
    b.op(format::BuiltinOperator::SPLIT, {axis, x}, {y}, format::BuiltinOptions::SplitOptions,
         format::CreateSplitOptions(b.fbb(), 2).Union());
    CHECK(kiln::tflite::import_model(b.finish({x}, {y})).status().message() ==
          "operator 0 (SPLIT): splits into 2 parts but has 1 outputs");
  }
  SECTION("a transposed convolution that cannot make the output shape it is given") {
    ModelBuilder b;
    const int shape = b.ints("shape", {4}, {1, 7, 4, 1});
    const int w = b.tensor("w", {1, 2, 2, 1}, format::TensorType::FLOAT32, std::vector<float>(4, 1.0f));
    const int x = b.tensor("x", {1, 2, 2, 1});
    const int y = b.tensor("y", {1, 7, 4, 1});
    b.op(format::BuiltinOperator::TRANSPOSE_CONV, {shape, w, x}, {y}, format::BuiltinOptions::TransposeConvOptions,
         format::CreateTransposeConvOptions(b.fbb(), format::Padding::VALID, 2, 2).Union());
    CHECK(kiln::tflite::import_model(b.finish({x}, {y})).status().message() ==
          "operator 0 (TRANSPOSE_CONV): makes 7 outputs on axis 1 from 2 inputs with a window of 2 at stride 2; they "
          "make 4 to 5");
  }
  SECTION("an operator without its options") {
    ModelBuilder b;
    const int x = b.tensor("x", {1, 4, 4, 1});
    const int y = b.tensor("y", {1, 2, 2, 1});
    b.op(format::BuiltinOperator::MAX_POOL_2D, {x}, {y});
    CHECK(kiln::tflite::import_model(b.finish({x}, {y})).status().message() ==
          "operator 0 (MAX_POOL_2D): has no kiln.tflite.format.Pool2DOptions (its builtin_options are missing or of "
          "another table)");
  }
}

TEST_CASE("The TensorFlow Lite importer names the operators it reads", "[tflite]") {
  const auto ops = kiln::tflite::supported_ops();
  CHECK(std::is_sorted(ops.begin(), ops.end()));
  CHECK(std::find(ops.begin(), ops.end(), "DEPTHWISE_CONV_2D") != ops.end());
}
