// SPDX-License-Identifier: Apache-2.0
// Zero-copy I/O: with import/export, kernels read and write the user's buffers in place.
#include <catch2/catch.hpp>
#include <kiln/kiln.hpp>

using namespace kiln;

namespace spy {
/// Remembers the pointers the last ReLU workload read and wrote.
struct Context : ref::Context {
  const void* read = nullptr;
  void* written = nullptr;
};
}  // namespace spy

struct SpyBackend {
  using fallback = RefBackend;
  static constexpr std::string_view id = "Spy";
  static constexpr std::size_t alignment = 64;
  using memory = HostMemory;
  using context = spy::Context;
  static bool available() noexcept { return true; }
};

template <>
struct kiln::Workload<ops::Activation, SpyBackend, DataType::Float32> {
  explicit Workload(const WorkloadInfo<ops::Activation>&) {}
  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, spy::Context& context) const {
    context.read = in[0].data;
    context.written = out[0].data;
    const auto x = in[0].as<float>();
    const auto y = out[0].as<float>();
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0 ? x[i] : 0.0f;
  }
};

namespace {
using SpyRuntime = Runtime<SpyBackend, RefBackend>;

NetworkId load_relu(SpyRuntime& runtime, bool zero_copy, bool second_reader = false) {
  Network net;
  auto x = net.add_input(0, {{16}}, "x");
  auto relu = net.add<ops::Activation>({}, {x}, "relu");
  net.add_output(0, relu, "y");
  if (second_reader) net.add_output(1, net.add<ops::ElementwiseUnary>({ops::UnaryOperation::Neg}, {relu}), "neg");
  auto optimized = optimize<SpyBackend, RefBackend>(std::move(net));
  REQUIRE(optimized);
  LoadOptions options;
  options.import_inputs = zero_copy;
  options.export_outputs = zero_copy;
  auto id = runtime.load(*optimized, options);
  REQUIRE(id);
  return *id;
}

struct alignas(64) Buffer {
  float values[32];
};

std::vector<float> expected_relu(const float* x) {
  std::vector<float> y;
  for (int i = 0; i < 16; ++i) y.push_back(x[i] > 0 ? x[i] : 0.0f);
  return y;
}
}  // namespace

TEST_CASE("With import and export the kernel reads and writes the user's buffers", "[runtime][zero-copy]") {
  SpyRuntime runtime;
  const NetworkId id = load_relu(runtime, true);
  Buffer input, output{};
  for (int i = 0; i < 16; ++i) input.values[i] = float(i) - 8;
  const TensorInfo info{{16}};
  const InputBinding in[] = {{0, {info, input.values}}};
  const OutputBinding out[] = {{0, {info, output.values}}};
  REQUIRE(runtime.enqueue(id, in, out));
  const spy::Context& seen = runtime.context<SpyBackend>();
  CHECK(seen.read == input.values);
  CHECK(seen.written == output.values);
  CHECK(std::vector<float>(output.values, output.values + 16) == expected_relu(input.values));
}

TEST_CASE("Without import and export, or with misaligned buffers, kiln copies", "[runtime][zero-copy]") {
  Buffer input, output{};
  for (int i = 0; i < 32; ++i) input.values[i] = float(i) - 8;
  const TensorInfo info{{16}};
  for (bool zero_copy : {false, true}) {
    SpyRuntime runtime;
    const NetworkId id = load_relu(runtime, zero_copy);
    // One float past a 64-byte boundary: misaligned for the network's 64-byte alignment.
    const float* x = zero_copy ? input.values + 1 : input.values;
    float* y = zero_copy ? output.values + 1 : output.values;
    const InputBinding in[] = {{0, {info, x}}};
    const OutputBinding out[] = {{0, {info, y}}};
    REQUIRE(runtime.enqueue(id, in, out));
    const spy::Context& seen = runtime.context<SpyBackend>();
    INFO("zero copy requested: " << zero_copy);
    CHECK(seen.read != x);
    CHECK(seen.written != y);
    CHECK(std::vector<float>(y, y + 16) == expected_relu(x));
  }
}

TEST_CASE("An import does not stick: the next inference copies when its buffer is misaligned", "[runtime][zero-copy]") {
  SpyRuntime runtime;
  const NetworkId id = load_relu(runtime, true);
  Buffer a, b, output{};
  for (int i = 0; i < 32; ++i) {
    a.values[i] = float(i);
    b.values[i] = -float(i) + 20;
  }
  const TensorInfo info{{16}};
  const InputBinding first[] = {{0, {info, a.values}}};
  const InputBinding second[] = {{0, {info, b.values + 1}}};
  const OutputBinding out[] = {{0, {info, output.values}}};
  REQUIRE(runtime.enqueue(id, first, out));
  CHECK(runtime.context<SpyBackend>().read == a.values);
  REQUIRE(runtime.enqueue(id, second, out));
  CHECK(runtime.context<SpyBackend>().read != b.values + 1);
  CHECK(std::vector<float>(output.values, output.values + 16) == expected_relu(b.values + 1));
}

TEST_CASE("A tensor that another layer also reads is not exported", "[runtime][zero-copy]") {
  SpyRuntime runtime;
  const NetworkId id = load_relu(runtime, true, true);
  Buffer input, relu{}, negated{};
  for (int i = 0; i < 16; ++i) input.values[i] = float(i) - 8;
  const TensorInfo info{{16}};
  const InputBinding in[] = {{0, {info, input.values}}};
  const OutputBinding out[] = {{0, {info, relu.values}}, {1, {info, negated.values}}};
  REQUIRE(runtime.enqueue(id, in, out));
  CHECK(runtime.context<SpyBackend>().written != relu.values);
  CHECK(std::vector<float>(relu.values, relu.values + 16) == expected_relu(input.values));
  CHECK(negated.values[15] == -7.0f);
}

TEST_CASE("Pre-imported buffers are checked once and read and written in place", "[runtime][zero-copy][import]") {
  SpyRuntime runtime;
  const NetworkId id = load_relu(runtime, true);
  Buffer input, output{};
  for (int i = 0; i < 16; ++i) input.values[i] = float(i) - 8;
  const TensorInfo info{{16}};
  const InputBinding in[] = {{0, {info, input.values}}};
  const OutputBinding out[] = {{0, {info, output.values}}};
  auto in_ids = runtime.import_inputs(id, in);
  auto out_ids = runtime.import_outputs(id, out);
  REQUIRE(in_ids);
  REQUIRE(out_ids);
  REQUIRE(runtime.enqueue(id, {}, {}, *in_ids, *out_ids));
  CHECK(runtime.context<SpyBackend>().read == input.values);
  CHECK(runtime.context<SpyBackend>().written == output.values);
  CHECK(std::vector<float>(output.values, output.values + 16) == expected_relu(input.values));

  // Mixed: imported input, output given in the call.
  Buffer other{};
  const OutputBinding given[] = {{0, {info, other.values}}};
  REQUIRE(runtime.enqueue(id, {}, given, *in_ids));
  CHECK(other.values[15] == 7.0f);

  // Naming a binding twice, or not at all, is an error.
  CHECK(runtime.enqueue(id, in, {}, *in_ids, *out_ids).message() == "input binding 0 is given twice");
  CHECK(runtime.enqueue(id, {}, {}, {}, *out_ids).message() == "input binding 0 is missing");

  REQUIRE(runtime.clear_imported_inputs(id, *in_ids));
  CHECK(runtime.enqueue(id, {}, {}, *in_ids, *out_ids).message() ==
        "pre-imported input 0 does not exist (never imported, or cleared)");
  CHECK(runtime.clear_imported_inputs(id, *in_ids).code() == ErrorCode::NotFound);
  const ImportedId unknown[] = {42};
  CHECK(runtime.clear_imported_outputs(id, unknown).message() ==
        "pre-imported output 42 does not exist (never imported, or cleared)");
  REQUIRE(runtime.clear_imported_outputs(id, *out_ids));
}

TEST_CASE("Pre-importing refuses unknown bindings, misaligned buffers and networks without import",
          "[runtime][import][errors]") {
  SpyRuntime runtime;
  const NetworkId id = load_relu(runtime, true);
  Buffer buffer{};
  const TensorInfo info{{16}};
  const InputBinding unknown[] = {{4, {info, buffer.values}}};
  CHECK(runtime.import_inputs(id, unknown).status().message() ==
        "input binding 4 does not exist; this network has inputs [0]");
  const InputBinding misaligned[] = {{0, {info, buffer.values + 1}}};
  CHECK(runtime.import_inputs(id, misaligned).status().message() ==
        "pre-imported input binding 0 needs a non-null buffer aligned to 64 bytes");
  const OutputBinding wrong_shape[] = {{0, {{{8}}, buffer.values}}};
  CHECK_THAT(runtime.import_outputs(id, wrong_shape).status().message(), Catch::Contains("expects Float32 [16]"));
  const NetworkId plain = load_relu(runtime, false);
  const InputBinding fine[] = {{0, {info, buffer.values}}};
  CHECK(runtime.import_inputs(plain, fine).status().message() ==
        "pre-importing inputs needs the network loaded with import_inputs");
  CHECK(runtime.import_inputs(77, fine).status().code() == ErrorCode::NotFound);
}
