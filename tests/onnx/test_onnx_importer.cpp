// SPDX-License-Identifier: Apache-2.0
// The ONNX importer on hand-built models with hand-computed results, its errors, and every kind of
// broken file; the tensor file formats it reads and writes.
#include <catch2/catch.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>

#include <onnx/onnx_pb.h>

#include <kiln/import/onnx.hpp>
#include <kiln/kiln.hpp>

using namespace kiln;

namespace {

/// Builds an ONNX model with protobuf's own API, independent of the importer's reading code.
class ModelBuilder {
 public:
  explicit ModelBuilder(std::int64_t opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("kiln tests");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
  }
  ModelBuilder& input(const std::string& name, std::vector<std::int64_t> dims, int type = ::onnx::TensorProto::FLOAT) {
    auto* value = model_.mutable_graph()->add_input();
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(type);
    for (auto d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
    return *this;
  }
  /// An input whose dimensions are named ("batch"), fixed ("4") or unknown ("?", neither).
  ModelBuilder& dynamic_input(const std::string& name, std::vector<std::string> dims = {"batch", "4"}) {
    auto* value = model_.mutable_graph()->add_input();
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(::onnx::TensorProto::FLOAT);
    for (const auto& d : dims) {
      auto* dim = tensor->mutable_shape()->add_dim();
      if (d == "?") continue;
      if (std::isdigit(static_cast<unsigned char>(d[0])))
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
    return *this;
  }
  ModelBuilder& initializer(const std::string& name, std::vector<std::int64_t> dims, std::vector<float> values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return *this;
  }
  /// An initializer of a 32-bit-or-narrower integer type (INT32, INT8, UINT8): ONNX keeps them in int32_data.
  ModelBuilder& narrow_initializer(const std::string& name, int type, std::vector<std::int64_t> dims,
                                   std::vector<std::int32_t> values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_int32_data(v);
    return *this;
  }
  ModelBuilder& int_initializer(const std::string& name, std::vector<std::int64_t> values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_int64_data(v);
    return *this;
  }
  ::onnx::NodeProto& node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                          const std::string& name = {}) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + outputs[0] : name);
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    return *n;
  }
  ModelBuilder& output(const std::string& name) {
    model_.mutable_graph()->add_output()->set_name(name);
    return *this;
  }
  std::string bytes() const { return model_.SerializeAsString(); }
  Expected<kiln::onnx::ImportedModel> import(const kiln::onnx::ImportOptions& options = {}) const {
    const std::string b = bytes();
    return kiln::onnx::import_model(std::as_bytes(std::span(b.data(), b.size())), options);
  }

 private:
  ::onnx::ModelProto model_;
};

void set_ints(::onnx::NodeProto& node, const std::string& name, std::vector<std::int64_t> values) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (auto v : values) a->add_ints(v);
}
void set_int(::onnx::NodeProto& node, const std::string& name, std::int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(value);
}
void set_float(::onnx::NodeProto& node, const std::string& name, float value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(value);
}
void set_string(::onnx::NodeProto& node, const std::string& name, const std::string& value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(value);
}

/// Runs a model with one input and one output on RefBackend.
template <class Out = float, class In = float>
std::vector<Out> run(kiln::onnx::ImportedModel& model, const std::vector<In>& input) {
  auto optimized = optimize<RefBackend>(model.network);
  REQUIRE(optimized);
  Runtime<RefBackend> runtime;
  auto id = runtime.load(*optimized);
  REQUIRE(id);
  std::vector<Out> out(model.outputs.at(0).info.num_elements());
  const InputBinding in[] = {{0, {model.inputs.at(0).info, input.data()}}};
  const OutputBinding outs[] = {{0, {model.outputs.at(0).info, out.data()}}};
  REQUIRE(runtime.enqueue(*id, in, outs));
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("ONNX Conv in NCHW with bias: hand-computed, and the user sees NCHW", "[onnx]") {
  ModelBuilder m;
  m.input("x", {1, 1, 3, 3}).initializer("w", {1, 1, 2, 2}, {1, 1, 1, 1}).initializer("b", {1}, {1});
  m.node("Conv", {"x", "w", "b"}, {"y"});
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(model->inputs[0].info.shape == TensorShape{1, 1, 3, 3});
  CHECK(model->outputs[0].info.shape == TensorShape{1, 1, 2, 2});
  // 2x2 window sums of 1..9, plus 1.
  CHECK(run(*model, {1, 2, 3, 4, 5, 6, 7, 8, 9}) == std::vector<float>{13, 17, 25, 29});
}

TEST_CASE("ONNX Conv with two channels keeps NCHW order at the output", "[onnx]") {
  // Output channel 0 copies input channel 1, output channel 1 doubles input channel 0 (1x1 kernels).
  ModelBuilder m;
  m.input("x", {1, 2, 1, 2}).initializer("w", {2, 2, 1, 1}, {0, 1, 2, 0});
  m.node("Conv", {"x", "w"}, {"y"});
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(run(*model, {1, 2, 3, 4}) == std::vector<float>{3, 4, 2, 4});
}

TEST_CASE("ONNX Gemm with transA, alpha, beta and a bias vector", "[onnx]") {
  // A^T = [[1, 2, 3], [4, 5, 6]], B = [[1, 0], [0, 1], [1, 1]]: A^T B = [[4, 5], [10, 11]].
  // Y = 2 * A^T B + 0.5 * [10, 20] = [[13, 20], [25, 32]].
  ModelBuilder m;
  m.input("a", {3, 2}).initializer("b", {3, 2}, {1, 0, 0, 1, 1, 1}).initializer("c", {2}, {10, 20});
  auto& gemm = m.node("Gemm", {"a", "b", "c"}, {"y"});
  set_int(gemm, "transA", 1);
  set_float(gemm, "alpha", 2.0f);
  set_float(gemm, "beta", 0.5f);
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(run(*model, {1, 4, 2, 5, 3, 6}) == std::vector<float>{13, 20, 25, 32});
}

TEST_CASE("ONNX QLinearConv on a uint8 graph input: hand-computed, one int8 layer", "[onnx][quantized]") {
  // x = (q - 10) x 0.5 = [-5, 0.5, 5, 122.5]; per-channel int8 weights 2 x 0.25 = 0.5 and -3 x 0.125 =
  // -0.375, int32 biases 4 and -8 at scale 0.5 x weight scale = 0.5 and -0.5; y = q x 0.2 + 5, saturated:
  // channel 0: 0.5 x + 0.5 = [-2, 0.75, 3, 61.75] -> [-10, 3.75, 15, 308.75] + 5 -> [0, 9, 20, 255];
  // channel 1: -0.375 x - 0.5 = [1.375, -0.6875, -2.375, -46.4375] -> [7, -3, -12, -232] + 5 -> [12, 2, 0, 0].
  ModelBuilder m;
  m.input("x", {1, 1, 2, 2}, ::onnx::TensorProto::UINT8)
      .initializer("x_scale", {}, {0.5f})
      .narrow_initializer("x_zero", ::onnx::TensorProto::UINT8, {}, {10})
      .narrow_initializer("w", ::onnx::TensorProto::INT8, {2, 1, 1, 1}, {2, -3})
      .initializer("w_scale", {2}, {0.25f, 0.125f})
      .narrow_initializer("w_zero", ::onnx::TensorProto::INT8, {2}, {0, 0})
      .initializer("y_scale", {}, {0.2f})
      .narrow_initializer("y_zero", ::onnx::TensorProto::UINT8, {}, {5})
      .narrow_initializer("b", ::onnx::TensorProto::INT32, {2}, {4, -8});
  m.node("QLinearConv", {"x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero", "b"}, {"y"}, "qconv");
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(model->inputs[0].info == TensorInfo{TensorShape{1, 1, 2, 2}, DataType::QAsymmU8, kiln::onnx::raw_integers()});
  CHECK(model->outputs[0].info.type == DataType::QAsymmU8);
  CHECK(model->outputs[0].info.quantization == QuantizationInfo{{0.2f}, 5, {}});
  CHECK(run<std::uint8_t, std::uint8_t>(*model, {0, 11, 20, 255}) ==
        std::vector<std::uint8_t>{0, 9, 20, 255, 12, 2, 0, 0});
  auto optimized = optimize<RefBackend>(model->network);
  REQUIRE(optimized);
  const Network& net = optimized->network();
  std::size_t int8_convolutions = 0, conversions = 0;
  for (LayerId id : optimized->execution_order()) {
    const Layer& layer = net.layer(id);
    int8_convolutions += layer.is<ops::Convolution2d>() && net.tensor_info({id, 0}).type == DataType::QAsymmU8;
    conversions += layer.is<ops::Quantize>() || layer.is<ops::Dequantize>() ? 1 : 0;
  }
  CHECK(int8_convolutions == 1);
  CHECK(conversions == 0);
}

TEST_CASE("ONNX Pad of an 8-bit tensor pads with the integer it is given", "[onnx][quantized]") {
  // As ONNX Runtime's QOperator models pad: x quantised at 0.5, zero point 10, padded with the zero
  // point's integer 10 (real 0) and, on a raw uint8 input, with 7.
  ModelBuilder m(13);
  m.input("x", {1, 2}).initializer("scale", {}, {0.5f});
  m.narrow_initializer("zero", ::onnx::TensorProto::UINT8, {}, {10});
  m.int_initializer("pads", {0, 1, 0, 2});
  m.node("QuantizeLinear", {"x", "scale", "zero"}, {"q"});
  m.node("Pad", {"q", "pads", "zero"}, {"padded"});
  m.node("DequantizeLinear", {"padded", "scale", "zero"}, {"y"});
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(run(*model, {1.5f, -2}) == std::vector<float>{0, 1.5f, -2, 0, 0});

  ModelBuilder raw(13);
  raw.input("image", {3}, ::onnx::TensorProto::UINT8);
  raw.narrow_initializer("seven", ::onnx::TensorProto::UINT8, {}, {7});
  raw.int_initializer("pads", {2, 1});
  raw.node("Pad", {"image", "pads", "seven"}, {"padded"});
  raw.output("padded");
  auto padded = raw.import();
  REQUIRE(padded);
  CHECK(run<std::uint8_t, std::uint8_t>(*padded, {0, 200, 255}) == std::vector<std::uint8_t>{7, 7, 0, 200, 255, 7});
}

TEST_CASE("ONNX uint8 graph input: Cast to float reads its integers", "[onnx][quantized]") {
  ModelBuilder m;
  m.input("image", {3}, ::onnx::TensorProto::UINT8).initializer("half", {}, {0.5f});
  set_int(m.node("Cast", {"image"}, {"real"}), "to", ::onnx::TensorProto::FLOAT);
  m.node("Mul", {"real", "half"}, {"y"});
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(run<float, std::uint8_t>(*model, {0, 7, 255}) == std::vector<float>{0, 3.5f, 127.5f});
}

namespace {
/// x, a graph input of ONNX type `from` and `length` elements, -> Cast(to) -> y.
Expected<kiln::onnx::ImportedModel> cast_model(int from, int to, std::int64_t length) {
  ModelBuilder m;
  m.input("x", {length}, from);
  set_int(m.node("Cast", {"x"}, {"y"}), "to", to);
  m.output("y");
  return m.import();
}
}  // namespace

TEST_CASE("ONNX Cast between 8-bit integers and float or int32 tensors the network computes", "[onnx][quantized]") {
  // Float to 8 bits truncates toward zero and saturates (NaN to 0); 8 bits to int32 is exact.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x{-3.7f, 2.9f, 300.0f, nan, -0.5f, -200.0f};
  for (const auto& [to, expected] : {std::pair{::onnx::TensorProto::UINT8, std::vector<int>{0, 2, 255, 0, 0, 0}},
                                     std::pair{::onnx::TensorProto::INT8, std::vector<int>{-3, 2, 127, 0, 0, -128}}}) {
    auto model = cast_model(::onnx::TensorProto::FLOAT, to, 6);
    REQUIRE(model);
    CHECK(model->outputs[0].info.quantization == kiln::onnx::raw_integers());
    const auto bytes = run<std::uint8_t>(*model, x);
    std::vector<int> values;
    for (std::uint8_t b : bytes)
      values.push_back(to == ::onnx::TensorProto::INT8 ? int{static_cast<std::int8_t>(b)} : int{b});
    CHECK(values == expected);
  }
  auto widened = cast_model(::onnx::TensorProto::UINT8, ::onnx::TensorProto::INT32, 3);
  REQUIRE(widened);
  CHECK(run<std::int32_t, std::uint8_t>(*widened, {0, 7, 255}) == std::vector<std::int32_t>{0, 7, 255});

  auto refused = cast_model(::onnx::TensorProto::INT32, ::onnx::TensorProto::UINT8, 3);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.status().message(), Catch::Contains("ONNX wraps integers around"));
}

TEST_CASE("ONNX ConvInteger and MatMulInteger: centred on their zero points, per channel and per row (hand-computed)",
          "[onnx][quantized]") {
  // x - 10 = [0, 2, 4, 10]; weights per output channel 3 - 1 = 2 and -1 - (-2) = 1.
  ModelBuilder conv(10);
  conv.input("x", {1, 1, 2, 2}, ::onnx::TensorProto::UINT8)
      .narrow_initializer("w", ::onnx::TensorProto::INT8, {2, 1, 1, 1}, {3, -1})
      .narrow_initializer("x_zero", ::onnx::TensorProto::UINT8, {}, {10})
      .narrow_initializer("w_zero", ::onnx::TensorProto::INT8, {2}, {1, -2});
  conv.node("ConvInteger", {"x", "w", "x_zero", "w_zero"}, {"y"});
  conv.output("y");
  auto convolution = conv.import();
  REQUIRE(convolution);
  CHECK(convolution->outputs[0].info.type == DataType::Signed32);
  CHECK(run<std::int32_t, std::uint8_t>(*convolution, {10, 12, 14, 20}) ==
        std::vector<std::int32_t>{0, 4, 8, 20, 0, 2, 4, 10});

  // A - [1, 7] per row = [[2, 4], [0, 2]]; B - [1, 0] per column = [[0, 2], [2, 4]].
  ModelBuilder matmul(10);
  matmul.input("a", {2, 2}, ::onnx::TensorProto::UINT8)
      .narrow_initializer("b", ::onnx::TensorProto::UINT8, {2, 2}, {1, 2, 3, 4})
      .narrow_initializer("a_zero", ::onnx::TensorProto::UINT8, {2}, {1, 7})
      .narrow_initializer("b_zero", ::onnx::TensorProto::UINT8, {2}, {1, 0});
  matmul.node("MatMulInteger", {"a", "b", "a_zero", "b_zero"}, {"y"});
  matmul.output("y");
  auto product = matmul.import();
  REQUIRE(product);
  CHECK(run<std::int32_t, std::uint8_t>(*product, {3, 5, 7, 9}) == std::vector<std::int32_t>{8, 20, 4, 8});
}

TEST_CASE("ONNX DynamicQuantizeLinear: the range widened to hold 0, and x all zeros (hand-computed)",
          "[onnx][quantized]") {
  ModelBuilder m(11);
  m.input("x", {3});
  m.node("DynamicQuantizeLinear", {"x"}, {"y", "y_scale", "y_zero_point"});
  m.output("y").output("y_scale").output("y_zero_point");
  auto model = m.import();
  REQUIRE(model);
  REQUIRE(model->outputs.size() == 3);
  CHECK(model->outputs[1].info == TensorInfo{TensorShape{}, DataType::Float32, {}});
  auto optimized = optimize<RefBackend>(model->network);
  REQUIRE(optimized);
  Runtime<RefBackend> runtime;
  auto id = runtime.load(*optimized);
  REQUIRE(id);
  auto quantize = [&](std::vector<float> x) {
    std::vector<std::uint8_t> y(3);
    float scale = 0;
    std::uint8_t zero_point = 0;
    const InputBinding in[] = {{0, {model->inputs[0].info, x.data()}}};
    const OutputBinding out[] = {{0, {model->outputs[0].info, y.data()}},
                                 {1, {model->outputs[1].info, &scale}},
                                 {2, {model->outputs[2].info, &zero_point}}};
    REQUIRE(runtime.enqueue(*id, in, out));
    return std::tuple{y, scale, int{zero_point}};
  };
  // [-1, 3]: scale 4 / 255, zero point rint(63.75) = 64; x / scale = -63.75, 31.875, 191.25.
  CHECK(quantize({-1.0f, 0.5f, 3.0f}) == std::tuple{std::vector<std::uint8_t>{0, 96, 255}, 4.0f / 255.0f, 64});
  // A range of 0 is taken as 1, as ONNX's reference does, not divided by.
  CHECK(quantize({0.0f, 0.0f, 0.0f}) == std::tuple{std::vector<std::uint8_t>{0, 0, 0}, 1.0f / 255.0f, 0});
}

TEST_CASE("ONNX shape arithmetic is folded at import", "[onnx]") {
  // x.view(x.size(0), -1) as PyTorch exports it: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
  ModelBuilder m;
  m.input("x", {2, 3, 4}).int_initializer("zero", {0}).int_initializer("minus_one", {-1});
  m.node("Shape", {"x"}, {"shape"});
  auto& gather = m.node("Gather", {"shape", "zero"}, {"batch"});
  set_int(gather, "axis", 0);
  auto& concat = m.node("Concat", {"batch", "minus_one"}, {"target"});
  set_int(concat, "axis", 0);
  m.node("Reshape", {"x", "target"}, {"y"});
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(model->num_folded == 3);
  CHECK(model->outputs[0].info.shape == TensorShape{2, 12});
  std::vector<float> x(24);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  CHECK(run(*model, x) == x);
}

std::size_t count_transposes(const Network& network) {
  std::size_t transposes = 0;
  for (LayerId id : network.execution_order()) transposes += network.layer(id).is<ops::Transpose>() ? 1 : 0;
  return transposes;
}

TEST_CASE("ONNX Transpose after a convolution: NCHW to NHWC is kiln's own layout, no layer", "[onnx]") {
  ModelBuilder m;
  m.input("x", {1, 2, 1, 2}).initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1});
  m.node("Conv", {"x", "w"}, {"c"});
  auto& t = m.node("Transpose", {"c"}, {"y"});
  set_ints(t, "perm", {0, 2, 3, 1});
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(model->outputs[0].info.shape == TensorShape{1, 1, 2, 2});
  // Input channel 0 = [1, 2], channel 1 = [3, 4]; NHWC interleaves them.
  CHECK(run(*model, {1, 2, 3, 4}) == std::vector<float>{1, 3, 2, 4});
  CHECK(count_transposes(model->network) == 1);  // only the input's NCHW -> NHWC
}

TEST_CASE("ONNX channel shuffle between convolutions stays channels-last: one transpose", "[onnx]") {
  // ShuffleNet's shuffle: Reshape [N, g, C/g, H, W] -> Transpose(0, 2, 1, 3, 4) -> Reshape [N, C, H, W].
  ModelBuilder m;
  std::vector<float> identity(16, 0.0f);
  for (int c = 0; c < 4; ++c) identity[static_cast<std::size_t>(c * 5)] = 1.0f;
  m.input("x", {1, 4, 1, 2}).initializer("w", {4, 4, 1, 1}, identity);
  m.int_initializer("split_shape", {1, 2, 2, 1, 2}).int_initializer("merged_shape", {1, 4, 1, 2});
  m.node("Conv", {"x", "w"}, {"c"});
  m.node("Reshape", {"c", "split_shape"}, {"groups"});
  set_ints(m.node("Transpose", {"groups"}, {"swapped"}), "perm", {0, 2, 1, 3, 4});
  m.node("Reshape", {"swapped", "merged_shape"}, {"shuffled"});
  m.node("Conv", {"shuffled", "w"}, {"y"});
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  // Channel k holds 10k + pixel; groups (0, 1) and (2, 3) interleave to channels 0, 2, 1, 3.
  CHECK(run(*model, {0, 1, 10, 11, 20, 21, 30, 31}) == std::vector<float>{0, 1, 20, 21, 10, 11, 30, 31});
  CHECK(count_transposes(model->network) == 3);  // the input's, the shuffle's, the output's
}

TEST_CASE("ONNX ReduceMean over H and W without keepdims reads channels-last directly", "[onnx]") {
  ModelBuilder m(18);
  m.input("x", {1, 2, 2, 2}).initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1}).int_initializer("axes", {2, 3});
  m.node("Conv", {"x", "w"}, {"c"});
  set_int(m.node("ReduceMean", {"c", "axes"}, {"y"}), "keepdims", 0);
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(model->outputs[0].info.shape == TensorShape{1, 2});
  CHECK(run(*model, {1, 2, 3, 6, 10, 20, 30, 40}) == std::vector<float>{3, 25});
  CHECK(count_transposes(model->network) == 1);  // only the input's NCHW -> NHWC
}

TEST_CASE("ONNX ReduceLogSumExp is shifted by the maximum: no overflow where exp(x) is inf in float", "[onnx]") {
  ModelBuilder m(13);
  m.input("x", {2, 3});
  set_ints(m.node("ReduceLogSumExp", {"x"}, {"y"}), "axes", {1});
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  // log(3 e^1000) = 1000 + log 3; log(e^-1000 + e^0 + e^1000) = 1000 + log(1 + e^-1000 + e^-2000) = 1000.
  const auto y = run(*model, std::vector<float>{1000, 1000, 1000, -1000, 0, 1000});
  REQUIRE(y.size() == 2);
  CHECK(y[0] == Approx(1001.0986123f));
  CHECK(y[1] == Approx(1000.0f));
}

TEST_CASE("ONNX Where, Trilu and Expand: a causal mask made at import and broadcast (hand-computed)", "[onnx]") {
  // scores [1, 3, 3]; mask = Trilu(ones [3, 3]) folds to a constant; Where(mask, scores, -100);
  // then Expand of a [3] row to [2, 3].
  ModelBuilder m(14);
  m.input("scores", {1, 3, 3}).input("row", {3});
  m.initializer("ones", {3, 3}, std::vector<float>(9, 1.0f)).initializer("floor", {}, {-100.0f});
  m.int_initializer("shape", {2, 3});
  set_int(m.node("Trilu", {"ones"}, {"lower"}), "upper", 0);
  set_int(m.node("Cast", {"lower"}, {"mask"}), "to", ::onnx::TensorProto::BOOL);
  m.node("Where", {"mask", "scores", "floor"}, {"masked"});
  m.node("Expand", {"row", "shape"}, {"rows"});
  m.output("masked").output("rows");
  auto model = m.import();
  REQUIRE(model);
  auto optimized = optimize<RefBackend>(model->network);
  REQUIRE(optimized);
  Runtime<RefBackend> runtime;
  auto id = runtime.load(*optimized);
  REQUIRE(id);
  const std::vector<float> scores{1, 2, 3, 4, 5, 6, 7, 8, 9}, row{1, 2, 3};
  std::vector<float> masked(9), rows(6);
  const InputBinding in[] = {{0, {model->inputs[0].info, scores.data()}}, {1, {model->inputs[1].info, row.data()}}};
  const OutputBinding out[] = {{0, {model->outputs[0].info, masked.data()}},
                               {1, {model->outputs[1].info, rows.data()}}};
  REQUIRE(runtime.enqueue(*id, in, out));
  CHECK(masked == std::vector<float>{1, -100, -100, 4, 5, -100, 7, 8, 9});
  CHECK(rows == std::vector<float>{1, 2, 3, 1, 2, 3});
}

TEST_CASE("ONNX GroupNormalization (opset 18): statistics per group of channels, scale and bias per group",
          "[onnx][normalization]") {
  ModelBuilder m(18);
  m.input("x", {1, 4, 2}).initializer("scale", {2}, {1, 2}).initializer("bias", {2}, {0, 1});
  auto& norm = m.node("GroupNormalization", {"x", "scale", "bias"}, {"y"});
  set_int(norm, "num_groups", 2);
  set_float(norm, "epsilon", 0.0f);
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  // Group 0 holds 1, 2, 3, 4: mean 2.5, variance 1.25, so (x - 2.5) / 1.1180340. Group 1 holds 10,
  // 10, 10, 14: mean 11, variance 3, so (x - 11) / 1.7320508, times 2, plus 1.
  const auto y = run(*model, std::vector<float>{1, 2, 3, 4, 10, 10, 10, 14});
  const std::vector<float> expected{-1.3416408f, -0.4472136f, 0.4472136f,  1.3416408f,
                                    -0.1547005f, -0.1547005f, -0.1547005f, 4.4641016f};
  REQUIRE(y.size() == expected.size());
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(expected[i]).margin(1e-6));
}

namespace {
/// Imports an Einsum of input x (dims `x_dims`) and, when `w_dims` is given, the initializer w of
/// values 1, 2, 3, ...; runs it on x = 0.5, 1.5, 2.5, ...
Expected<std::vector<float>> run_einsum(const std::string& equation, std::vector<std::int64_t> x_dims,
                                        std::vector<std::int64_t> w_dims = {}) {
  ModelBuilder m(12);
  m.input("x", x_dims);
  std::vector<std::string> inputs{"x"};
  if (!w_dims.empty()) {
    std::vector<float> w(
        static_cast<std::size_t>(std::accumulate(w_dims.begin(), w_dims.end(), std::int64_t{1}, std::multiplies<>())));
    std::iota(w.begin(), w.end(), 1.0f);
    m.initializer("w", w_dims, w);
    inputs.push_back("w");
  }
  set_string(m.node("Einsum", inputs, {"y"}), "equation", equation);
  m.output("y");
  auto model = m.import();
  if (!model) return model.status();
  std::vector<float> x(
      static_cast<std::size_t>(std::accumulate(x_dims.begin(), x_dims.end(), std::int64_t{1}, std::multiplies<>())));
  std::iota(x.begin(), x.end(), 0.5f);
  return run(*model, x);
}
}  // namespace

TEST_CASE("ONNX Einsum: batched products, transposes and sums as BatchMatMul, Transpose and Reduce", "[onnx][einsum]") {
  // bij,bjk->bik with x = [[0.5, 1.5, 2.5], [3.5, 4.5, 5.5]] per batch (then +6) and
  // w = [[1, 2], [3, 4], [5, 6]] (then +6): batch 0 row 0 is 0.5 + 4.5 + 12.5 = 17.5 and
  // 1 + 6 + 15 = 22, row 1 3.5 + 13.5 + 27.5 = 44.5 and 7 + 18 + 33 = 58.
  auto matmul = run_einsum("bij,bjk->bik", {2, 2, 3}, {2, 3, 2});
  REQUIRE(matmul);
  CHECK((*matmul)[0] == Approx(17.5f));
  CHECK((*matmul)[1] == Approx(22.0f));
  CHECK((*matmul)[2] == Approx(44.5f));
  CHECK((*matmul)[3] == Approx(58.0f));
  // Attention's scores with keys as rows, q [1, 2, 2, 3] . k [1, 2, 4, 3] over d, and the same with
  // an ellipsis for the batch and head dimensions: every entry the dot product of its rows.
  for (const char* equation : {"bhqd,bhkd->bhqk", "...qd,...kd->...qk"}) {
    INFO(equation);
    auto scores = run_einsum(equation, {1, 2, 2, 3}, {1, 2, 4, 3});
    REQUIRE(scores);
    REQUIRE(scores->size() == 16);
    for (int h = 0; h < 2; ++h)
      for (int q = 0; q < 2; ++q)
        for (int k = 0; k < 4; ++k) {
          float dot = 0.0f;
          for (int d = 0; d < 3; ++d) dot += (0.5f + float((h * 2 + q) * 3 + d)) * (1.0f + float((h * 4 + k) * 3 + d));
          CHECK((*scores)[std::size_t((h * 2 + q) * 4 + k)] == Approx(dot));
        }
  }
  // One operand: a transpose, a row sum, a total; two with the implicit output ("ij,jk" is ik).
  auto transposed = run_einsum("ij->ji", {2, 3});
  REQUIRE(transposed);
  CHECK(*transposed == std::vector<float>{0.5f, 3.5f, 1.5f, 4.5f, 2.5f, 5.5f});
  auto rows = run_einsum("ij->i", {2, 3});
  REQUIRE(rows);
  CHECK(*rows == std::vector<float>{4.5f, 13.5f});
  auto total = run_einsum("ij->", {2, 3});
  REQUIRE(total);
  CHECK(*total == std::vector<float>{18.0f});
  auto implicit = run_einsum("ij,jk", {1, 3}, {3, 2});
  REQUIRE(implicit);
  CHECK(*implicit == std::vector<float>{0.5f * 1 + 1.5f * 3 + 2.5f * 5, 0.5f * 2 + 1.5f * 4 + 2.5f * 6});
  // A label of one operand the output lacks is summed first: sum over j of x[i][j], times w[k].
  auto outer = run_einsum("ij,k->ik", {2, 3}, {2});
  REQUIRE(outer);
  CHECK(*outer == std::vector<float>{4.5f, 9.0f, 13.5f, 27.0f});
}

TEST_CASE("ONNX Einsum refuses diagonals, sizes that disagree and unknown output labels", "[onnx][einsum][errors]") {
  auto diagonal = run_einsum("ii->i", {3, 3});
  REQUIRE_FALSE(diagonal);
  CHECK_THAT(diagonal.status().message(), Catch::Contains("repeats 'i' in one operand (a diagonal)"));
  auto sizes = run_einsum("ij,jk->ik", {2, 3}, {4, 2});
  REQUIRE_FALSE(sizes);
  CHECK_THAT(sizes.status().message(), Catch::Contains("label 'j' has sizes 3 and 4"));
  auto unknown = run_einsum("ij->iz", {2, 3});
  REQUIRE_FALSE(unknown);
  CHECK_THAT(unknown.status().message(), Catch::Contains("output label 'z'"));
}

TEST_CASE("ONNX Hardmax: one at each row's first maximum; before opset 13 over the flattened axes", "[onnx]") {
  ModelBuilder m(13);
  m.input("x", {2, 3});
  m.node("Hardmax", {"x"}, {"y"});
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(run(*model, std::vector<float>{1, 3, 2, 5, 5, -1}) == std::vector<float>{0, 1, 0, 1, 0, 0});
  ModelBuilder old(11);
  old.input("x", {2, 2, 2});
  old.node("Hardmax", {"x"}, {"y"});  // axis 1: each batch entry's four values are one row
  old.output("y");
  auto flattened = old.import();
  REQUIRE(flattened);
  CHECK(run(*flattened, std::vector<float>{1, 2, 4, 3, 0, -1, -2, -3}) == std::vector<float>{0, 0, 1, 0, 1, 0, 0, 0});
}

TEST_CASE("ONNX ConvTranspose with groups and dilations (hand-computed)", "[onnx]") {
  // Two groups of one channel: x = [1, 2] and [3, 4] scatter through [1, 10] and [100, 1000].
  ModelBuilder grouped(13);
  grouped.input("x", {1, 2, 1, 2}).initializer("w", {2, 1, 1, 2}, {1, 10, 100, 1000}).initializer("b", {2}, {0, 5});
  set_int(grouped.node("ConvTranspose", {"x", "w", "b"}, {"y"}), "group", 2);
  grouped.output("y");
  auto by_group = grouped.import();
  REQUIRE(by_group);
  CHECK(run(*by_group, std::vector<float>{1, 2, 3, 4}) == std::vector<float>{1, 12, 20, 305, 3405, 4005});
  // Dilation 2: the kernel [1, 10] reaches as [1, 0, 10]; [1, 2] scatters to [1, 2, 10, 20].
  ModelBuilder dilated(13);
  dilated.input("x", {1, 1, 1, 2}).initializer("w", {1, 1, 1, 2}, {1, 10});
  set_ints(dilated.node("ConvTranspose", {"x", "w"}, {"y"}), "dilations", {1, 2});
  dilated.output("y");
  auto spread = dilated.import();
  REQUIRE(spread);
  CHECK(run(*spread, std::vector<float>{1, 2}) == std::vector<float>{1, 2, 10, 20});
}

TEST_CASE("ONNX OneHot: negative indices count from the end, those out of range are off everywhere", "[onnx]") {
  ModelBuilder m(11);
  m.input("indices", {2, 2}, ::onnx::TensorProto::INT64).int_initializer("depth", {3});
  m.initializer("values", {2}, {-1, 5});
  set_int(m.node("OneHot", {"indices", "depth", "values"}, {"y"}), "axis", 1);  // [2, 3, 2]
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  // indices [[0, -1], [3, 1]]: -1 is position 2; 3 is past depth 3, so its column is all off.
  CHECK(run<float, std::int32_t>(*model, {0, -1, 3, 1}) ==
        std::vector<float>{5, -1, -1, -1, -1, 5, -1, -1, -1, 5, -1, -1});
  // Float indices are truncated toward zero, as ONNX casts them; the default axis is the last.
  ModelBuilder f(11);
  f.input("indices", {3}).int_initializer("depth", {2});
  f.initializer("values", {2}, {0, 1});
  f.node("OneHot", {"indices", "depth", "values"}, {"y"});
  f.output("y");
  auto floats = f.import();
  REQUIRE(floats);
  CHECK(run(*floats, std::vector<float>{1.7f, 0.2f, -0.9f}) == std::vector<float>{0, 1, 1, 0, 1, 0});
}

TEST_CASE("ONNX CumSum, TopK and Mod (hand-computed)", "[onnx]") {
  ModelBuilder cumsum(14);
  cumsum.input("x", {2, 3}).int_initializer("axis", {1});
  auto& node = cumsum.node("CumSum", {"x", "axis"}, {"y"});
  set_int(node, "exclusive", 1);
  set_int(node, "reverse", 1);
  cumsum.output("y");
  auto summed = cumsum.import();
  REQUIRE(summed);
  CHECK(run(*summed, std::vector<float>{1, 2, 3, 4, 5, 6}) == std::vector<float>{5, 3, 0, 11, 6, 0});

  ModelBuilder top(11);
  top.input("x", {2, 3}).int_initializer("k", {2});
  set_int(top.node("TopK", {"x", "k"}, {"values", "indices"}), "largest", 0);
  top.output("indices");
  auto smallest = top.import();
  REQUIRE(smallest);
  CHECK(run<std::int32_t>(*smallest, std::vector<float>{3, 1, 2, 0, 9, 0}) == std::vector<std::int32_t>{1, 2, 0, 2});

  for (const std::int64_t fmod : {0, 1}) {
    ModelBuilder m(13);
    m.input("a", {4}).initializer("b", {4}, {3, -3, -3, 2});
    set_int(m.node("Mod", {"a", "b"}, {"y"}), "fmod", fmod);
    m.output("y");
    auto model = m.import();
    REQUIRE(model);
    CHECK(run(*model, std::vector<float>{-7, 7, -7, 5.5f}) ==
          (fmod ? std::vector<float>{-1, 1, -1, 1.5f} : std::vector<float>{2, -2, -1, 1.5f}));
  }
}

TEST_CASE("ONNX NonZero of a constant folds to the coordinates of its nonzero elements; computed, it is refused",
          "[onnx]") {
  ModelBuilder m(13);
  m.input("x", {2, 2}, ::onnx::TensorProto::INT64).initializer("mask", {2, 2}, {1, 0, 0, 2});
  m.node("NonZero", {"mask"}, {"where"});  // [[0, 1], [0, 1]]: rows, then columns, of elements 0 and 3
  m.node("Add", {"x", "where"}, {"y"});
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(run<std::int32_t, std::int32_t>(*model, {10, 20, 30, 40}) == std::vector<std::int32_t>{10, 21, 30, 41});
  ModelBuilder computed(13);
  computed.input("x", {2, 2});
  computed.node("NonZero", {"x"}, {"y"});
  computed.output("y");
  auto refused = computed.import();
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.status().message(), Catch::Contains("NonZero's output shape depends on its values"));
}

TEST_CASE("ONNX Softmax before opset 13 normalises the flattened trailing axes", "[onnx]") {
  ModelBuilder m(11);
  m.input("x", {1, 2, 3});
  m.node("Softmax", {"x"}, {"y"});  // axis 1: over all six values
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  const auto y = run(*model, {0, 1, 2, 3, 4, 5});
  double sum = 0;
  for (int i = 0; i < 6; ++i) sum += std::exp(i);
  for (int i = 0; i < 6; ++i) CHECK(y[static_cast<std::size_t>(i)] == Approx(std::exp(i) / sum).epsilon(1e-6));
}

TEST_CASE("ONNX opset 6 legacy broadcast lines B up from axis", "[onnx]") {
  ModelBuilder m(6);
  m.input("x", {1, 2, 1, 2}).initializer("b", {2}, {10, 20});
  auto& add = m.node("Add", {"x", "b"}, {"y"});
  set_int(add, "broadcast", 1);
  set_int(add, "axis", 1);  // b per channel, not per column
  m.output("y");
  auto model = m.import();
  REQUIRE(model);
  CHECK(run(*model, {1, 2, 3, 4}) == std::vector<float>{11, 12, 23, 24});
}

TEST_CASE("ONNX importer errors name the node, the op and the reason", "[onnx][errors]") {
  SECTION("unsupported op") {
    ModelBuilder m;
    m.input("x", {2});
    m.node("StringNormalizer", {"x"}, {"y"}, "my_node");
    m.output("y");
    auto model = m.import();
    REQUIRE(!model);
    CHECK(model.status().code() == ErrorCode::Unsupported);
    CHECK(model.status().message() ==
          "node 'my_node' (StringNormalizer): kiln's importer does not support op StringNormalizer");
  }
  SECTION("unsupported attribute value") {
    ModelBuilder m;
    m.input("x", {1, 1, 4, 4});
    auto& norm = m.node("BatchNormalization", {"x", "s", "b", "s", "s"}, {"y"}, "norm");
    m.initializer("s", {1}, {1}).initializer("b", {1}, {0});
    set_int(norm, "training_mode", 1);
    m.output("y");
    auto model = m.import();
    REQUIRE(!model);
    CHECK_THAT(model.status().message(), Catch::StartsWith("node 'norm' (BatchNormalization): training_mode 1"));
  }
  SECTION("dynamic shape") {
    ModelBuilder m;
    m.dynamic_input("x");
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    auto model = m.import();
    REQUIRE(!model);
    CHECK(model.status().message() ==
          "graph input 'x' has the dynamic dimension 'batch' (axis 0 of [batch, 4]); kiln plans memory at load and "
          "needs its value: ImportOptions::dimensions[\"batch\"] (kiln --dim batch=N), or the input's whole shape "
          "(kiln --shape x=D0x...)");
  }
  SECTION("opset out of range") {
    ModelBuilder m(19);
    m.input("x", {2});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    CHECK(m.import().status().message() == "the model uses ONNX opset 19; kiln reads opsets 1 to 18");
  }
  SECTION("input of a node that nothing produced") {
    ModelBuilder m;
    m.input("x", {2});
    m.node("Add", {"x", "nowhere"}, {"y"}, "add");
    m.output("y");
    CHECK_THAT(m.import().status().message(), Catch::Contains("'nowhere' is not produced by any earlier node"));
  }
  SECTION("weights that do not match") {
    ModelBuilder m;
    m.input("x", {1, 3, 4, 4}).initializer("w", {2, 2, 1, 1}, {1, 1, 1, 1});
    m.node("Conv", {"x", "w"}, {"y"}, "conv");
    m.output("y");
    CHECK_THAT(m.import().status().message(),
               Catch::StartsWith("node 'conv' (Conv): group 1 does not fit input channels 3"));
  }
  SECTION("integer arithmetic on 8-bit tensors") {
    ModelBuilder m;
    m.input("a", {4}, ::onnx::TensorProto::UINT8).input("b", {4}, ::onnx::TensorProto::UINT8);
    m.node("Add", {"a", "b"}, {"y"}, "add");
    m.output("y");
    CHECK_THAT(m.import().status().message(),
               Catch::StartsWith("node 'add' (Add): ElementwiseBinary of an 8-bit tensor QAsymmU8 [4] (scale 1, "
                                 "zero point 0): ONNX computes it on the integers"));
  }
  SECTION("a quantised op whose expansion fails names the op and the step") {
    ModelBuilder m;
    m.input("x", {1, 1, 2, 2}, ::onnx::TensorProto::UINT8).input("x_scale", {1});
    m.narrow_initializer("zero", ::onnx::TensorProto::UINT8, {}, {0});
    m.narrow_initializer("w", ::onnx::TensorProto::INT8, {1, 1, 1, 1}, {1}).initializer("scale", {}, {1.0f});
    m.node("QLinearConv", {"x", "x_scale", "zero", "w", "scale", "zero", "scale", "zero"}, {"y"}, "qconv");
    m.output("y");
    CHECK(m.import().status().message() ==
          "node 'qconv' (QLinearConv), computed as node 'qconv/x' (DequantizeLinear): scale (input 1 'x_scale') must "
          "be a constant (an initializer or computable at import)");
  }
  SECTION("an op of another domain") {
    ModelBuilder m;
    m.input("x", {2});
    m.node("Gelu", {"x"}, {"y"}, "gelu").set_domain("com.microsoft");
    m.output("y");
    CHECK(m.import().status().message() ==
          "node 'gelu' (Gelu): kiln's importer does not support op com.microsoft.Gelu");
  }
  SECTION("initializer with less data than its shape") {
    ModelBuilder m;
    m.input("x", {4}).initializer("b", {4}, {1, 2});
    m.node("Add", {"x", "b"}, {"y"});
    m.output("y");
    CHECK(m.import().status().message() == "tensor 'b': has 2 values for 4 elements");
  }
}

TEST_CASE("ONNX inputs' dynamic dimensions take the values ImportOptions gives them, by name or by input",
          "[onnx][dimensions]") {
  // x [batch, 4] and s [batch, ?]: Add(Relu(x), s).
  ModelBuilder m;
  m.dynamic_input("x").dynamic_input("s", {"batch", "?"});
  m.node("Relu", {"x"}, {"r"});
  m.node("Add", {"r", "s"}, {"y"});
  m.output("y");
  kiln::onnx::ImportOptions options;
  SECTION("a named dimension's value reaches every input that has it; the unnamed one needs the shape") {
    options.dimensions["batch"] = 2;
    auto unnamed = m.import(options);
    REQUIRE_FALSE(unnamed);
    CHECK(unnamed.status().message() ==
          "graph input 's' has an unnamed dynamic dimension (axis 1 of [batch, ?]); kiln plans memory at load and "
          "needs its value: give the input's shape, ImportOptions::input_shapes (kiln --shape s=D0x...)");
    options.input_shapes["s"] = {2, 4};
    auto model = m.import(options);
    REQUIRE(model);
    CHECK(model->inputs[0].info.shape == TensorShape{2, 4});
    CHECK(model->inputs[1].info.shape == TensorShape{2, 4});
    auto optimized = optimize<RefBackend>(model->network);
    REQUIRE(optimized);
    Runtime<RefBackend> runtime;
    auto id = runtime.load(*optimized);
    REQUIRE(id);
    const std::vector<float> x{-1, 2, -3, 4, 5, -6, 7, -8}, s{1, 1, 1, 1, 2, 2, 2, 2};
    std::vector<float> y(8);
    const InputBinding in[] = {{0, {model->inputs[0].info, x.data()}}, {1, {model->inputs[1].info, s.data()}}};
    const OutputBinding out[] = {{0, {model->outputs[0].info, y.data()}}};
    REQUIRE(runtime.enqueue(*id, in, out));
    CHECK(y == std::vector<float>{1, 3, 1, 5, 7, 2, 9, 2});
  }
  SECTION("a whole shape must keep the dimensions the model fixes") {
    options.input_shapes["x"] = {3, 5};
    CHECK(m.import(options).status().message() ==
          "graph input 'x' fixes dimension 1 of [batch, 4] at 4; the shape given for it says 5");
    options.input_shapes["x"] = {3, 4, 1};
    CHECK(m.import(options).status().message() ==
          "graph input 'x' has 2 dimensions [batch, 4]; the shape given for it has 3");
  }
  SECTION("names the model does not have are errors, not ignored") {
    options.dimensions["batch"] = 1;
    options.input_shapes["s"] = {1, 4};
    options.dimensions["sequence"] = 8;
    CHECK(m.import(options).status().message() ==
          "a value is given for the dimension 'sequence', which no input of the model leaves open (or the input's "
          "whole shape was given)");
    options.dimensions.erase("sequence");
    options.input_shapes["z"] = {1};
    CHECK(m.import(options).status().message() ==
          "a shape is given for 'z', which is not an input of the model (its inputs: x, s)");
  }
  SECTION("a dimension of zero or less is refused") {
    options.dimensions["batch"] = 0;
    CHECK_THAT(m.import(options).status().message(),
               Catch::Contains("graph input 'x' would have dimension 0 of [batch, 4] = 0"));
  }
}

TEST_CASE("ONNX importer: every truncation and corruption of a real model is an error or a model, never a crash",
          "[onnx][errors]") {
  const std::string model = read_file(KILN_DIGITS_MODEL);
  REQUIRE(model.size() > 1000);
  CHECK(kiln::onnx::import_model(std::as_bytes(std::span(model.data(), model.size()))));
  std::size_t refused = 0;
  for (std::size_t length = 0; length < model.size(); length += 97) {
    auto imported = kiln::onnx::import_model(std::as_bytes(std::span(model.data(), length)));
    refused += imported ? 0 : 1;
  }
  CHECK(refused > 0);
  std::mt19937 random(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::string corrupt = model;
    for (int flips = 0; flips < 4; ++flips) corrupt[random() % corrupt.size()] = static_cast<char>(random());
    auto imported = kiln::onnx::import_model(std::as_bytes(std::span(corrupt.data(), corrupt.size())));
    if (imported) (void)optimize<RefBackend>(imported->network);  // what imports must also optimize or say why not
  }
  CHECK(kiln::onnx::import_file("/nonexistent/model.onnx").status().message() ==
        "cannot open model file '/nonexistent/model.onnx'");
  const auto directory = std::filesystem::temp_directory_path();
  CHECK_THAT(kiln::onnx::import_file(directory.string()).status().message(), Catch::Contains("is not a regular file"));
  const auto empty = directory / "kiln_empty_model.onnx";
  std::ofstream(empty).close();
  CHECK_THAT(kiln::onnx::import_file(empty.string()).status().message(), Catch::Contains("not an ONNX model"));
  std::filesystem::remove(empty);
}

TEST_CASE("ONNX importer: inputs the fuzzer found (tests/onnx/fuzz_regressions) are errors, not crashes",
          "[onnx][errors]") {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(KILN_FUZZ_REGRESSIONS)) {
    INFO(entry.path().filename().string());
    const std::string bytes = read_file(entry.path().string());
    auto imported = kiln::onnx::import_model(std::as_bytes(std::span(bytes.data(), bytes.size())));
    CHECK(!imported);
    ++files;
  }
  CHECK(files > 0);
}

TEST_CASE("Tensor files: NumPy arrays written by numpy, and round trips through .npy and .pb", "[onnx][files]") {
  auto labels = kiln::onnx::read_tensor_file(KILN_DIGITS_LABELS);  // int64 [360] written by numpy
  REQUIRE(labels);
  CHECK(labels->info == TensorInfo{TensorShape{360}, DataType::Signed32});
  const auto* l = reinterpret_cast<const std::int32_t*>(labels->data.data());
  CHECK(std::vector<std::int32_t>(l, l + 6) == std::vector<std::int32_t>{3, 8, 8, 3, 8, 8});

  kiln::onnx::HostTensor t{"t", {TensorShape{2, 3}, DataType::Float32}, std::vector<std::byte>(24)};
  const float values[] = {1.5f, -2, 0, 3, 1e-8f, NAN};
  std::memcpy(t.data.data(), values, 24);
  for (const char* ext : {".npy", ".pb"}) {
    const auto path = (std::filesystem::temp_directory_path() / (std::string("kiln_tensor") + ext)).string();
    REQUIRE(kiln::onnx::write_tensor_file(path, t));
    auto back = kiln::onnx::read_tensor_file(path);
    REQUIRE(back);
    CHECK(back->info == t.info);
    CHECK(std::memcmp(back->data.data(), t.data.data(), 20) == 0);
    CHECK(std::isnan(reinterpret_cast<const float*>(back->data.data())[5]));
    std::filesystem::remove(path);
  }
  // ONNX's uint8 and int8 are the integers themselves: written without their quantisation, read
  // back with scale 1 and zero point 0.
  for (const DataType type : {DataType::QAsymmU8, DataType::QAsymmS8}) {
    const kiln::onnx::HostTensor bytes{"q",
                                       {TensorShape{3}, type, QuantizationInfo{{0.25f}, 3, {}}},
                                       {std::byte{0}, std::byte{0x7f}, std::byte{0x80}}};
    for (const char* ext : {".npy", ".pb"}) {
      const auto path = (std::filesystem::temp_directory_path() / (std::string("kiln_bytes") + ext)).string();
      REQUIRE(kiln::onnx::write_tensor_file(path, bytes));
      auto back = kiln::onnx::read_tensor_file(path);
      REQUIRE(back);
      CHECK(back->info == TensorInfo{TensorShape{3}, type, kiln::onnx::raw_integers()});
      CHECK(back->data == bytes.data);
      std::filesystem::remove(path);
    }
  }
  const auto bad = (std::filesystem::temp_directory_path() / "kiln_bad.npy").string();
  const char header[] = "\x93NUMPY\x01\x00\x40\x00{'descr': '<f4'";  // promises 64 header bytes, has 15
  std::ofstream(bad, std::ios::binary).write(header, sizeof header - 1);
  CHECK_THAT(kiln::onnx::read_tensor_file(bad).status().message(), Catch::Contains("truncated header"));
  std::filesystem::remove(bad);
}

TEST_CASE("compare() is numpy.allclose per element, NaN equal to NaN", "[onnx][files]") {
  auto tensor = [](std::vector<float> v) {
    kiln::onnx::HostTensor t{"", {TensorShape{static_cast<std::uint32_t>(v.size())}, DataType::Float32}, {}};
    t.data.resize(4 * v.size());
    std::memcpy(t.data.data(), v.data(), t.data.size());
    return t;
  };
  const auto c = kiln::onnx::compare(tensor({1.0f, 100.05f, NAN}), tensor({1.0f, 100.0f, NAN}), 1e-3, 1e-4);
  CHECK(c.passed());
  CHECK(c.max_abs_error == Approx(0.05).epsilon(1e-3));
  const auto d = kiln::onnx::compare(tensor({1.0f, 100.2f, 0.0f}), tensor({1.0f, 100.0f, NAN}), 1e-3, 1e-4);
  CHECK(d.mismatches == 2);
  CHECK(!kiln::onnx::compare(tensor({1.0f}), tensor({1.0f, 2.0f}), 1e-3, 1e-4).same_info);
}

TEST_CASE("A layer norm imports as LayerNormalization at opset 17 and fuses into one from the chain before it",
          "[onnx][layer_normalization]") {
  // tests/models/encoder_tiny*: three nn.LayerNorm and, after them, a ReduceMean over the tokens.
  auto count = [](const std::string& text, std::string_view what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  std::vector<std::string> printouts;
  for (const char* model : {"encoder_tiny", "encoder_tiny_opset13"}) {
    INFO(model);
    auto imported = kiln::onnx::import_file(std::string(KILN_TEST_MODELS) + "/" + model + "/model.onnx");
    INFO(imported.status().message());
    REQUIRE(imported);
    auto optimized = optimize<RefBackend>(std::move(imported->network));
    INFO(optimized.status().message());
    REQUIRE(optimized);
    printouts.push_back(optimized->to_string());
    CHECK(count(printouts.back(), "(LayerNormalization)") == 3);
    CHECK(count(printouts.back(), "(Reduce)") == 1);
  }
  // What is left of the chains: nothing, so both run the same layers.
  for (std::string_view kind : {"(ElementwiseBinary)", "(ElementwiseUnary)", "(Constant)"}) {
    INFO(kind);
    CHECK(count(printouts[0], kind) == count(printouts[1], kind));
  }
}

TEST_CASE("ONNX 3-D Conv: depth taps folded into channels, with padding, stride and groups (hand-computed)", "[onnx]") {
  // Depths [1, 2], [3, 4], [5, 6] padded by one depth each side, the kernel [10, 1] over depth at
  // stride 2: 0 * 10 + [1, 2] and [3, 4] * 10 + [5, 6], plus the bias 0.5.
  ModelBuilder padded(13);
  padded.input("x", {1, 1, 3, 1, 2}).initializer("w", {1, 1, 2, 1, 1}, {10, 1}).initializer("b", {1}, {0.5f});
  auto& conv = padded.node("Conv", {"x", "w", "b"}, {"y"});
  set_ints(conv, "pads", {1, 0, 0, 1, 0, 0});
  set_ints(conv, "strides", {2, 1, 1});
  padded.output("y");
  auto strided = padded.import();
  REQUIRE(strided);
  CHECK(run(*strided, std::vector<float>{1, 2, 3, 4, 5, 6}) == std::vector<float>{1.5f, 2.5f, 35.5f, 46.5f});
  // Two groups of one channel, two depth taps each: [1, 2] . [1, 10] and [3, 4] . [100, 1000].
  ModelBuilder grouped(13);
  grouped.input("x", {1, 2, 2, 1, 1}).initializer("w", {2, 1, 2, 1, 1}, {1, 10, 100, 1000});
  set_int(grouped.node("Conv", {"x", "w"}, {"y"}), "group", 2);
  grouped.output("y");
  auto by_group = grouped.import();
  REQUIRE(by_group);
  CHECK(run(*by_group, std::vector<float>{1, 2, 3, 4}) == std::vector<float>{21, 4300});
}

TEST_CASE("ONNX 3-D pooling: a plane's window, then the depth's (hand-computed)", "[onnx]") {
  // x = 1..8 as two depths of 2x2; a 2x2x2 window, one depth of padding in front: the first output
  // sees the padding and the first depth, the second both depths.
  const std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};
  auto pooled = [&](const char* op, std::int64_t count_include_pad) {
    ModelBuilder m(13);
    m.input("x", {1, 1, 2, 2, 2});
    auto& node = m.node(op, {"x"}, {"y"});
    set_ints(node, "kernel_shape", {2, 2, 2});
    set_ints(node, "pads", {1, 0, 0, 0, 0, 0});
    if (count_include_pad) set_int(node, "count_include_pad", 1);
    m.output("y");
    auto model = m.import();
    REQUIRE(model);
    return run(*model, x);
  };
  CHECK(pooled("MaxPool", 0) == std::vector<float>{4, 8});
  CHECK(pooled("AveragePool", 0) == std::vector<float>{2.5f, 4.5f});   // 10 / 4, 36 / 8
  CHECK(pooled("AveragePool", 1) == std::vector<float>{1.25f, 4.5f});  // the padding counted: 10 / 8
  for (const auto& [op, expected] : {std::pair{"GlobalAveragePool", 4.5f}, std::pair{"GlobalMaxPool", 8.0f}}) {
    ModelBuilder m(13);
    m.input("x", {1, 1, 2, 2, 2});
    m.node(op, {"x"}, {"y"});
    m.output("y");
    auto model = m.import();
    REQUIRE(model);
    CHECK(run(*model, x) == std::vector<float>{expected});
  }
}
