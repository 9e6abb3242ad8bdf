// SPDX-License-Identifier: Apache-2.0
// graph/: the builder, shape inference, and every way a network can be malformed.
#include <catch2/catch.hpp>
#include <kiln/graph/network.hpp>

using namespace kiln;

namespace {
std::string infer_error(Network& net) {
  const Status status = net.infer_shapes();
  REQUIRE_FALSE(status);
  CHECK(status.code() != ErrorCode::Ok);
  return status.message();
}
}  // namespace

TEST_CASE("infer_shapes propagates shapes through a small CNN", "[graph]") {
  Network net;
  auto x = net.add_input(0, {{1, 9, 9, 3}}, "image");
  auto w = net.add_constant<float>({{8, 3, 3, 3}}, std::vector<float>(8 * 27), "w");
  auto conv = net.add<ops::Convolution2d>({.padding = {1, 1, 1, 1}, .stride = {2, 2}}, {x, w}, "conv");
  auto pool = net.add<ops::Pooling2d>({.kind = ops::PoolingKind::Average, .global = true}, {conv}, "gap");
  auto flat = net.add<ops::Reshape>({{1, -1}}, {pool}, "flatten");
  auto parts = net.add<ops::Split>({.axis = 1, .sizes = {3, 5}}, {flat}, "split");
  net.add_output(0, parts, "first");
  net.add_output(1, net.output(parts.layer, 1), "second");
  REQUIRE(net.infer_shapes());
  CHECK(net.shapes_inferred());
  CHECK(net.tensor_info(conv).shape == TensorShape{1, 5, 5, 8});
  CHECK(net.tensor_info(pool).shape == TensorShape{1, 1, 1, 8});
  CHECK(net.tensor_info(flat).shape == TensorShape{1, 8});
  CHECK(net.tensor_info(net.output(parts.layer, 1)).shape == TensorShape{1, 5});
  CHECK(net.layer(conv.layer).name == "conv");
  CHECK(net.layer(conv.layer).op_name() == "Convolution2d");
  CHECK(net.execution_order().size() == net.num_layers());
}

TEST_CASE("Layers get default names and no-longer-needed layers are not executed", "[graph]") {
  Network net;
  auto x = net.add_input(0, {{4}});
  auto unused = net.add<ops::ElementwiseUnary>({ops::UnaryOperation::Exp}, {x});
  net.add_output(0, net.add<ops::Activation>({}, {x}));
  REQUIRE(net.infer_shapes());
  CHECK(net.layer(unused.layer).name == "ElementwiseUnary_1");
  CHECK(net.execution_order().size() == 3);
  for (LayerId id : net.execution_order()) CHECK(id != unused.layer);
}

TEST_CASE("A network with an unconnected input is rejected, naming layer and slot", "[graph][errors]") {
  Network net;
  auto x = net.add_input(0, {{4}}, "x");
  const LayerId add = net.add_layer<ops::ElementwiseBinary>({}, 2, "sum");
  REQUIRE(net.connect(x, add, 0));
  net.add_output(0, {add, 0}, "y");
  CHECK(infer_error(net) == "input 1 of layer 'sum' (ElementwiseBinary) is not connected");
}

TEST_CASE("A cycle is rejected, naming the layers on it", "[graph][errors]") {
  Network net;
  auto x = net.add_input(0, {{4}}, "x");
  const LayerId a = net.add_layer<ops::ElementwiseBinary>({}, 2, "a");
  const LayerId b = net.add_layer<ops::Activation>({}, 1, "b");
  REQUIRE(net.connect(x, a, 0));
  REQUIRE(net.connect({b, 0}, a, 1));
  REQUIRE(net.connect({a, 0}, b, 0));
  net.add_output(0, {b, 0}, "y");
  CHECK(infer_error(net) == "the network has a cycle through layers 'a', 'b'");
}

TEST_CASE("Duplicate binding ids are rejected", "[graph][errors]") {
  Network net;
  auto x = net.add_input(0, {{4}}, "x");
  auto y = net.add_input(0, {{4}}, "y");
  net.add_output(0, net.add<ops::ElementwiseBinary>({}, {x, y}), "z");
  CHECK(infer_error(net) == "input binding id 0 is used by both layer 'x' (Input) and layer 'y' (Input)");
  Network outputs;
  auto a = outputs.add_input(0, {{4}}, "a");
  outputs.add_output(5, a, "o1");
  outputs.add_output(5, a, "o2");
  CHECK(infer_error(outputs) == "output binding id 5 is used by both layer 'o1' (Output) and layer 'o2' (Output)");
}

TEST_CASE("Wrong input counts, bad ids and missing outputs are rejected", "[graph][errors]") {
  Network net;
  auto x = net.add_input(0, {{4}}, "x");
  net.add_output(0, net.add<ops::Activation>({}, {x, x}, "act"), "y");
  CHECK(infer_error(net) == "layer 'act' (Activation) has 2 inputs; it takes 1");

  Network bad_id;
  auto in = bad_id.add_input(0, {{4}}, "x");
  CHECK_FALSE(bad_id.connect({7, 0}, 0, 0));
  CHECK_FALSE(bad_id.connect(in, 9, 0));
  CHECK_FALSE(bad_id.connect({in.layer, 3}, 0, 0));
  bad_id.add_output(0, in, "y");
  CHECK(infer_error(bad_id) == "cannot connect from layer id 7: the network has 1 layers");

  Network no_output;
  no_output.add_input(0, {{4}}, "x");
  CHECK(infer_error(no_output) == "the network has no Output layer");
}

TEST_CASE("Shape and type mismatches and bad descriptor values name the layer", "[graph][errors]") {
  Network net;
  auto x = net.add_input(0, {{1, 4, 4, 2}}, "x");
  auto w = net.add_constant<float>({{3, 3, 3, 5}}, std::vector<float>(135), "w");
  net.add_output(0, net.add<ops::Convolution2d>({}, {x, w}, "conv1"), "y");
  CHECK(infer_error(net) ==
        "layer 'conv1' (Convolution2d): weights [3, 3, 3, 5] expect 5 input channels (5 per group x 1 groups) "
        "but input [1, 4, 4, 2] has 2");

  Network pool;
  auto p = pool.add_input(0, {{1, 4, 4, 2}}, "x");
  pool.add_output(0, pool.add<ops::Pooling2d>({.window = {2, 2}, .stride = {0, 1}}, {p}, "pool1"), "y");
  CHECK(infer_error(pool) == "layer 'pool1' (Pooling2d): stride height is zero");

  Network axis;
  auto a = axis.add_input(0, {{2, 3}}, "x");
  axis.add_output(0, axis.add<ops::Concat>({.axis = -3}, {a, a}, "cat"), "y");
  CHECK(infer_error(axis) == "layer 'cat' (Concat): axis -3 is out of range for a tensor of rank 2 (valid: -2 to 1)");

  Network input_rank;
  input_rank.add_output(0, input_rank.add_input(0, {{1, 1, 1, 1, 1, 1, 1}}, "x"), "y");
  CHECK(infer_error(input_rank) == "layer 'x' (Input): tensor has 7 dimensions; kiln supports at most 6");

  // A list parameter past its capacity (ops' parameters hold their lists in place: decision 0021).
  Network reshape;
  auto r = reshape.add_input(0, {{2, 3}}, "x");
  reshape.add_output(0, reshape.add<ops::Reshape>({.shape = std::vector<std::int64_t>(7, 1)}, {r}, "flat"), "y");
  CHECK(infer_error(reshape) == "layer 'flat' (Reshape): target shape has more than 6 entries");
  Network split;
  auto sx = split.add_input(0, {{65}}, "x");
  split.add_output(0, split.add<ops::Split>({.sizes = std::vector<std::uint32_t>(65, 1)}, {sx}, "parts"), "y");
  CHECK(infer_error(split) == "layer 'parts' (Split): split sizes has more than 64 entries");

  Network constant;
  constant.add_output(0, constant.add_constant<float>({{4}}, std::vector<float>(3), "c"), "y");
  CHECK(infer_error(constant) == "layer 'c' (Constant): constant Float32 [4] needs 16 bytes of data, got 12");
}

TEST_CASE("Declared output types: quantisation replaced, conversions typed, mismatches named", "[graph]") {
  const QuantizationInfo input_q{{0.5f}, 10, {}}, reread_q{{0.25f}, 3, {}}, output_q{{0.25f}, -3, {}};
  Network net;
  auto x = net.add_input(0, {{2, 3}, DataType::QAsymmU8, input_q}, "x");
  auto kept = net.add<ops::Reshape>({{3, 2}}, {x}, "kept");
  auto declared = net.add<ops::Reshape>({{6}}, {x}, "declared");
  REQUIRE(net.set_output_type(declared, DataType::QAsymmU8, reread_q));
  auto real = net.add<ops::Dequantize>({}, {declared}, "real");
  auto again = net.add<ops::Quantize>({}, {real}, "again");
  REQUIRE(net.set_output_type(again, DataType::QAsymmS8, output_q));
  for (auto slot : {kept, again}) net.add_output(slot.layer, slot);
  const Status inferred = net.infer_shapes();
  INFO(inferred.message());
  REQUIRE(inferred);
  CHECK(net.tensor_info(kept) == TensorInfo{{3, 2}, DataType::QAsymmU8, input_q});
  CHECK(net.tensor_info(declared) == TensorInfo{{6}, DataType::QAsymmU8, reread_q});
  CHECK(net.tensor_info(real) == TensorInfo{{6}, DataType::Float32, {}});
  CHECK(net.tensor_info(again) == TensorInfo{{6}, DataType::QAsymmS8, output_q});
  CHECK(net.tensor_info(again).to_string() == "QAsymmS8 [6] (scale 0.25, zero point -3)");

  Network retyped;
  auto y = retyped.add<ops::Reshape>({{6}}, {retyped.add_input(0, {{2, 3}, DataType::QAsymmU8, input_q}, "x")}, "r");
  REQUIRE(retyped.set_output_type(y, DataType::QAsymmS8, output_q));
  retyped.add_output(0, y, "y");
  CHECK(infer_error(retyped) ==
        "layer 'r' (Reshape): output 0 is declared QAsymmS8 but Reshape produces QAsymmU8 "
        "from its inputs");

  Network float_scale;
  auto f = float_scale.add<ops::Reshape>({{6}}, {float_scale.add_input(0, {{2, 3}}, "x")}, "r");
  REQUIRE(float_scale.set_output_type(f, DataType::Float32, output_q));
  float_scale.add_output(0, f, "y");
  CHECK(infer_error(float_scale) ==
        "layer 'r' (Reshape): output 0 is declared Float32 with a quantisation; only quantised types have one");

  Network undeclared;
  undeclared.add_output(0, undeclared.add<ops::Quantize>({}, {undeclared.add_input(0, {{4}}, "x")}, "q"), "y");
  CHECK(infer_error(undeclared) ==
        "layer 'q' (Quantize): output 0 needs its data type and quantisation declared "
        "with Network::set_output_type: Quantize converts to the type the user chooses");

  Network no_such_slot;
  CHECK_FALSE(no_such_slot.set_output_type({3, 0}, DataType::QAsymmU8, output_q));
}

namespace {
constexpr bool build_and_infer_at_compile_time() {
  Network net;
  net.reserve(4);  // no Layer moved (Network::reserve says why)
  auto x = net.add_input(0, {{1, 4, 4, 2}}, "x");
  auto y = net.add<ops::Pooling2d>({.window = {2, 2}, .stride = {2, 2}}, {x}, "pool");
  auto z = net.add<ops::Transpose>({{0, 3, 1, 2}}, {y}, "to_nchw");
  net.add_output(0, z, "y");
  return net.infer_shapes().is_ok() && net.tensor_info(z).shape == TensorShape{1, 2, 2, 2} &&
         net.execution_order().size() == 4;
}
}  // namespace

TEST_CASE("A network can be built and validated in a constant expression", "[graph][constexpr]") {
#if KILN_TEST_CONSTEXPR_STRING
  static_assert(build_and_infer_at_compile_time());
#endif
  CHECK(build_and_infer_at_compile_time());
}
