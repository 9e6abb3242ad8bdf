// SPDX-License-Identifier: Apache-2.0
// The quantiser (`kiln quantize`): ONNX Runtime's scale and zero-point rule on hand-computed ranges;
// the percentile range; QDQ models written from ONNX Runtime's own calibration ranges, compared
// node by node and byte by byte with the models ONNX Runtime's quantiser wrote; kiln's calibration
// end to end against ONNX Runtime's outputs; the shipped int8 digits model; and the errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <onnx/onnx_pb.h>

#include <kiln/import/quantize.hpp>
#include <kiln/kiln.hpp>

using namespace kiln;
using kiln::onnx::CalibrationStatistics;
using kiln::onnx::QuantizeOptions;

namespace {

const std::string fixtures = KILN_TEST_FIXTURES "/quantized/";
const std::string digits = KILN_DIGITS_DIR "/";

std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  REQUIRE(file.is_open());
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const auto bytes = std::as_bytes(std::span(text));
  return {bytes.begin(), bytes.end()};
}

::onnx::ModelProto parse(std::span<const std::byte> bytes) {
  ::onnx::ModelProto model;
  REQUIRE(model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  return model;
}

/// The ranges ONNX Runtime's MinMax calibrator found (tools/make_qdq_fixtures.py): "name min max".
CalibrationStatistics ort_ranges(const std::string& path) {
  std::ifstream file(path);
  REQUIRE(file.is_open());
  CalibrationStatistics statistics;
  std::string name;
  float low = 0, high = 0;
  while (file >> name >> low >> high) {
    const float ends[] = {low, high};
    statistics[name].observe_range(ends);
  }
  REQUIRE(!statistics.empty());
  return statistics;
}

/// Each node as "op(inputs)->outputs [axis]", sorted: the graph's wiring whatever the node order.
std::vector<std::string> wiring(const ::onnx::ModelProto& model) {
  std::vector<std::string> nodes;
  for (const auto& node : model.graph().node()) {
    std::string text = node.op_type() + "(";
    for (const auto& input : node.input()) text += input + ",";
    text += ")->";
    for (const auto& output : node.output()) text += output + ",";
    for (const auto& a : node.attribute())
      if (a.name() == "axis") text += " axis=" + std::to_string(a.i());
    nodes.push_back(text);
  }
  std::ranges::sort(nodes);
  return nodes;
}

/// The little-endian bytes of an initializer's values, whichever field holds them.
std::string values_of(const ::onnx::TensorProto& t) {
  if (!t.raw_data().empty()) return t.raw_data();
  std::string bytes;
  auto append = [&](const auto& value) { bytes.append(reinterpret_cast<const char*>(&value), sizeof value); };
  for (float v : t.float_data()) append(v);
  for (std::int32_t v : t.int32_data()) {
    if (t.data_type() == ::onnx::TensorProto::INT32)
      append(v);
    else
      append(static_cast<std::int8_t>(v));  // INT8 and UINT8 travel in int32_data, a byte each when raw
  }
  return bytes;
}

/// Each initializer's type, dims and values, by name.
std::map<std::string, std::string> initializers(const ::onnx::ModelProto& model) {
  std::map<std::string, std::string> out;
  for (const auto& t : model.graph().initializer()) {
    std::string key = std::to_string(t.data_type()) + " [";
    for (auto d : t.dims()) key += std::to_string(d) + ",";
    out[t.name()] = key + "] " + values_of(t);
  }
  return out;
}

/// Runs `model` on RefBackend (Float32 layers, and int8 ones after fusion) over every example of
/// `images` ([N, ...] of its one input) and returns the outputs, concatenated.
std::vector<float> run_model(std::span<const std::byte> model, const kiln::onnx::HostTensor& images) {
  auto imported = kiln::onnx::import_model(model);
  REQUIRE(imported);
  const TensorInfo in = imported->inputs[0].info, out = imported->outputs[0].info;
  auto optimized = Runtime<RefBackend>::optimize(std::move(imported->network));
  REQUIRE(optimized);
  Runtime<RefBackend> runtime;
  auto id = runtime.load(std::move(*optimized));
  REQUIRE(id);
  const std::size_t count = images.data.size() / in.num_bytes();
  std::vector<float> outputs(count * out.num_elements());
  for (std::size_t e = 0; e < count; ++e) {
    const InputBinding inputs[] = {{0, {in, images.data.data() + e * in.num_bytes()}}};
    const OutputBinding results[] = {{0, {out, outputs.data() + e * out.num_elements()}}};
    REQUIRE(runtime.enqueue(*id, inputs, results));
  }
  return outputs;
}

/// The printout of `model` imported and optimized for RefBackend: which layers run in int8.
std::string optimized_on_ref(std::span<const std::byte> model) {
  auto imported = kiln::onnx::import_model(model);
  REQUIRE(imported);
  auto optimized = Runtime<RefBackend>::optimize(std::move(imported->network));
  REQUIRE(optimized);
  return optimized->to_string();
}

kiln::onnx::HostTensor first_examples(const kiln::onnx::HostTensor& batch, std::uint32_t count) {
  kiln::onnx::HostTensor out = batch;
  out.info.shape[0] = count;
  out.data.resize(out.info.num_bytes());
  return out;
}

float initializer_value(const ::onnx::ModelProto& model, const std::string& name) {
  for (const auto& t : model.graph().initializer())
    if (t.name() == name) {
      const std::string bytes = values_of(t);
      float v = 0;
      REQUIRE(bytes.size() == sizeof v);
      std::memcpy(&v, bytes.data(), sizeof v);
      return v;
    }
  FAIL("no initializer " << name);
  return 0;
}

}  // namespace

TEST_CASE("activation scale and zero point follow ONNX Runtime's rule", "[quantize]") {
  // scale = (max(rmax, 0) - min(rmin, 0)) / 255; zero point = round(qmin - rmin / scale).
  auto q = kiln::onnx::choose_activation_quantization(-1.0f, 3.0f, DataType::QAsymmU8);
  CHECK(q.scale == static_cast<float>(4.0 / 255.0));
  CHECK(q.zero_point == 64);  // 63.75
  q = kiln::onnx::choose_activation_quantization(-1.0f, 3.0f, DataType::QAsymmS8);
  CHECK(q.scale == static_cast<float>(4.0 / 255.0));
  CHECK(q.zero_point == -64);                                                      // -128 + 63.75
  q = kiln::onnx::choose_activation_quantization(0.5f, 2.0f, DataType::QAsymmU8);  // widened to hold 0
  CHECK(q.scale == static_cast<float>(2.0 / 255.0));
  CHECK(q.zero_point == 0);
  q = kiln::onnx::choose_activation_quantization(0.5f, 2.0f, DataType::QAsymmS8);
  CHECK(q.zero_point == -128);
  q = kiln::onnx::choose_activation_quantization(-6.0f, -2.0f, DataType::QAsymmU8);  // all negative: 0 is the top
  CHECK(q.scale == static_cast<float>(6.0 / 255.0));
  CHECK(q.zero_point == 255);
  q = kiln::onnx::choose_activation_quantization(0.0f, 0.0f, DataType::QAsymmU8);  // nothing seen but zeros
  CHECK(q.scale == 1.0f);
  CHECK(q.zero_point == 0);
}

TEST_CASE("the percentile range drops the outer tails of the histogram", "[quantize]") {
  // 0, 1, ..., 9999: the central 99 % loses 50 values at each end, to within a bin (9999 / 2048).
  std::vector<float> values(10000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  kiln::onnx::TensorStatistics statistics;
  statistics.observe_range(values);
  statistics.observe_histogram(values);
  QuantizeOptions options;
  CHECK(statistics.range(options) == std::pair(0.0f, 9999.0f));  // MinMax ignores the histogram
  options.method = kiln::onnx::CalibrationMethod::Percentile;
  options.percentile = 99.0;
  const double bin = 9999.0 / 2048.0;
  const auto [low, high] = statistics.range(options);
  CHECK(low >= 50.0 - bin);
  CHECK(low <= 50.0);
  CHECK(high >= 9949.0);
  CHECK(high <= 9949.0 + bin + 1e-3);
  options.percentile = 100.0;
  CHECK(statistics.range(options) == std::pair(0.0f, 9999.0f));
  // One outlier among many values far below it is cut off.
  kiln::onnx::TensorStatistics outlier;
  std::vector<float> spiky(100000, 1.0f);
  spiky[7] = 1000.0f;
  spiky[8] = -3.0f;
  outlier.observe_range(spiky);
  outlier.observe_histogram(spiky);
  options.percentile = 99.99;
  const auto [spiky_low, spiky_high] = outlier.range(options);
  CHECK(spiky_low >= 0.5f);
  CHECK(spiky_high < 2.0f);
}

TEST_CASE("from ONNX Runtime's ranges the writer makes ONNX Runtime's QDQ model", "[quantize]") {
  // The same calibration ranges in: the same nodes, names and integers out, byte for byte.
  struct Case {
    std::string model, ranges, expected;
  };
  const Case cases[] = {
      {digits + "digits_cnn.onnx", fixtures + "digits_ort_ranges.txt", fixtures + "digits_qdq_"},
      {KILN_TEST_MODELS "/mobilenet_v2_tiny/model.onnx", fixtures + "mobilenet_v2_tiny_ort_ranges.txt",
       fixtures + "mobilenet_v2_tiny_qdq_"},
  };
  for (const Case& c : cases)
    for (const auto& [suffix, type] : {std::pair("u8", DataType::QAsymmU8), std::pair("s8", DataType::QAsymmS8)}) {
      const std::string expected_path =
          c.expected + suffix + (c.expected.ends_with("tiny_qdq_") ? "/model.onnx" : ".onnx");
      INFO(c.model << " " << suffix);
      QuantizeOptions options;
      options.activations = type;
      auto written = kiln::onnx::write_qdq_model(read_bytes(c.model), ort_ranges(c.ranges), options);
      REQUIRE(written);
      const auto ours = parse(written->bytes);
      const auto theirs = parse(read_bytes(expected_path));
      CHECK(wiring(ours) == wiring(theirs));
      const auto a = initializers(ours), b = initializers(theirs);
      CHECK(a.size() == b.size());
      for (const auto& [name, value] : b) {
        INFO(name);
        REQUIRE(a.contains(name));
        CHECK(a.at(name) == value);
      }
      CHECK(written->summary.float_ops.size() <= 1);  // MobileNet's shape Constant
    }
}

TEST_CASE("kiln's own calibration agrees with ONNX Runtime's quantised digits model", "[quantize]") {
  // Calibrated on the images ONNX Runtime's quantiser saw (the first 200 test images), kiln's model
  // differs from ONNX Runtime's only where the Float32 activations calibration saw differ in their
  // last bits: its outputs lie within one output unit of ONNX Runtime's on every test image.
  auto images = kiln::onnx::read_tensor_file(digits + "test_images.npy");
  REQUIRE(images);
  for (const auto& [suffix, type] : {std::pair("u8", DataType::QAsymmU8), std::pair("s8", DataType::QAsymmS8)}) {
    INFO(suffix);
    QuantizeOptions options;
    options.activations = type;
    Runtime<RefBackend> runtime;
    auto quantized =
        kiln::onnx::quantize(read_bytes(digits + "digits_cnn.onnx"), first_examples(*images, 200), options, runtime);
    REQUIRE(quantized);
    CHECK(quantized->examples == 200);
    CHECK(quantized->summary.quantized_nodes == 6);  // 2 Conv, MaxPool, Flatten, 2 Gemm
    CHECK(quantized->summary.removed_activations == 3);
    CHECK(quantized->summary.float_ops.empty());
    const auto model = parse(quantized->bytes);
    const auto theirs = parse(read_bytes(fixtures + "digits_qdq_" + suffix + ".onnx"));
    CHECK(wiring(model) == wiring(theirs));
    const float unit = initializer_value(model, "logits_scale");
    CHECK(std::abs(unit / initializer_value(theirs, "logits_scale") - 1.0f) < 1e-5f);

    auto expected = kiln::onnx::read_tensor_file(fixtures + "digits_qdq_" + std::string(suffix) + "_ort_logits.npy");
    REQUIRE(expected);
    const std::span<const float> reference(reinterpret_cast<const float*>(expected->data.data()),
                                           expected->info.num_elements());
    const auto outputs = run_model(quantized->bytes, *images);
    REQUIRE(outputs.size() == reference.size());
    float worst = 0;
    std::size_t agree = 0;
    for (std::size_t e = 0; e < outputs.size() / 10; ++e) {
      for (std::size_t k = 0; k < 10; ++k)
        worst = std::max(worst, std::abs(outputs[e * 10 + k] - reference[e * 10 + k]));
      const auto row = std::span(outputs).subspan(e * 10, 10), ref = reference.subspan(e * 10, 10);
      agree += std::ranges::max_element(row) - row.begin() == std::ranges::max_element(ref) - ref.begin();
    }
    CHECK(worst <= unit * 1.001f);
    CHECK(agree == outputs.size() / 10);
  }
}

TEST_CASE("the shipped int8 digits model is what kiln quantize makes and ONNX Runtime runs it alike", "[quantize]") {
  // examples/digits/digits_cnn_int8.onnx: `kiln quantize` on the training images. Quantising again
  // gives the same graph and weights (scales may move by rounding where another compiler computes
  // the Float32 activations); ONNX Runtime's outputs on it (fixture) are within one output unit.
  const auto shipped = parse(read_bytes(digits + "digits_cnn_int8.onnx"));
  auto training = kiln::onnx::read_tensor_file(digits + "train_images.npy");
  REQUIRE(training);
  Runtime<RefBackend> runtime;
  auto again = kiln::onnx::quantize(read_bytes(digits + "digits_cnn.onnx"), *training, {}, runtime);
  REQUIRE(again);
  const auto model = parse(again->bytes);
  CHECK(wiring(model) == wiring(shipped));
  const auto a = initializers(model), b = initializers(shipped);
  REQUIRE(a.size() == b.size());
  for (const auto& [name, value] : b)
    if (value.starts_with(std::to_string(::onnx::TensorProto::INT8) + " [")) {
      INFO(name);
      CHECK(a.at(name) == value);  // int8 weights and zero points; int32 biases follow the scales
    }

  auto images = kiln::onnx::read_tensor_file(digits + "test_images.npy");
  auto expected = kiln::onnx::read_tensor_file(fixtures + "digits_cnn_int8_ort_logits.npy");
  REQUIRE(images);
  REQUIRE(expected);
  const auto outputs = run_model(read_bytes(digits + "digits_cnn_int8.onnx"), *images);
  const std::span<const float> reference(reinterpret_cast<const float*>(expected->data.data()),
                                         expected->info.num_elements());
  REQUIRE(outputs.size() == reference.size());
  const float unit = initializer_value(shipped, "logits_scale");
  for (std::size_t i = 0; i < outputs.size(); ++i) REQUIRE(std::abs(outputs[i] - reference[i]) <= unit * 1.001f);
}

TEST_CASE("ONNX Runtime's QOperator model runs exactly as its QDQ model of the same quantisation", "[qoperator]") {
  // The two forms of one quantize_static run (tools/make_qdq_fixtures.py): QLinearConv and QGemm
  // are DequantizeLinear -> op -> QuantizeLinear by definition, so kiln makes one network of both.
  auto images = kiln::onnx::read_tensor_file(digits + "test_images.npy");
  REQUIRE(images);
  for (const char* suffix : {"u8", "s8"}) {
    INFO(suffix);
    const auto qop = run_model(read_bytes(fixtures + "digits_qop_" + suffix + ".onnx"), *images);
    const auto qdq = run_model(read_bytes(fixtures + "digits_qdq_" + suffix + ".onnx"), *images);
    CHECK(qop == qdq);
  }
}

TEST_CASE("percentile calibration and per-tensor weights make working models", "[quantize]") {
  auto images = kiln::onnx::read_tensor_file(digits + "test_images.npy");
  auto labels = kiln::onnx::read_tensor_file(digits + "test_labels.npy");
  REQUIRE(images);
  REQUIRE(labels);
  QuantizeOptions options;
  options.method = kiln::onnx::CalibrationMethod::Percentile;
  options.per_channel = false;
  Runtime<RefBackend> runtime;
  auto quantized =
      kiln::onnx::quantize(read_bytes(digits + "digits_cnn.onnx"), first_examples(*images, 100), options, runtime);
  REQUIRE(quantized);
  const auto model = parse(quantized->bytes);
  for (const auto& node : model.graph().node())
    if (node.op_type() == "DequantizeLinear")
      for (const auto& a : node.attribute()) CHECK(a.name() != "axis");  // one scale per weight tensor
  const auto outputs = run_model(quantized->bytes, *images);
  std::size_t correct = 0;
  for (std::size_t e = 0; e < outputs.size() / 10; ++e) {
    const auto row = std::span(outputs).subspan(e * 10, 10);
    correct +=
        std::ranges::max_element(row) - row.begin() == reinterpret_cast<const std::int32_t*>(labels->data.data())[e];
  }
  CHECK(correct >= 350);  // of 360; Float32 gets 358
}

TEST_CASE("the quantiser keeps Pad, nearest Resize and Slice on their input's quantisation, in int8", "[quantize]") {
  // x -> Conv 1x1 -> Pad (reflect) -> Resize (nearest, x2) -> Slice -> Conv 1x1: the movers between
  // the convolutions pass their input's scale on (ONNX Runtime's rule), so kiln runs them on bytes.
  ::onnx::ModelProto proto;
  proto.set_ir_version(8);
  proto.add_opset_import()->set_version(13);
  auto& graph = *proto.mutable_graph();
  auto tensor = [&](const std::string& name, int type, std::vector<std::int64_t> dims) -> ::onnx::TensorProto& {
    auto& t = *graph.add_initializer();
    t.set_name(name);
    t.set_data_type(type);
    for (auto d : dims) t.add_dims(d);
    return t;
  };
  for (const char* w : {"w1", "w2"}) {
    auto& t = tensor(w, ::onnx::TensorProto::FLOAT, {2, 2, 1, 1});
    for (float v : {0.5f, -1.0f, 2.0f, 0.25f}) t.add_float_data(v);
  }
  auto& pads = tensor("pads", ::onnx::TensorProto::INT64, {8});
  for (std::int64_t v : {0, 0, 1, 1, 0, 0, 1, 1}) pads.add_int64_data(v);
  auto& scales = tensor("scales", ::onnx::TensorProto::FLOAT, {4});
  for (float v : {1.0f, 1.0f, 2.0f, 2.0f}) scales.add_float_data(v);
  auto& starts = tensor("starts", ::onnx::TensorProto::INT64, {1});
  starts.add_int64_data(1);
  auto& ends = tensor("ends", ::onnx::TensorProto::INT64, {1});
  ends.add_int64_data(9);
  auto& axes = tensor("axes", ::onnx::TensorProto::INT64, {1});
  axes.add_int64_data(3);
  auto node = [&](const std::string& op, std::vector<std::string> inputs, const std::string& output) {
    auto& n = *graph.add_node();
    n.set_op_type(op);
    n.set_name(output + "_node");
    for (auto& i : inputs) n.add_input(i);
    n.add_output(output);
    return &n;
  };
  auto string_attribute = [](::onnx::NodeProto* n, const std::string& name, const std::string& value) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::STRING);
    a->set_s(value);
  };
  node("Conv", {"x", "w1"}, "c1");
  string_attribute(node("Pad", {"c1", "pads"}, "padded"), "mode", "reflect");
  string_attribute(node("Resize", {"padded", "", "scales"}, "resized"), "mode", "nearest");
  node("Slice", {"resized", "starts", "ends", "axes"}, "sliced");
  node("Conv", {"sliced", "w2"}, "y");
  for (auto [name, dims] : {std::pair{"x", std::vector<std::int64_t>{1, 2, 4, 4}}, {"y", {1, 2, 12, 8}}}) {
    auto* value = std::string(name) == "x" ? graph.add_input() : graph.add_output();
    value->set_name(name);
    auto* type = value->mutable_type()->mutable_tensor_type();
    type->set_elem_type(::onnx::TensorProto::FLOAT);
    for (auto d : dims) type->mutable_shape()->add_dim()->set_dim_value(d);
  }
  std::string bytes;
  proto.SerializeToString(&bytes);

  kiln::onnx::HostTensor examples{"x", {TensorShape{8, 2, 4, 4}, DataType::Float32}, {}};
  examples.data.resize(examples.info.num_bytes());
  auto* values = reinterpret_cast<float*>(examples.data.data());
  for (std::size_t i = 0; i < examples.info.num_elements(); ++i) values[i] = std::sin(0.7f * static_cast<float>(i));
  Runtime<RefBackend> runtime;
  auto quantized = kiln::onnx::quantize(std::as_bytes(std::span(bytes)), examples, {}, runtime);
  INFO(quantized.status().message());
  REQUIRE(quantized);
  CHECK(quantized->summary.float_ops.empty());

  // Each mover reads a DequantizeLinear and feeds a QuantizeLinear of the same scale.
  const auto model = parse(quantized->bytes);
  std::map<std::string, const ::onnx::NodeProto*> producer;
  for (const auto& n : model.graph().node()) producer[n.output(0)] = &n;
  for (const char* op : {"Pad", "Resize", "Slice"}) {
    INFO(op);
    const auto mover = std::ranges::find(model.graph().node(), std::string(op), &::onnx::NodeProto::op_type);
    REQUIRE(mover != model.graph().node().end());
    const auto* dq = producer.at(mover->input(0));
    REQUIRE(dq->op_type() == "DequantizeLinear");
    const auto reader = std::ranges::find_if(model.graph().node(), [&](const auto& n) {
      return n.op_type() == "QuantizeLinear" && n.input(0) == mover->output(0);
    });
    REQUIRE(reader != model.graph().node().end());
    CHECK(reader->input(1) == dq->input(1));
  }
  const std::string text = optimized_on_ref(quantized->bytes);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("(Pad) QAsymmU8") && Catch::Contains("(Resize) QAsymmU8") &&
                       Catch::Contains("(StridedSlice) QAsymmU8"));
}

TEST_CASE("the quantiser quantises an attention block's Softmax and MatMuls of two activations, in int8",
          "[quantize]") {
  // tests/models/attention_tiny: Q K^T and P V are MatMuls of two activations, Softmax between.
  kiln::onnx::HostTensor examples{"input", {TensorShape{8, 16, 32}, DataType::Float32}, {}};
  examples.data.resize(examples.info.num_bytes());
  auto* values = reinterpret_cast<float*>(examples.data.data());
  for (std::size_t i = 0; i < examples.info.num_elements(); ++i) values[i] = std::sin(0.37f * static_cast<float>(i));
  Runtime<RefBackend> runtime;
  auto quantized =
      kiln::onnx::quantize(read_bytes(KILN_TEST_MODELS "/attention_tiny/model.onnx"), examples, {}, runtime);
  INFO(quantized.status().message());
  REQUIRE(quantized);
  const auto& float_ops = quantized->summary.float_ops;
  CHECK(std::ranges::find(float_ops, "Softmax") == float_ops.end());
  CHECK(std::ranges::find(float_ops, "MatMul") == float_ops.end());
  const auto model = parse(quantized->bytes);
  std::map<std::string, const ::onnx::NodeProto*> producer;
  for (const auto& n : model.graph().node()) producer[n.output(0)] = &n;
  int two_activation_matmuls = 0;
  for (const auto& n : model.graph().node()) {
    if (n.op_type() != "MatMul" || producer.at(n.input(1))->op_type() != "DequantizeLinear") continue;
    const auto& b_integers = producer.at(n.input(1))->input(0);
    two_activation_matmuls += producer.contains(b_integers) && producer.at(b_integers)->op_type() == "QuantizeLinear";
  }
  CHECK(two_activation_matmuls == 2);
  const std::string text = optimized_on_ref(quantized->bytes);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("(Softmax) QAsymmU8") && Catch::Contains("(BatchMatMul) QAsymmU8"));
}

TEST_CASE("the quantiser refuses what it cannot quantise, saying why", "[quantize]") {
  const auto model = read_bytes(digits + "digits_cnn.onnx");
  auto images = kiln::onnx::read_tensor_file(digits + "test_images.npy");
  REQUIRE(images);
  Runtime<RefBackend> runtime;
  auto message = [](const auto& result) { return std::string(result.status().message()); };

  auto proto = parse(model);
  proto.mutable_opset_import(0)->set_version(11);
  std::string old_opset;
  proto.SerializeToString(&old_opset);
  auto refused = kiln::onnx::write_qdq_model(std::as_bytes(std::span(old_opset)), {});
  REQUIRE(!refused);
  CHECK_THAT(message(refused), Catch::Contains("per channel need opset 13"));

  auto poisoned = parse(model);
  for (auto& t : *poisoned.mutable_graph()->mutable_initializer())
    if (t.name() == "onnx::Conv_29") {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      t.mutable_raw_data()->replace(0, sizeof nan, reinterpret_cast<const char*>(&nan), sizeof nan);
    }
  std::string nan_weights;
  poisoned.SerializeToString(&nan_weights);
  auto no_integer = kiln::onnx::write_qdq_model(std::as_bytes(std::span(nan_weights)),
                                                ort_ranges(fixtures + "digits_ort_ranges.txt"));
  REQUIRE(!no_integer);
  CHECK_THAT(message(no_integer), Catch::Contains("'onnx::Conv_29' holds an infinity or NaN"));

  auto twice = kiln::onnx::write_qdq_model(read_bytes(fixtures + "digits_qdq_u8.onnx"), {});
  REQUIRE(!twice);
  CHECK_THAT(message(twice), Catch::Contains("quantised already"));

  QuantizeOptions wrong_type;
  wrong_type.activations = DataType::Float32;
  CHECK(!kiln::onnx::write_qdq_model(model, {}, wrong_type));

  kiln::onnx::HostTensor wrong_shape = *images;
  wrong_shape.info.shape = TensorShape{360, 64};
  auto bad_examples = kiln::onnx::quantize(model, wrong_shape, {}, runtime);
  REQUIRE(!bad_examples);
  CHECK_THAT(message(bad_examples), Catch::Contains("not a batch of the model's input"));

  const std::byte junk[] = {std::byte{1}, std::byte{2}, std::byte{3}};
  CHECK(!kiln::onnx::quantize(junk, *images, {}, runtime));
}
