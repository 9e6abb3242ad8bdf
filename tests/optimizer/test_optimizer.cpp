// SPDX-License-Identifier: Apache-2.0
// optimizer/: backend assignment by preference and support, fallback, and the errors when no backend fits.
#include <cmath>

#include <catch2/catch.hpp>
#include <kiln/kiln.hpp>

using namespace kiln;

namespace test_backends {
struct Context {
  int runs = 0;
};
}  // namespace test_backends

/// A backend that implements only Activation, and only ReLU, to exercise assignment and fallback.
struct ReluOnlyBackend {
  using fallback = void;
  static constexpr std::string_view id = "ReluOnly";
  static constexpr std::size_t alignment = 16;
  using memory = HostMemory;
  using context = test_backends::Context;
  static bool available() noexcept { return true; }
};

/// Implements everything RefBackend does (it falls back to it) but is never available.
struct UnavailableBackend {
  using fallback = RefBackend;
  static constexpr std::string_view id = "Unavailable";
  static constexpr std::size_t alignment = 64;
  using memory = HostMemory;
  using context = ref::Context;
  static bool available() noexcept { return false; }
};

template <>
struct kiln::Workload<ops::Activation, ReluOnlyBackend, DataType::Float32> {
  static Status is_supported(const WorkloadInfo<ops::Activation>& info) {
    if (info.params.function != ops::ActivationFunction::ReLU)
      return Status::error(ErrorCode::Unsupported, "runs ReLU only");
    return Status::ok();
  }
  explicit Workload(const WorkloadInfo<ops::Activation>&) {}
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, test_backends::Context& context) const {
    ++context.runs;
    const auto x = in[0].as<float>();
    const auto y = out[0].as<float>();
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0 ? x[i] : 0.0f;
  }
};

static_assert(supports_v<ops::Activation, ReluOnlyBackend>);
static_assert(has_own_workload_v<ops::Activation, ReluOnlyBackend, DataType::Float32>);
static_assert(!has_own_workload_v<ops::Activation, ReluOnlyBackend, DataType::QAsymmS8>);
static_assert(!supports_v<ops::Convolution2d, ReluOnlyBackend>);
static_assert(supports_v<ops::Convolution2d, UnavailableBackend>, "inherited from its fallback");
static_assert(all_ops_supported_v<RefBackend> && !all_ops_supported_v<ReluOnlyBackend>);

namespace {
/// x -> relu -> exp -> relu6 -> y
Network small_network() {
  Network net;
  auto x = net.add_input(0, {{4}}, "x");
  auto r = net.add<ops::Activation>({ops::ActivationFunction::ReLU}, {x}, "relu");
  auto e = net.add<ops::ElementwiseUnary>({ops::UnaryOperation::Exp}, {r}, "exp");
  net.add_output(0, net.add<ops::Activation>(ops::Activation::relu6(), {e}, "relu6"), "y");
  return net;
}
LayerId layer_named(const Network& net, std::string_view name) {
  for (LayerId id = 0; id < net.num_layers(); ++id)
    if (net.layer(id).name == name) return id;
  FAIL("no layer " << name);
  return 0;
}
/// Loads small_network() as optimized and runs it on x = [-1, 0, 1, 2].
template <class... Bs>
std::vector<float> run_small(const OptimizedNetwork<Bs...>& optimized) {
  Runtime<Bs...> runtime;
  auto id = runtime.load(optimized);
  REQUIRE(id);
  std::vector<float> in{-1, 0, 1, 2}, out(4);
  const InputBinding inputs[] = {{0, {{{4}}, in.data()}}};
  const OutputBinding outputs[] = {{0, {{{4}}, out.data()}}};
  REQUIRE(runtime.enqueue(*id, inputs, outputs));
  return out;
}
}  // namespace

TEST_CASE("Each layer goes to the first backend that supports it; the rest fall back", "[optimizer]") {
  auto optimized = optimize<ReluOnlyBackend, RefBackend>(small_network());
  REQUIRE(optimized);
  const Network& net = optimized->network();
  CHECK(optimized->backend_id(layer_named(net, "relu")) == "ReluOnly");
  CHECK(optimized->backend_id(layer_named(net, "exp")) == "CpuRef");    // op not implemented
  CHECK(optimized->backend_id(layer_named(net, "relu6")) == "CpuRef");  // is_supported said no
  CHECK(optimized->backend_id(layer_named(net, "x")).empty());
  // Each line names the workload's data type and why the preferred backend passed the layer over.
  CHECK(optimized->to_string() ==
        "x (Input) Float32 [4]\n"
        "relu (Activation) Float32 [4] -> ReluOnly (Float32)\n"
        "exp (ElementwiseUnary) Float32 [4] -> CpuRef (Float32); ReluOnly: no ElementwiseUnary workload\n"
        "relu6 (Activation) Float32 [4] -> CpuRef (Float32); ReluOnly: runs ReLU only\n"
        "y (Output)\n");

  // The mixed network computes what a RefBackend-only one computes.
  const auto out = run_small(*optimized);
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == 1.0f);
  CHECK(out[2] == Approx(std::exp(1.0f)));
  CHECK(out[3] == 6.0f);
}

TEST_CASE("A preference list reorders and restricts the backends", "[optimizer]") {
  auto ref_first = optimize<ReluOnlyBackend, RefBackend>(small_network(), {{"CpuRef", "ReluOnly"}});
  REQUIRE(ref_first);
  CHECK(ref_first->backend_id(layer_named(ref_first->network(), "relu")) == "CpuRef");

  auto only = optimize<ReluOnlyBackend, RefBackend>(small_network(), {{"ReluOnly"}});
  REQUIRE_FALSE(only);
  CHECK(only.status().code() == ErrorCode::Unsupported);
  CHECK(only.status().message() ==
        "layer 'exp' (ElementwiseUnary) Float32 cannot run on any backend: ReluOnly: no ElementwiseUnary workload");

  auto unknown = optimize<ReluOnlyBackend, RefBackend>(small_network(), {{"GpuAcc"}});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.status().message() == "backend 'GpuAcc' is not compiled into this runtime; it has ReluOnly, CpuRef");
}

TEST_CASE("An unavailable backend is skipped with its reason", "[optimizer]") {
  auto optimized = optimize<UnavailableBackend, RefBackend>(small_network());
  REQUIRE(optimized);
  CHECK(optimized->backend_id(layer_named(optimized->network(), "exp")) == "CpuRef");
  // Both backends use ref::Context; each still gets its own, and the network runs.
  CHECK(run_small(*optimized)[3] == 6.0f);
  Runtime<UnavailableBackend, RefBackend> runtime;
  CHECK(&runtime.context<UnavailableBackend>() != &runtime.context<RefBackend>());
  auto forced = optimize<UnavailableBackend, RefBackend>(small_network(), {{"Unavailable"}});
  REQUIRE_FALSE(forced);
  CHECK_THAT(forced.status().message(), Catch::Contains("Unavailable: not available on this machine"));
}

TEST_CASE("A data type no backend runs fails naming the layer and every reason", "[optimizer][errors]") {
  Network net;
  auto x = net.add_input(0, {{4}, DataType::Signed32}, "x");
  net.add_output(0, net.add<ops::Activation>({}, {x}, "act"), "y");
  auto optimized = optimize<ReluOnlyBackend, RefBackend>(std::move(net));
  REQUIRE_FALSE(optimized);
  CHECK(optimized.status().message() ==
        "layer 'act' (Activation) Signed32 cannot run on any backend: ReluOnly: no Signed32 workload; "
        "CpuRef: no Signed32 workload");
}

TEST_CASE("optimize reports graph errors before assigning", "[optimizer][errors]") {
  Network net;
  net.add_input(0, {{4}}, "x");
  auto optimized = optimize<RefBackend>(std::move(net));
  REQUIRE_FALSE(optimized);
  CHECK(optimized.status().code() == ErrorCode::InvalidNetwork);
}

/// Its own Activation workload runs ReLU only; every other activation is left to the workload it
/// inherits from RefBackend.
struct PickyBackend {
  using fallback = RefBackend;
  static constexpr std::string_view id = "Picky";
  static constexpr std::size_t alignment = 64;
  using memory = HostMemory;
  using context = ref::Context;
  static bool available() noexcept { return true; }
};

template <>
struct kiln::Workload<ops::Activation, PickyBackend, DataType::Float32> {
  static Status is_supported(const WorkloadInfo<ops::Activation>& info) {
    if (info.params.function != ops::ActivationFunction::ReLU)
      return Status::error(ErrorCode::Unsupported, "runs ReLU only");
    return Status::ok();
  }
  explicit Workload(const WorkloadInfo<ops::Activation>&) {}
  void run(std::span<const ConstTensor>, std::span<const Tensor> out, ref::Context&) const {
    for (float& y : out[0].as<float>()) y = -42.0f;  // a marker: this workload ran
  }
};

TEST_CASE("A backend whose own workload refuses a layer runs it with the workload it inherits", "[optimizer]") {
  auto optimized = optimize<PickyBackend>(small_network());
  REQUIRE(optimized);
  const Network& net = optimized->network();
  CHECK(optimized->backend_id(layer_named(net, "relu")) == "Picky");
  CHECK(optimized->assignment(layer_named(net, "relu")).level == 0);
  CHECK(optimized->backend_id(layer_named(net, "relu6")) == "Picky");
  CHECK(optimized->assignment(layer_named(net, "relu6")).level == 1);  // RefBackend's, inherited
  CHECK(optimized->assignment(layer_named(net, "relu6")).workload->backend == "CpuRef");
  CHECK_THAT(optimized->to_string(),
             Catch::Contains("relu6 (Activation) Float32 [4] -> Picky (Float32, CpuRef's); Picky: runs ReLU only"));
  const auto out = run_small(*optimized);
  // relu -> -42 (Picky's marker), exp -> e^-42 ~ 0, relu6 (Ref's) -> ~0.
  for (float y : out) CHECK(y == Approx(0.0f).margin(1e-12));
  CHECK(out[0] >= 0.0f);
}

namespace {
/// x [1, 1, 3, 1] -> conv 1x1 (weight 2, bias 1) -> batch norm -> relu6 -> y, and a second reader
/// of the convolution's output when `conv_also_output`.
Network conv_bn_relu6(bool conv_also_output) {
  Network net;
  auto x = net.add_input(0, {{1, 1, 3, 1}}, "x");
  auto w = net.add_constant<float>({{1, 1, 1, 1}}, std::vector<float>{2}, "w");
  auto b = net.add_constant<float>({{1}}, std::vector<float>{1}, "b");
  auto conv = net.add<ops::Convolution2d>({}, {x, w, b}, "conv");
  auto stat = [&](float v, const char* name) { return net.add_constant<float>({{1}}, std::vector<float>{v}, name); };
  auto bn = net.add<ops::BatchNormalization>(
      {.epsilon = 0.0f}, {conv, stat(1, "mean"), stat(4, "variance"), stat(0.5f, "beta"), stat(2, "gamma")}, "bn");
  net.add_output(0, net.add<ops::Activation>(ops::Activation::relu6(), {bn}, "relu6"), "y");
  if (conv_also_output) net.add_output(1, conv, "conv_out");
  return net;
}

std::vector<float> run_conv_bn_relu6(const optimized_network_t<RefBackend>& optimized) {
  Runtime<RefBackend> runtime;
  auto id = runtime.load(optimized);
  REQUIRE(id);
  std::vector<float> x{-2, 0, 3}, y(3), conv(3);
  std::vector<InputBinding> inputs{{0, {*runtime.input_info(*id, 0), x.data()}}};
  std::vector<OutputBinding> outputs{{0, {*runtime.output_info(*id, 0), y.data()}}};
  if (auto info = runtime.output_info(*id, 1)) outputs.push_back({1, {*info, conv.data()}});
  REQUIRE(runtime.enqueue(*id, inputs, outputs));
  return y;
}
}  // namespace

TEST_CASE("Batch normalization folds into the convolution and the activation fuses into it", "[optimizer][passes]") {
  // conv = 2x + 1 = {-3, 1, 7}; bn = (conv - 1) * 2 / sqrt(4) + 0.5 = {-3.5, 0.5, 6.5}; relu6 = {0, 0.5, 6}.
  const std::vector<float> expected{0, 0.5f, 6};
  auto fused = optimize<RefBackend>(conv_bn_relu6(false));
  REQUIRE(fused);
  const std::string text = fused->to_string();
  CHECK_THAT(text, Catch::Contains("conv (Convolution2d + BoundedReLU)"));
  CHECK_THAT(text, !Catch::Contains("bn (BatchNormalization)") && !Catch::Contains("relu6 (Activation)"));
  CHECK_THAT(text, Catch::Contains("conv/folded_weights") && Catch::Contains("conv/folded_bias"));
  CHECK(run_conv_bn_relu6(*fused) == expected);

  auto unfused = optimize<RefBackend>(conv_bn_relu6(false), {.fold_batch_norms = false, .fuse_activations = false});
  REQUIRE(unfused);
  CHECK_THAT(unfused->to_string(), Catch::Contains("bn (BatchNormalization)") && Catch::Contains("relu6 (Activation)"));
  CHECK(run_conv_bn_relu6(*unfused) == expected);
}

TEST_CASE("A convolution whose output has another reader is neither folded nor fused", "[optimizer][passes]") {
  auto optimized = optimize<RefBackend>(conv_bn_relu6(true));
  REQUIRE(optimized);
  const std::string text = optimized->to_string();
  CHECK_THAT(text, Catch::Contains("conv (Convolution2d)") && Catch::Contains("bn (BatchNormalization)") &&
                       Catch::Contains("relu6 (Activation)"));
  CHECK(run_conv_bn_relu6(*optimized) == std::vector<float>{0, 0.5f, 6});
}

namespace {
/// A QDQ network as ONNX Runtime's quantiser writes one: x -> Quantize -> Dequantize -> conv 1x1 with
/// Dequantize'd int8 weights and int32 bias -> Quantize -> Dequantize -> y. The values of the int8
/// convolution test: real outputs x + 1 and -x - 1, on a grid of 0.25. `chained` adds a second
/// such convolution, an identity, between the first and y; `reshaped` takes x as [4] and reshapes
/// and transposes its dequantized values into the convolution's [1, 2, 2, 1], as the ONNX importer
/// does to an NCHW input.
Network qdq_convolution(bool chained = false, bool reshaped = false) {
  Network net;
  const QuantizationInfo x_q{{0.5f}, 10, {}}, y_q{{0.25f}, 100, {}};
  auto x = net.add<ops::Quantize>({}, {net.add_input(0, {{reshaped ? TensorShape{4} : TensorShape{1, 2, 2, 1}}}, "x")},
                                  "quantize_x");
  (void)net.set_output_type(x, DataType::QAsymmU8, x_q);
  auto x_real = net.add<ops::Dequantize>({}, {x}, "dequantize_x");
  if (reshaped)
    x_real = net.add<ops::Transpose>({{0, 2, 1, 3}}, {net.add<ops::Reshape>({{1, 2, 2, 1}}, {x_real}, "to_nhwc")},
                                     "transpose");
  auto w = net.add_constant<std::int8_t>({{2, 1, 1, 1}, DataType::QSymmS8, {{0.25f, 0.5f}, 0, 0u}},
                                         std::vector<std::int8_t>{4, -2}, "w");
  auto b = net.add_constant<std::int32_t>({{2}, DataType::Signed32, {{0.125f, 0.25f}, 0, 0u}},
                                          std::vector<std::int32_t>{8, -4}, "b");
  auto conv = net.add<ops::Convolution2d>(
      {},
      {x_real, net.add<ops::Dequantize>({}, {w}, "dequantize_w"), net.add<ops::Dequantize>({}, {b}, "dequantize_b")},
      "conv");
  auto y = net.add<ops::Quantize>({}, {conv}, "quantize_y");
  (void)net.set_output_type(y, DataType::QAsymmU8, y_q);
  if (chained) {
    auto identity = net.add_constant<std::int8_t>({{2, 1, 1, 2}, DataType::QSymmS8, {{1.0f}, 0, {}}},
                                                  std::vector<std::int8_t>{1, 0, 0, 1}, "identity");
    auto copy = net.add<ops::Convolution2d>(
        {},
        {net.add<ops::Dequantize>({}, {y}, "dequantize_y1"), net.add<ops::Dequantize>({}, {identity}, "dequantize_i")},
        "copy");
    y = net.add<ops::Quantize>({}, {copy}, "quantize_y2");
    (void)net.set_output_type(y, DataType::QAsymmU8, y_q);
  }
  net.add_output(0, net.add<ops::Dequantize>({}, {y}, "dequantize_y"), "y");
  return net;
}

/// Output 0 (`size` floats) of `optimized` run on RefBackend with inputs 0, 1, ... = `inputs`.
std::vector<float> run_on_ref(const optimized_network_t<RefBackend>& optimized, std::vector<std::vector<float>> inputs,
                              std::size_t size) {
  Runtime<RefBackend> runtime;
  auto id = runtime.load(optimized);
  REQUIRE(id);
  std::vector<InputBinding> bindings;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    bindings.push_back(
        {static_cast<BindingId>(i), {*runtime.input_info(*id, static_cast<BindingId>(i)), inputs[i].data()}});
  std::vector<float> y(size);
  const std::vector<OutputBinding> outputs{{0, {*runtime.output_info(*id, 0), y.data()}}};
  REQUIRE(runtime.enqueue(*id, bindings, outputs));
  return y;
}

std::vector<float> run_qdq_convolution(const optimized_network_t<RefBackend>& optimized) {
  return run_on_ref(optimized, {{1, -1, 0, 10}}, 8);
}
/// Input `binding` of `shape` quantised to QAsymmU8 with `q`, then dequantized: what a QDQ model
/// feeds a float layer.
OutputSlot dequantized_input(Network& net, BindingId binding, const std::string& name, TensorShape shape,
                             QuantizationInfo q) {
  auto x = net.add<ops::Quantize>({}, {net.add_input(binding, {shape}, name)}, "quantize_" + name);
  (void)net.set_output_type(x, DataType::QAsymmU8, std::move(q));
  return net.add<ops::Dequantize>({}, {x}, "dequantize_" + name);
}

/// `y` quantised to QAsymmU8 with `q` (layer "quantize_y"), dequantized and made output 0.
void add_quantized_output(Network& net, OutputSlot y, QuantizationInfo q) {
  auto quantized = net.add<ops::Quantize>({}, {y}, "quantize_y");
  (void)net.set_output_type(quantized, DataType::QAsymmU8, std::move(q));
  net.add_output(0, net.add<ops::Dequantize>({}, {quantized}, "dequantize_y"), "y");
}

}  // namespace

TEST_CASE("Dequantize -> convolution -> Quantize becomes an int8 convolution", "[optimizer][passes][int8]") {
  const std::vector<float> expected{2, -2, 0, 0, 1, -1, 11, -11};
  auto fused = optimize<RefBackend>(qdq_convolution());
  REQUIRE(fused);
  const std::string text = fused->to_string();
  INFO(text);
  CHECK_THAT(text, Catch::Contains("conv (Convolution2d) QAsymmU8 [1, 2, 2, 2] (scale 0.25, zero point 100) -> "
                                   "CpuRef (QAsymmU8)"));
  CHECK_THAT(text, !Catch::Contains("quantize_y (Quantize)") && !Catch::Contains("dequantize_x") &&
                       !Catch::Contains("dequantize_w") && !Catch::Contains("dequantize_b"));
  CHECK(run_qdq_convolution(*fused) == expected);

  // Unfused, the convolution runs in Float32 on weights and bias folded at load: the same values here.
  auto unfused = optimize<RefBackend>(qdq_convolution(), {.fuse_quantized_layers = false});
  REQUIRE(unfused);
  const std::string float_text = unfused->to_string();
  INFO(float_text);
  CHECK_THAT(float_text, Catch::Contains("conv (Convolution2d) Float32") && Catch::Contains("quantize_y (Quantize)") &&
                             Catch::Contains("dequantize_w/folded") && !Catch::Contains("dequantize_w (Dequantize)"));
  CHECK(run_qdq_convolution(*unfused) == expected);

  // A chain of them: each reads the int8 output of the one before.
  auto chain = optimize<RefBackend>(qdq_convolution(true));
  REQUIRE(chain);
  const std::string chain_text = chain->to_string();
  INFO(chain_text);
  CHECK_THAT(chain_text, Catch::Contains("copy (Convolution2d) QAsymmU8") && !Catch::Contains("quantize_y2"));
  CHECK(run_qdq_convolution(*chain) == expected);

  // Reshaped and transposed after the Dequantize: the Dequantize moves past both, which then move
  // the 8-bit values, and the convolution fuses. The transpose swaps pixels 1 and 2.
  const std::vector<float> transposed{2, -2, 1, -1, 0, 0, 11, -11};
  auto moved = optimize<RefBackend>(qdq_convolution(false, true));
  REQUIRE(moved);
  const std::string moved_text = moved->to_string();
  INFO(moved_text);
  CHECK_THAT(moved_text, Catch::Contains("to_nhwc (Reshape) QAsymmU8") &&
                             Catch::Contains("transpose (Transpose) QAsymmU8") &&
                             Catch::Contains("conv (Convolution2d) QAsymmU8") && !Catch::Contains("dequantize_x"));
  CHECK(run_qdq_convolution(*moved) == transposed);
  auto kept = optimize<RefBackend>(qdq_convolution(false, true), {.fuse_quantized_layers = false});
  REQUIRE(kept);
  CHECK_THAT(kept->to_string(),
             Catch::Contains("to_nhwc (Reshape) Float32") && Catch::Contains("dequantize_x (Dequantize)"));
  CHECK(run_qdq_convolution(*kept) == transposed);
}

TEST_CASE("Dequantize -> Pooling2d -> Quantize becomes an int8 pooling", "[optimizer][passes][int8]") {
  // x [1, 2, 2, 1] quantised at 0.5, zero point 10: 1, -1, 0, 10 -> q 12, 8, 10, 30. Max 10 -> at
  // scale 0.25 (zero point 100) 140; average 2.5 -> 10 -> 110.
  for (const ops::PoolingKind kind : {ops::PoolingKind::Max, ops::PoolingKind::Average}) {
    Network net;
    auto pooled = net.add<ops::Pooling2d>({.kind = kind, .global = true},
                                          {dequantized_input(net, 0, "x", {1, 2, 2, 1}, {{0.5f}, 10, {}})}, "pool");
    add_quantized_output(net, pooled, {{0.25f}, 100, {}});
    auto fused = optimize<RefBackend>(net);
    REQUIRE(fused);
    const std::string text = fused->to_string();
    INFO(text);
    CHECK_THAT(text, Catch::Contains("pool (Pooling2d) QAsymmU8 [1, 1, 1, 1] (scale 0.25, zero point 100) -> "
                                     "CpuRef (QAsymmU8)") &&
                         !Catch::Contains("quantize_y (Quantize)") && !Catch::Contains("dequantize_x"));
    CHECK(run_on_ref(*fused, {{1, -1, 0, 10}}, 1)[0] == (kind == ops::PoolingKind::Max ? 10.0f : 2.5f));
  }
}

TEST_CASE("Dequantize x2 -> Add -> Quantize becomes an int8 Add", "[optimizer][passes][int8]") {
  // x = 1, -1, 0, 10 at scale 0.5, zero point 10; u = 1, 0, -10, 0.5 at 0.25, zero point 100; the
  // sum 2, -1, -10, 10.5 at 0.5, zero point 20 is exact.
  Network net;
  auto sum = net.add<ops::ElementwiseBinary>({ops::BinaryOperation::Add},
                                             {dequantized_input(net, 0, "x", {1, 2, 2, 1}, {{0.5f}, 10, {}}),
                                              dequantized_input(net, 1, "u", {1, 2, 2, 1}, {{0.25f}, 100, {}})},
                                             "add");
  add_quantized_output(net, sum, {{0.5f}, 20, {}});
  auto fused = optimize<RefBackend>(net);
  REQUIRE(fused);
  const std::string text = fused->to_string();
  INFO(text);
  CHECK_THAT(text, Catch::Contains("add (ElementwiseBinary) QAsymmU8 [1, 2, 2, 1] (scale 0.5, zero point 20) -> "
                                   "CpuRef (QAsymmU8)") &&
                       !Catch::Contains("quantize_y (Quantize)"));
  CHECK(run_on_ref(*fused, {{1, -1, 0, 10}, {1, 0, -10, 0.5f}}, 4) == std::vector<float>{2, -1, -10, 10.5f});
}

TEST_CASE("Dequantize -> Sigmoid -> Quantize becomes an int8 table activation", "[optimizer][passes][int8]") {
  // x = -2, 0, 2, 4 at scale 0.5, zero point 10; sigmoid = 0.119203, 0.5, 0.880797, 0.982014 at
  // 1/256, zero point 0: 30.516 -> 31, 128, 225.484 -> 225, 251.396 -> 251.
  Network net;
  auto s = net.add<ops::Activation>({ops::ActivationFunction::Sigmoid},
                                    {dequantized_input(net, 0, "x", {1, 2, 2, 1}, {{0.5f}, 10, {}})}, "sigmoid");
  add_quantized_output(net, s, {{1.0f / 256}, 0, {}});
  auto fused = optimize<RefBackend>(net);
  REQUIRE(fused);
  const std::string text = fused->to_string();
  INFO(text);
  CHECK_THAT(text, Catch::Contains("sigmoid (Activation) QAsymmU8 [1, 2, 2, 1] (scale 0.00390625, zero point 0) -> "
                                   "CpuRef (QAsymmU8)") &&
                       !Catch::Contains("quantize_y (Quantize)") && !Catch::Contains("dequantize_x"));
  CHECK(run_on_ref(*fused, {{-2, 0, 2, 4}}, 4) == std::vector<float>{31 / 256.0f, 0.5f, 225 / 256.0f, 251 / 256.0f});
}

TEST_CASE("Dequantize -> Softmax, Reduce or BatchMatMul -> Quantize becomes the int8 layer",
          "[optimizer][passes][int8]") {
  const QuantizationInfo x_q{{0.5f}, 10, {}};
  SECTION("Softmax") {
    // softmax(1, 2, 3, 4) x 256 = 8.207, 22.309, 60.642, 164.842 -> 8, 22, 61, 165 at 1/256.
    Network net;
    auto s = net.add<ops::Softmax>({}, {dequantized_input(net, 0, "x", {1, 4}, x_q)}, "softmax");
    add_quantized_output(net, s, {{1.0f / 256}, 0, {}});
    auto fused = optimize<RefBackend>(net);
    REQUIRE(fused);
    const std::string text = fused->to_string();
    INFO(text);
    CHECK_THAT(text, Catch::Contains("softmax (Softmax) QAsymmU8 [1, 4] (scale 0.00390625, zero point 0) -> CpuRef "
                                     "(QAsymmU8)") &&
                         !Catch::Contains("quantize_y (Quantize)") && !Catch::Contains("dequantize_x"));
    CHECK(run_on_ref(*fused, {{1, 2, 3, 4}}, 4) ==
          std::vector<float>{8 / 256.0f, 22 / 256.0f, 61 / 256.0f, 165 / 256.0f});
  }
  SECTION("Reduce mean") {
    // mean(1, -1, 0, 10) = 2.5 at scale 0.5, zero point 10.
    Network net;
    auto mean = net.add<ops::Reduce>({ops::ReduceOperation::Mean, {1, 2}, true},
                                     {dequantized_input(net, 0, "x", {1, 2, 2, 1}, x_q)}, "mean");
    add_quantized_output(net, mean, x_q);
    auto fused = optimize<RefBackend>(net);
    REQUIRE(fused);
    const std::string text = fused->to_string();
    INFO(text);
    CHECK_THAT(text, Catch::Contains("mean (Reduce) QAsymmU8 [1, 1, 1, 1] (scale 0.5, zero point 10) -> CpuRef "
                                     "(QAsymmU8)") &&
                         !Catch::Contains("quantize_y (Quantize)"));
    CHECK(run_on_ref(*fused, {{1, -1, 0, 10}}, 1) == std::vector<float>{2.5f});
  }
  SECTION("BatchMatMul of two activations") {
    // [[1, -1], [0, 10]] squared is [[1, -11], [0, 100]], exact at scale 0.5, zero point 30.
    Network net;
    auto product = net.add<ops::BatchMatMul>(
        {}, {dequantized_input(net, 0, "a", {2, 2}, x_q), dequantized_input(net, 1, "b", {2, 2}, {{0.25f}, 100, {}})},
        "matmul");
    add_quantized_output(net, product, {{0.5f}, 30, {}});
    auto fused = optimize<RefBackend>(net);
    REQUIRE(fused);
    const std::string text = fused->to_string();
    INFO(text);
    CHECK_THAT(text, Catch::Contains("matmul (BatchMatMul) QAsymmU8 [2, 2] (scale 0.5, zero point 30) -> CpuRef "
                                     "(QAsymmU8)") &&
                         !Catch::Contains("quantize_y (Quantize)"));
    CHECK(run_on_ref(*fused, {{1, -1, 0, 10}, {1, -1, 0, 10}}, 4) == std::vector<float>{1, -11, 0, 100});
  }
}

TEST_CASE("Dequantize x2 -> Concat -> Quantize becomes Requantizes and an int8 Concat", "[optimizer][passes][int8]") {
  // x = 1, -1 at scale 0.5, zero point 10; u = 1, 0.25 at 0.25, zero point 100; the output at 0.5,
  // zero point 20: x moves exactly, u's 0.25 is half an output unit and goes up to 0.5.
  Network net;
  auto joined = net.add<ops::Concat>({.axis = 3},
                                     {dequantized_input(net, 0, "x", {1, 1, 1, 2}, {{0.5f}, 10, {}}),
                                      dequantized_input(net, 1, "u", {1, 1, 1, 2}, {{0.25f}, 100, {}})},
                                     "concat");
  add_quantized_output(net, joined, {{0.5f}, 20, {}});
  auto fused = optimize<RefBackend>(net);
  REQUIRE(fused);
  const std::string text = fused->to_string();
  INFO(text);
  CHECK_THAT(text, Catch::Contains("concat (Concat) QAsymmU8 [1, 1, 1, 4] (scale 0.5, zero point 20) -> "
                                   "CpuRef (QAsymmU8)") &&
                       Catch::Contains("concat/requantize0 (Requantize)") &&
                       Catch::Contains("concat/requantize1 (Requantize)") && !Catch::Contains("quantize_y (Quantize)"));
  CHECK(run_on_ref(*fused, {{1, -1}, {1, 0.25f}}, 4) == std::vector<float>{1, -1, 1, 0.5f});
}

TEST_CASE("Dequantize -> Pad, StridedSlice or Gather -> Quantize of one quantisation moves the 8-bit values",
          "[optimizer][passes][int8]") {
  // x = 1, -1, 0, 10 at scale 0.5, zero point 10. Padded with 3 (q 16) on the left, sliced from 2,
  // gathered at [2, 0]: 3, 1, -1, 0, 10 -> -1, 0, 10 -> 10, -1. At another output scale the Quantize
  // would rescale, which a byte mover cannot: the Pad stays Float32.
  const QuantizationInfo q{{0.5f}, 10, {}};
  for (const bool same : {true, false}) {
    Network net;
    auto padded =
        net.add<ops::Pad>({{1}, {0}, ops::PadMode::Constant, 3.0f}, {dequantized_input(net, 0, "x", {4}, q)}, "pad");
    auto quantized = net.add<ops::Quantize>({}, {padded}, "quantize_pad");
    (void)net.set_output_type(quantized, DataType::QAsymmU8, same ? q : QuantizationInfo{{0.25f}, 10, {}});
    auto sliced =
        net.add<ops::StridedSlice>({{2}, {5}, {1}}, {net.add<ops::Dequantize>({}, {quantized}, "dq_pad")}, "slice");
    auto requantized = net.add<ops::Quantize>({}, {sliced}, "quantize_slice");
    (void)net.set_output_type(requantized, DataType::QAsymmU8, same ? q : QuantizationInfo{{0.25f}, 10, {}});
    const std::int32_t indices[] = {2, 0};
    auto gathered =
        net.add<ops::Gather>({.axis = 0},
                             {net.add<ops::Dequantize>({}, {requantized}, "dq_slice"),
                              net.add_constant<std::int32_t>({TensorShape{2}, DataType::Signed32}, indices, "indices")},
                             "gather");
    add_quantized_output(net, gathered, q);
    auto fused = optimize<RefBackend>(net);
    REQUIRE(fused);
    const std::string text = fused->to_string();
    INFO(text);
    if (same)
      CHECK_THAT(text, Catch::Contains("pad (Pad) QAsymmU8 [5] (scale 0.5, zero point 10)") &&
                           Catch::Contains("slice (StridedSlice) QAsymmU8 [3]") &&
                           Catch::Contains("gather (Gather) QAsymmU8 [2]") && !Catch::Contains("quantize_pad") &&
                           !Catch::Contains("quantize_slice") && !Catch::Contains("quantize_y (Quantize)"));
    else
      CHECK_THAT(text, Catch::Contains("pad (Pad) Float32") && Catch::Contains("quantize_pad (Quantize)"));
    CHECK(run_on_ref(*fused, {{1, -1, 0, 10}}, 2) == std::vector<float>{10, -1});
  }
}

TEST_CASE("Dequantize -> nearest Resize -> Quantize moves the 8-bit values; a bilinear one stays Float32",
          "[optimizer][passes][int8]") {
  // x = 1, -1 at scale 0.5, zero point 10, widened to 4: nearest 1, 1, -1, -1; bilinear (asymmetric)
  // 1, 0, -1, -1, every value on the grid of the output scale.
  const QuantizationInfo q{{0.5f}, 10, {}};
  for (const auto method : {ops::ResizeMethod::Nearest, ops::ResizeMethod::Bilinear}) {
    const bool nearest = method == ops::ResizeMethod::Nearest;
    Network net;
    auto resized = net.add<ops::Resize>({method, 1, 4}, {dequantized_input(net, 0, "x", {1, 1, 2, 1}, q)}, "resize");
    add_quantized_output(net, resized, q);
    auto fused = optimize<RefBackend>(net);
    REQUIRE(fused);
    const std::string text = fused->to_string();
    INFO(text);
    CHECK_THAT(text, Catch::Contains(nearest ? "resize (Resize) QAsymmU8" : "resize (Resize) Float32"));
    CHECK(run_on_ref(*fused, {{1, -1}}, 4) ==
          (nearest ? std::vector<float>{1, 1, -1, -1} : std::vector<float>{1, 0, -1, -1}));
  }
}

TEST_CASE("Dequantize -> Quantize becomes nothing, or a Requantize", "[optimizer][passes][int8]") {
  // x = 1, -1, 0, 10 at scale 0.5, zero point 10: q 12, 8, 10, 30. Quantized again at the same
  // quantisation they stay; at scale 1, zero point 0 (QAsymmU8) they become 1, 0 (saturated), 0, 10.
  const QuantizationInfo first{{0.5f}, 10, {}};
  for (const QuantizationInfo& second : {first, QuantizationInfo{{1.0f}, 0, {}}}) {
    Network net;
    auto x = net.add<ops::Quantize>({}, {net.add_input(0, {{1, 2, 2, 1}}, "x")}, "quantize_x");
    (void)net.set_output_type(x, DataType::QAsymmU8, first);
    auto y = net.add<ops::Quantize>({}, {net.add<ops::Dequantize>({}, {x}, "dequantize_x")}, "quantize_again");
    (void)net.set_output_type(y, DataType::QAsymmU8, second);
    net.add_output(0, net.add<ops::Dequantize>({}, {y}, "dequantize_y"), "y");
    auto folded = optimize<RefBackend>(net);
    REQUIRE(folded);
    const std::string text = folded->to_string();
    INFO(text);
    const bool same = second == first;
    CHECK_THAT(text, !Catch::Contains("quantize_again (Quantize)") && !Catch::Contains("dequantize_x"));
    CHECK(Catch::Contains("quantize_again/requantize (Requantize)").match(text) == !same);
    const std::vector<float> values{1, -1, 0, 10};
    CHECK(run_on_ref(*folded, {values}, 4) == (same ? values : std::vector<float>{1, 0, 0, 10}));
  }
}

namespace {
/// x [1, 1, 3, 1] -> conv 1x1 (2x + 1) -> c * HardSigmoid(c) -> y; Sigmoid(u) * u -> v; and, when
/// `gate_also_output`, the HardSigmoid as a third output (then it must stay).
Network gated(bool gate_also_output) {
  Network net;
  auto x = net.add_input(0, {{1, 1, 3, 1}}, "x");
  auto u = net.add_input(1, {{3}}, "u");
  auto w = net.add_constant<float>({{1, 1, 1, 1}}, std::vector<float>{2}, "w");
  auto b = net.add_constant<float>({{1}}, std::vector<float>{1}, "b");
  auto c = net.add<ops::Convolution2d>({}, {x, w, b}, "conv");
  auto hard_sigmoid = net.add<ops::Activation>({ops::ActivationFunction::HardSigmoid, 1.0f / 6, 0.5f}, {c}, "gate");
  const ops::ElementwiseBinary::Params mul{ops::BinaryOperation::Mul};
  net.add_output(0, net.add<ops::ElementwiseBinary>(mul, {c, hard_sigmoid}, "hard_swish"), "y");
  auto sigmoid = net.add<ops::Activation>({ops::ActivationFunction::Sigmoid}, {u}, "sigmoid");
  net.add_output(1, net.add<ops::ElementwiseBinary>(mul, {sigmoid, u}, "silu"), "v");
  if (gate_also_output) net.add_output(2, hard_sigmoid, "gate_out");
  return net;
}

std::vector<float> run_gated(const optimized_network_t<RefBackend>& optimized) {
  Runtime<RefBackend> runtime;
  auto id = runtime.load(optimized);
  REQUIRE(id);
  std::vector<float> x{-3, 0, 1}, u{0, 1, -2}, y(3), v(3), gate(3);
  const std::vector<InputBinding> inputs{{0, {*runtime.input_info(*id, 0), x.data()}},
                                         {1, {*runtime.input_info(*id, 1), u.data()}}};
  std::vector<OutputBinding> outputs{{0, {*runtime.output_info(*id, 0), y.data()}},
                                     {1, {*runtime.output_info(*id, 1), v.data()}}};
  if (auto info = runtime.output_info(*id, 2)) outputs.push_back({2, {*info, gate.data()}});
  REQUIRE(runtime.enqueue(*id, inputs, outputs));
  y.insert(y.end(), v.begin(), v.end());
  return y;
}
}  // namespace

TEST_CASE("x * HardSigmoid(x) becomes HardSwish, which fuses into the convolution; x * Sigmoid(x) becomes SiLU",
          "[optimizer][passes]") {
  // c = 2x + 1 = {-5, 1, 3}; hardswish(c) = c * clamp(c / 6 + 1/2, 0, 1) = {0, 2/3, 3};
  // silu(u) = u / (1 + e^-u) = {0, 1 / 1.3678794, -2 / 8.3890561}.
  const std::vector<float> expected{0, 2.0f / 3, 3, 0, 1 / 1.3678794f, -2 / 8.3890561f};
  auto fused = optimize<RefBackend>(gated(false));
  REQUIRE(fused);
  const std::string text = fused->to_string();
  CHECK_THAT(text, Catch::Contains("conv (Convolution2d + HardSwish)"));
  CHECK_THAT(text, Catch::Contains("silu (Activation)"));
  CHECK_THAT(text, !Catch::Contains("gate (Activation)") && !Catch::Contains("(ElementwiseBinary)") &&
                       !Catch::Contains("sigmoid (Activation)"));
  const auto out = run_gated(*fused);
  REQUIRE(out.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(out[i] == Approx(expected[i]).epsilon(1e-6).margin(1e-7));

  auto unfused = optimize<RefBackend>(gated(false), {.fuse_gated_activations = false});
  REQUIRE(unfused);
  CHECK_THAT(unfused->to_string(), Catch::Contains("hard_swish (ElementwiseBinary)"));
  const auto unfused_out = run_gated(*unfused);
  for (std::size_t i = 0; i < expected.size(); ++i)
    CHECK(unfused_out[i] == Approx(expected[i]).epsilon(1e-6).margin(1e-7));
}

namespace {
/// How a layer-norm chain is written (the forms exporters use) and what else reads it.
struct LayerNormChain {
  bool square_by_mul = false;         ///< d * d instead of d ^ 2
  bool scale_and_bias = true;         ///< Mul by gamma and Add of beta after the Div
  bool variance_also_output = false;  ///< the variance is an output too: the chain must stay
};

/// x [2, 3, 4] -> the layer norm of its rows of 4, as PyTorch writes nn.LayerNorm before opset 17:
/// ReduceMean, Sub, Pow 2 (or Mul), ReduceMean, Add epsilon 0.5, Sqrt, Div, then Mul gamma, Add beta.
Network layer_norm_chain(const LayerNormChain& form) {
  using ops::BinaryOperation;
  Network net;
  auto x = net.add_input(0, {{2, 3, 4}}, "x");
  auto binary = [&](BinaryOperation op, OutputSlot a, OutputSlot b, const char* name) {
    return net.add<ops::ElementwiseBinary>({op}, {a, b}, name);
  };
  const ops::Reduce::Params row_mean{ops::ReduceOperation::Mean, {-1}, true};
  auto mean = net.add<ops::Reduce>(row_mean, {x}, "mean");
  auto d = binary(BinaryOperation::Sub, x, mean, "sub");
  auto two = net.add_constant<float>({{}}, std::vector<float>{2}, "two");
  auto square = form.square_by_mul ? binary(BinaryOperation::Mul, d, d, "square")
                                   : binary(BinaryOperation::Power, d, two, "square");
  auto variance = net.add<ops::Reduce>(row_mean, {square}, "variance");
  auto epsilon = net.add_constant<float>({{1}}, std::vector<float>{0.5f}, "epsilon");
  auto root = net.add<ops::ElementwiseUnary>({ops::UnaryOperation::Sqrt},
                                             {binary(BinaryOperation::Add, variance, epsilon, "shift")}, "sqrt");
  auto y = binary(BinaryOperation::Div, d, root, "normalized");
  if (form.scale_and_bias) {
    auto gamma = net.add_constant<float>({{4}}, std::vector<float>{1, 2, 0.5f, -1}, "gamma");
    auto beta = net.add_constant<float>({{4}}, std::vector<float>{0, 1, -1, 0.25f}, "beta");
    y = binary(BinaryOperation::Add, binary(BinaryOperation::Mul, y, gamma, "scaled"), beta, "shifted");
  }
  net.add_output(0, y, "y");
  if (form.variance_also_output) net.add_output(1, variance, "variance_out");
  return net;
}

std::vector<float> run_layer_norm(const optimized_network_t<RefBackend>& optimized, const std::vector<float>& x) {
  Runtime<RefBackend> runtime;
  auto id = runtime.load(optimized);
  REQUIRE(id);
  std::vector<float> y(24), variance(6);
  const std::vector<InputBinding> inputs{{0, {*runtime.input_info(*id, 0), x.data()}}};
  std::vector<OutputBinding> outputs{{0, {*runtime.output_info(*id, 0), y.data()}}};
  if (auto info = runtime.output_info(*id, 1)) outputs.push_back({1, {*info, variance.data()}});
  REQUIRE(runtime.enqueue(*id, inputs, outputs));
  return y;
}
}  // namespace

TEST_CASE("The layer-norm chain of an export before opset 17 becomes one LayerNormalization", "[optimizer][passes]") {
  // Row [1, 2, 3, 6]: mean 3, deviations [-2, -1, 0, 3], variance 14 / 4 = 3.5, divided by
  // sqrt(3.5 + 0.5) = 2: [-1, -0.5, 0, 1.5]; times gamma plus beta: [-1, 0, -1, -1.25].
  std::vector<float> x(24);
  for (std::size_t r = 0; r < 6; ++r) {
    const float row[] = {1, 2, 3, 6};
    for (std::size_t i = 0; i < 4; ++i) x[r * 4 + i] = row[i] + 10.0f * float(r);  // the shift changes nothing
  }
  for (const LayerNormChain form :
       {LayerNormChain{}, LayerNormChain{.square_by_mul = true}, LayerNormChain{.scale_and_bias = false}}) {
    INFO("square by Mul " << form.square_by_mul << ", scale and bias " << form.scale_and_bias);
    auto fused = optimize<RefBackend>(layer_norm_chain(form));
    REQUIRE(fused);
    const std::string text = fused->to_string();
    const bool one_layer =
        text.find("(LayerNormalization)") != std::string::npos && text.find("(Reduce)") == std::string::npos &&
        text.find("(ElementwiseBinary)") == std::string::npos && text.find("(ElementwiseUnary)") == std::string::npos;
    CHECK(one_layer);
    const std::vector<float> expected_row =
        form.scale_and_bias ? std::vector<float>{-1, 0, -1, -1.25f} : std::vector<float>{-1, -0.5f, 0, 1.5f};
    const auto y = run_layer_norm(*fused, x);
    for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(expected_row[i % 4]).margin(1e-6));
    auto unfused = optimize<RefBackend>(layer_norm_chain(form), {.fuse_layer_normalizations = false});
    REQUIRE(unfused);
    const auto y_unfused = run_layer_norm(*unfused, x);
    for (std::size_t i = 0; i < y.size(); ++i) CHECK(y_unfused[i] == Approx(expected_row[i % 4]).margin(1e-6));
  }
}

TEST_CASE("A layer-norm chain whose intermediate something else reads stays as it is", "[optimizer][passes]") {
  auto kept = optimize<RefBackend>(layer_norm_chain({.variance_also_output = true}));
  REQUIRE(kept);
  const std::string text = kept->to_string();
  const bool unchanged =
      text.find("(LayerNormalization)") == std::string::npos && text.find("variance (Reduce)") != std::string::npos;
  CHECK(unchanged);
}

TEST_CASE("SiLU stays a layer of its own after a convolution", "[optimizer][passes]") {
  Network net;
  auto x = net.add_input(0, {{1, 1, 2, 1}}, "x");
  auto w = net.add_constant<float>({{1, 1, 1, 1}}, std::vector<float>{1}, "w");
  auto conv = net.add<ops::Convolution2d>({}, {x, w}, "conv");
  net.add_output(0, net.add<ops::Activation>({ops::ActivationFunction::SiLU}, {conv}, "silu"), "y");
  auto optimized = optimize<RefBackend>(std::move(net));
  REQUIRE(optimized);
  CHECK_THAT(optimized->to_string(), Catch::Contains("conv (Convolution2d) ") && Catch::Contains("silu (Activation)"));
}

TEST_CASE("A gate that another layer reads, or that is not x / 6 + 1/2, stays a gate", "[optimizer][passes]") {
  auto optimized = optimize<RefBackend>(gated(true));
  REQUIRE(optimized);
  CHECK_THAT(optimized->to_string(),
             Catch::Contains("hard_swish (ElementwiseBinary)") && Catch::Contains("gate (Activation)"));
  CHECK(passes::gated_activation({ops::ActivationFunction::HardSigmoid, 0.2f, 0.5f}) == std::nullopt);
  CHECK(passes::gated_activation({ops::ActivationFunction::Tanh}) == std::nullopt);
}

TEST_CASE("A workload a backend inherits goes to the backend that wrote it when the Runtime has that one",
          "[optimizer]") {
  auto optimized = optimize<PickyBackend, RefBackend>(small_network());
  REQUIRE(optimized);
  const Network& net = optimized->network();
  CHECK(optimized->backend_id(layer_named(net, "relu")) == "Picky");
  CHECK(optimized->backend_id(layer_named(net, "relu6")) == "CpuRef");
  CHECK(optimized->assignment(layer_named(net, "relu6")).level == 0);
  CHECK_THAT(optimized->to_string(),
             Catch::Contains("relu6 (Activation) Float32 [4] -> CpuRef (Float32); Picky: runs ReLU only"));
  const auto out = run_small(*optimized);
  for (float y : out) CHECK(y == Approx(0.0f).margin(1e-12));
}

/// Runs Transpose for Float32 layers only: every other data type falls back to RefBackend's
/// workload for that type, which moves bytes of any type.
struct Float32TransposeBackend {
  using fallback = RefBackend;
  static constexpr std::string_view id = "F32Acc";
  static constexpr std::size_t alignment = 64;
  using memory = HostMemory;
  using context = ref::Context;
  static bool available() noexcept { return true; }
};

template <>
struct kiln::Workload<ops::Transpose, Float32TransposeBackend, DataType::Float32> {
  explicit Workload(const WorkloadInfo<ops::Transpose>&) {}
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&) const {
    const auto x = in[0].as<float>();
    const auto y = out[0].as<float>();
    for (std::size_t i = 0; i < 2; ++i)  // [2, 3] -> [3, 2]
      for (std::size_t j = 0; j < 3; ++j) y[j * 2 + i] = x[i * 3 + j];
  }
};

TEST_CASE("Workloads are chosen by op and data type, and a data type a backend lacks falls back",
          "[optimizer][data-types]") {
  static_assert(has_own_workload_v<ops::Transpose, Float32TransposeBackend, DataType::Float32>);
  static_assert(!has_own_workload_v<ops::Transpose, Float32TransposeBackend, DataType::QAsymmS8>);
  static_assert(has_own_workload_v<ops::Transpose, RefBackend, DataType::QAsymmS8>);
  Network net;
  const TensorInfo int8{{2, 3}, DataType::QAsymmS8, {{0.5f}, 3}};
  auto a = net.add_input(0, int8, "a");
  auto b = net.add_input(1, {{2, 3}}, "b");
  net.add_output(0, net.add<ops::Transpose>({{1, 0}}, {a}, "int8_transpose"), "a_t");
  net.add_output(1, net.add<ops::Transpose>({{1, 0}}, {b}, "float_transpose"), "b_t");
  using Accelerated = Runtime<Float32TransposeBackend, RefBackend>;
  auto optimized = Accelerated::optimize(std::move(net));
  REQUIRE(optimized);
  const std::string text = optimized->to_string();
  CHECK_THAT(text, Catch::Contains("int8_transpose (Transpose) QAsymmS8 [3, 2] (scale 0.5, zero point 3) -> CpuRef "
                                   "(QAsymmS8); F32Acc: no QAsymmS8 workload"));
  CHECK_THAT(text, Catch::Contains("float_transpose (Transpose) Float32 [3, 2] -> F32Acc (Float32)\n"));
  CHECK(optimized->assignment(layer_named(optimized->network(), "int8_transpose")).workload->data_type ==
        DataType::QAsymmS8);

  Accelerated runtime;
  auto id = runtime.load(*optimized);
  REQUIRE(id);
  const std::vector<std::int8_t> a_in{1, 2, 3, 4, 5, 6};
  const std::vector<float> b_in{1, 2, 3, 4, 5, 6};
  std::vector<std::int8_t> a_out(6);
  std::vector<float> b_out(6);
  const InputBinding inputs[] = {{0, {int8, a_in.data()}}, {1, {{{2, 3}}, b_in.data()}}};
  const OutputBinding outputs[] = {{0, {*runtime.output_info(*id, 0), a_out.data()}},
                                   {1, {*runtime.output_info(*id, 1), b_out.data()}}};
  REQUIRE(runtime.enqueue(*id, inputs, outputs));
  CHECK(a_out == std::vector<std::int8_t>{1, 4, 2, 5, 3, 6});
  CHECK(b_out == std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("An OpSet limits the ops a Runtime compiles and accepts", "[optimizer][op-set]") {
  using Small = OpSet<ops::Activation, ops::ElementwiseUnary>;
  // Only the set's ops have workload entries, so only their workloads are instantiated.
  static_assert(!detail::own_table<RefBackend, Small>[ops::op_index_v<ops::Activation>].empty());
  static_assert(detail::own_table<RefBackend, Small>[ops::op_index_v<ops::Convolution2d>].empty());
  auto optimized = optimize<Small, RefBackend>(small_network());
  REQUIRE(optimized);
  CHECK(run_small(*optimized)[3] == Approx(6.0f));

  auto too_small = optimize<OpSet<ops::Activation>, RefBackend>(small_network());
  REQUIRE_FALSE(too_small);
  CHECK(too_small.status().message() ==
        "layer 'exp' (ElementwiseUnary): ElementwiseUnary is not in this program's OpSet; add "
        "kiln::ops::ElementwiseUnary to it");
  // Runtime<B...> and Runtime<AllOps, B...> take the same optimized network.
  static_assert(
      std::same_as<Runtime<RefBackend>::OptimizedNetworkType, Runtime<AllOps, RefBackend>::OptimizedNetworkType>);
}

namespace {
/// x [1, 2, 2, 1] -> conv 1x1 (w = {0.1, 3}, b = {1/3, -1}) -> y; and the convolution quantised
/// (scale 0.5, zero point 128) and dequantized -> q, a layer that stays Float32.
Network float16_candidate() {
  Network net;
  auto x = net.add_input(0, {{1, 2, 2, 1}}, "x");
  auto w = net.add_constant<float>({{2, 1, 1, 1}}, std::vector<float>{0.1f, 3.0f}, "w");
  auto b = net.add_constant<float>({{2}}, std::vector<float>{1.0f / 3, -1.0f}, "b");
  auto conv = net.add<ops::Convolution2d>({}, {x, w, b}, "conv");
  net.add_output(0, conv, "y");
  auto quantized = net.add<ops::Quantize>({}, {conv}, "quantize");
  (void)net.set_output_type(quantized, DataType::QAsymmU8, {{0.5f}, 128, {}});
  net.add_output(1, net.add<ops::Dequantize>({}, {quantized}, "dequantize"), "q");
  return net;
}
}  // namespace

TEST_CASE("reduce_float32_to_float16 computes Float32 layers in Float16 between Casts",
          "[optimizer][passes][float16]") {
  auto reduced = optimize<RefBackend>(float16_candidate(), {.reduce_float32_to_float16 = true});
  REQUIRE(reduced);
  const std::string text = reduced->to_string();
  INFO(text);
  CHECK_THAT(text, Catch::Contains("x/to_float16 (Cast) Float16 [1, 2, 2, 1]") &&
                       Catch::Contains("conv (Convolution2d) Float16 [1, 2, 2, 2]") &&
                       Catch::Contains("w/float16 (Constant) Float16") &&
                       Catch::Contains("b/float16 (Constant) Float16") &&
                       Catch::Contains("conv/to_float32 (Cast) Float32 [1, 2, 2, 2]") &&
                       Catch::Contains("quantize (Quantize) QAsymmU8"));
  // One Cast back to Float32 serves both of its readers (the output and the Quantize).
  CHECK(text.find("to_float32") == text.rfind("to_float32 (Cast)"));

  // numpy: the inputs and constants rounded to float16 (0.1 -> 0.0999755859375, 1/3 ->
  // 0.333251953125), each output computed in float32 and rounded to float16; two are ties to even
  // (0.4332275390625 -> 0.43310546875, 2999 -> 3000).
  Runtime<RefBackend> runtime;
  auto id = runtime.load(*reduced);
  REQUIRE(id);
  CHECK(runtime.input_info(*id, 0)->type == DataType::Float32);
  REQUIRE(runtime.output_info(*id, 0)->type == DataType::Float32);
  std::vector<float> x{1, -1, 0, 1000}, y(8), q(8);
  const std::vector<InputBinding> in{{0, {*runtime.input_info(*id, 0), x.data()}}};
  const std::vector<OutputBinding> out{{0, {*runtime.output_info(*id, 0), y.data()}},
                                       {1, {*runtime.output_info(*id, 1), q.data()}}};
  REQUIRE(runtime.enqueue(*id, in, out));
  CHECK(y == std::vector<float>{0.43310546875f, 2, 0.2332763671875f, -4, 0.333251953125f, -1, 100.3125f, 3000});
  // The Quantize reads the Float16 results widened: round(y / 0.5), saturated at 255 - 128 = 127.
  CHECK(q == std::vector<float>{0.5f, 2, 0, -4, 0.5f, -1, 63.5f, 63.5f});

  auto kept = optimize<RefBackend>(float16_candidate());
  REQUIRE(kept);
  CHECK_THAT(kept->to_string(), Catch::Contains("conv (Convolution2d) Float32") && !Catch::Contains("(Cast)"));
}

TEST_CASE("reduce_float32_to_float16 leaves a layer no backend runs in Float16 in Float32",
          "[optimizer][passes][float16]") {
  // ReluOnlyBackend has a Float32 ReLU and nothing in Float16: the network stays as it was.
  Network net;
  auto x = net.add_input(0, {{4}}, "x");
  net.add_output(0, net.add<ops::Activation>({}, {x}, "relu"), "y");
  auto optimized =
      optimize<OpSet<ops::Activation>, ReluOnlyBackend>(std::move(net), {.reduce_float32_to_float16 = true});
  REQUIRE(optimized);
  CHECK_THAT(optimized->to_string(), Catch::Contains("relu (Activation) Float32") && !Catch::Contains("(Cast)"));
}

namespace {
/// query [2, 3, 4] x key -> / 2 -> + mask [3, 5] -> Softmax -> x value [2, 5, 3]: a self-attention
/// as PyTorch exports it, key as the MatMul's right operand [2, 4, 5] or as rows [2, 5, 4].
Network attention_chain(bool key_rows, bool weights_also_output = false) {
  Network net;
  auto q = net.add_input(0, {{2, 3, 4}}, "query");
  auto k = net.add_input(1, {key_rows ? TensorShape{2, 5, 4} : TensorShape{2, 4, 5}}, "key");
  auto v = net.add_input(2, {{2, 5, 3}}, "value");
  auto mask = net.add_input(3, {{3, 5}}, "mask");
  auto scores = net.add<ops::BatchMatMul>({false, key_rows}, {q, k}, "scores");
  auto two = net.add_constant<float>({{1}}, std::vector<float>{2}, "two");
  auto scaled = net.add<ops::ElementwiseBinary>({ops::BinaryOperation::Div}, {scores, two}, "scaled");
  auto masked = net.add<ops::ElementwiseBinary>({ops::BinaryOperation::Add}, {scaled, mask}, "masked");
  auto weights = net.add<ops::Softmax>({-1}, {masked}, "weights");
  net.add_output(0, net.add<ops::BatchMatMul>({}, {weights, v}, "attended"), "y");
  if (weights_also_output) net.add_output(1, weights, "weights_out");
  return net;
}

template <class... Bs>
std::vector<float> run_attention(const OptimizedNetwork<Bs...>& optimized, bool key_rows) {
  Runtime<Bs...> runtime;
  auto id = runtime.load(optimized);
  REQUIRE(id);
  std::vector<float> q(24), k(40), v(30), mask(15), y(18), weights(30);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::sin(float(i));
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = std::cos(float(i) * (key_rows ? 0.7f : 1.3f));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i % 7) - 3.0f;
  for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = i % 4 == 3 ? -1e9f : 0.1f * float(i);
  const std::vector<InputBinding> inputs{{0, {*runtime.input_info(*id, 0), q.data()}},
                                         {1, {*runtime.input_info(*id, 1), k.data()}},
                                         {2, {*runtime.input_info(*id, 2), v.data()}},
                                         {3, {*runtime.input_info(*id, 3), mask.data()}}};
  std::vector<OutputBinding> outputs{{0, {*runtime.output_info(*id, 0), y.data()}}};
  if (auto info = runtime.output_info(*id, 1)) outputs.push_back({1, {*info, weights.data()}});
  REQUIRE(runtime.enqueue(*id, inputs, outputs));
  return y;
}
}  // namespace

TEST_CASE("MatMul -> scale -> mask Add -> Softmax -> MatMul becomes one Attention layer", "[optimizer][passes]") {
  for (bool key_rows : {false, true}) {
    INFO("key rows " << key_rows);
    auto fused = optimize<RefBackend>(attention_chain(key_rows));
    REQUIRE(fused);
    const std::string text = fused->to_string();
    const bool one_layer =
        text.find("attended (Attention)") != std::string::npos && text.find("(Softmax)") == std::string::npos &&
        text.find("(BatchMatMul)") == std::string::npos && text.find("(ElementwiseBinary)") == std::string::npos;
    CHECK(one_layer);
    // Against the layers it replaced: BatchMatMul, ElementwiseBinary and Softmax's own code.
    auto unfused = optimize<RefBackend>(attention_chain(key_rows), {.fuse_attention = false});
    REQUIRE(unfused);
    CHECK(unfused->to_string().find("(Attention)") == std::string::npos);
    const auto y = run_attention(*fused, key_rows), expected = run_attention(*unfused, key_rows);
    for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(expected[i]).margin(1e-5));
  }
}

TEST_CASE("An attention chain stays as it is where its weights are read too, or its backend lacks Attention",
          "[optimizer][passes]") {
  auto read_twice = optimize<RefBackend>(attention_chain(false, true));
  REQUIRE(read_twice);
  CHECK(read_twice->to_string().find("(Attention)") == std::string::npos);
  // ReluOnlyBackend, the first choice, has no Attention workload: the layers RefBackend gets stay
  // the ones it would have run anyway, not a fused layer it alone could run.
  auto first_choice_lacks = optimize<ReluOnlyBackend, RefBackend>(attention_chain(false));
  REQUIRE(first_choice_lacks);
  CHECK(first_choice_lacks->to_string().find("(Attention)") == std::string::npos);
}

namespace {
/// x [1, 2, 3, 2] (NHWC, x = 0..11) -> Transpose to NCHW -> Reshape [1, 12] -> FullyConnected with
/// weights [2, 12]: row 0 picks NCHW element 1, row 1 weighs NCHW element t by t. `transposed_read`
/// makes the transposed map an output too.
Network flatten_channels_last(bool transposed_read) {
  Network net;
  auto x = net.add_input(0, {{1, 2, 3, 2}}, "x");
  auto nchw = net.add<ops::Transpose>({{0, 3, 1, 2}}, {x}, "to_nchw");
  auto flat = net.add<ops::Reshape>({{1, 12}}, {nchw}, "flatten");
  std::vector<float> weights(24, 0.0f);
  weights[1] = 1;
  for (std::size_t t = 0; t < 12; ++t) weights[12 + t] = static_cast<float>(t);
  auto w = net.add_constant<float>({{2, 12}}, weights, "weights");
  net.add_output(0, net.add<ops::FullyConnected>({}, {flat, w}, "dense"), "y");
  if (transposed_read) net.add_output(1, nchw, "nchw");
  return net;
}
template <class... Bs>
std::vector<float> run_flatten(const OptimizedNetwork<Bs...>& optimized, bool transposed_read) {
  Runtime<Bs...> runtime;
  auto id = runtime.load(optimized);
  REQUIRE(id);
  std::vector<float> x(12), y(2), nchw(12);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  const InputBinding inputs[] = {{0, {{{1, 2, 3, 2}}, x.data()}}};
  const OutputBinding outputs[] = {{0, {{{1, 2}}, y.data()}}, {1, {{{1, 2, 2, 3}}, nchw.data()}}};
  REQUIRE(runtime.enqueue(*id, inputs, std::span(outputs, transposed_read ? 2 : 1)));
  return y;
}
}  // namespace

TEST_CASE("A Transpose flattened into a FullyConnected becomes a permutation of its weights' columns",
          "[optimizer][passes]") {
  // NCHW element t = c * 6 + h * 3 + w holds the NHWC value (h * 3 + w) * 2 + c: element 1 is 2;
  // the sum of t times element t is 0*0 + 1*2 + 2*4 + 3*6 + 4*8 + 5*10 (c = 0: 110) plus
  // 6*1 + 7*3 + 8*5 + 9*7 + 10*9 + 11*11 (c = 1: 341), 451.
  const std::vector<float> expected{2, 451};
  auto folded = optimize<RefBackend>(flatten_channels_last(false));
  REQUIRE(folded);
  CHECK_THAT(folded->to_string(), !Catch::Contains("(Transpose)") && Catch::Contains("dense/weights_in_input_order"));
  CHECK(run_flatten(*folded, false) == expected);
  auto kept = optimize<RefBackend>(flatten_channels_last(false), {.fold_flatten_transposes = false});
  REQUIRE(kept);
  CHECK_THAT(kept->to_string(), Catch::Contains("to_nchw (Transpose)"));
  CHECK(run_flatten(*kept, false) == expected);
  // The transposed map read elsewhere too: it stays, and so do the weights.
  auto shared = optimize<RefBackend>(flatten_channels_last(true));
  REQUIRE(shared);
  CHECK_THAT(shared->to_string(), Catch::Contains("to_nchw (Transpose)"));
  CHECK(run_flatten(*shared, true) == expected);
}

namespace {
/// x [1, 2, 3] -> FullyConnected with weights [[1, 0, 0], [0, 1, 1]] (and `bias` when given) ->
/// Add of the constant `row` (on the left when `row_first`) -> y.
Network dense_then_add(std::vector<float> row, TensorShape row_shape, std::optional<std::vector<float>> bias,
                       bool row_first = false) {
  Network net;
  auto x = net.add_input(0, {{1, 2, 3}}, "x");
  auto w = net.add_constant<float>({{2, 3}}, std::vector<float>{1, 0, 0, 0, 1, 1}, "weights");
  auto dense = bias ? net.add<ops::FullyConnected>({}, {x, w, net.add_constant<float>({{2}}, *bias, "bias")}, "dense")
                    : net.add<ops::FullyConnected>({}, {x, w}, "dense");
  auto r = net.add_constant<float>({row_shape}, row, "row");
  net.add_output(0,
                 net.add<ops::ElementwiseBinary>({ops::BinaryOperation::Add},
                                                 {row_first ? r : dense, row_first ? dense : r}, "add"),
                 "y");
  return net;
}
template <class... Bs>
std::vector<float> run_on(const OptimizedNetwork<Bs...>& optimized, TensorShape x_shape, std::vector<float> x,
                          TensorShape y_shape) {
  Runtime<Bs...> runtime;
  auto id = runtime.load(optimized);
  REQUIRE(id);
  std::vector<float> y(y_shape.num_elements());
  const InputBinding inputs[] = {{0, {{x_shape}, x.data()}}};
  const OutputBinding outputs[] = {{0, {{y_shape}, y.data()}}};
  REQUIRE(runtime.enqueue(*id, inputs, outputs));
  return y;
}
}  // namespace

TEST_CASE("The Add of a constant row after a FullyConnected becomes its bias", "[optimizer][passes]") {
  // x rows [1, 2, 3] and [4, 5, 6] -> [1, 2 + 3] and [4, 5 + 6], plus [10, 20].
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  for (bool row_first : {false, true}) {
    auto folded = optimize<RefBackend>(dense_then_add({10, 20}, {1, 1, 2}, std::nullopt, row_first));
    REQUIRE(folded);
    CHECK_THAT(folded->to_string(), !Catch::Contains("(ElementwiseBinary)") && Catch::Contains("dense/folded_bias"));
    CHECK(run_on(*folded, {1, 2, 3}, x, {1, 2, 2}) == std::vector<float>{11, 25, 14, 31});
  }
  // A bias already there: the row adds to it.
  auto summed = optimize<RefBackend>(dense_then_add({10, 20}, {2}, std::vector<float>{0.5f, 0.25f}));
  REQUIRE(summed);
  CHECK_THAT(summed->to_string(), !Catch::Contains("(ElementwiseBinary)"));
  CHECK(run_on(*summed, {1, 2, 3}, x, {1, 2, 2}) == std::vector<float>{11.5f, 25.25f, 14.5f, 31.25f});
  // One value per row, not per output: an Add it stays.
  auto per_row = optimize<RefBackend>(dense_then_add({10, 20}, {2, 1}, std::nullopt));
  REQUIRE(per_row);
  CHECK_THAT(per_row->to_string(), Catch::Contains("add (ElementwiseBinary)"));
  CHECK(run_on(*per_row, {1, 2, 3}, x, {1, 2, 2}) == std::vector<float>{11, 15, 24, 31});
  auto kept = optimize<RefBackend>(dense_then_add({10, 20}, {2}, std::nullopt), {.fold_bias_adds = false});
  REQUIRE(kept);
  CHECK_THAT(kept->to_string(), Catch::Contains("add (ElementwiseBinary)"));
}

namespace {
/// x [4] -> the Erf form of GELU as PyTorch exports it: Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x ->
/// Mul 0.5; or, `scaled_first`, Mul(x, 1 / sqrt 2) for the Div and (x * 0.5) * (1 + erf) for the Muls.
Network erf_gelu(bool scaled_first) {
  using B = ops::BinaryOperation;
  Network net;
  auto x = net.add_input(0, {{4}}, "x");
  auto scalar = [&](float v, const char* name) { return net.add_constant<float>({{1}}, std::vector<float>{v}, name); };
  auto scaled = scaled_first
                    ? net.add<ops::ElementwiseBinary>({B::Mul}, {x, scalar(0.70710678f, "inverse_root")}, "scale")
                    : net.add<ops::ElementwiseBinary>({B::Div}, {x, scalar(1.4142135f, "root")}, "scale");
  auto erf = net.add<ops::ElementwiseUnary>({ops::UnaryOperation::Erf}, {scaled}, "erf");
  auto gate = net.add<ops::ElementwiseBinary>({B::Add}, {erf, scalar(1, "one")}, "gate");
  OutputSlot y;
  if (scaled_first) {
    auto half = net.add<ops::ElementwiseBinary>({B::Mul}, {x, scalar(0.5f, "half")}, "half");
    y = net.add<ops::ElementwiseBinary>({B::Mul}, {half, gate}, "gelu");
  } else {
    auto product = net.add<ops::ElementwiseBinary>({B::Mul}, {x, gate}, "product");
    y = net.add<ops::ElementwiseBinary>({B::Mul}, {product, scalar(0.5f, "half")}, "gelu");
  }
  net.add_output(0, y, "y");
  return net;
}
}  // namespace

TEST_CASE("The Erf form of GELU becomes one GELU activation", "[optimizer][passes]") {
  // 0.5 x (1 + erf(x / sqrt 2)) at -1, 0, 1, 2: erf(0.7071) = 0.6826895, erf(1.4142) = 0.9544997.
  const std::vector<float> expected{-0.15865525f, 0, 0.84134475f, 1.9544997f};
  for (bool scaled_first : {false, true}) {
    INFO("scaled first " << scaled_first);
    auto fused = optimize<RefBackend>(erf_gelu(scaled_first));
    REQUIRE(fused);
    const std::string text = fused->to_string();
    CHECK_THAT(text, Catch::Contains("gelu (Activation)") && !Catch::Contains("(ElementwiseUnary)") &&
                         !Catch::Contains("(ElementwiseBinary)"));
    const auto y = run_on(*fused, {4}, {-1, 0, 1, 2}, {4});
    for (std::size_t i = 0; i < 4; ++i) CHECK(y[i] == Approx(expected[i]).margin(1e-6));
  }
  auto unfused = optimize<RefBackend>(erf_gelu(false), {.fuse_gated_activations = false});
  REQUIRE(unfused);
  CHECK_THAT(unfused->to_string(), Catch::Contains("erf (ElementwiseUnary)"));
  const auto y = run_on(*unfused, {4}, {-1, 0, 1, 2}, {4});
  for (std::size_t i = 0; i < 4; ++i) CHECK(y[i] == Approx(expected[i]).margin(1e-6));
}
