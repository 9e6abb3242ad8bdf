// SPDX-License-Identifier: Apache-2.0
// Allocators, working-memory release, profiling, the debug callback, capabilities and context hooks.
#include <map>

#include <catch2/catch.hpp>
#include <kiln/kiln.hpp>

#include "example_networks.hpp"

using namespace kiln;

namespace {
/// Counts every byte kiln takes and gives back.
struct CountingAllocator {
  using memory = HostMemory;
  std::size_t live = 0, peak = 0, allocations = 0;
  std::map<void*, std::size_t> blocks;
  void* allocate(std::size_t size, std::size_t alignment) {
    void* p = ::operator new (size, std::align_val_t{alignment});
    blocks[p] = size;
    live += size;
    peak = std::max(peak, live);
    ++allocations;
    return p;
  }
  void deallocate(void* p, std::size_t size, std::size_t alignment) {
    REQUIRE(blocks.count(p) == 1);
    CHECK(blocks[p] == size);
    blocks.erase(p);
    live -= size;
    ::operator delete (p, std::align_val_t{alignment});
  }
};

/// y = relu(x) * 2 for a [4] input; binding 0 in and out.
Network relu_times_two() {
  Network net;
  auto x = net.add_input(0, {{4}}, "x");
  auto two = net.add_constant<float>({{1}}, std::vector<float>{2}, "two");
  auto relu = net.add<ops::Activation>({}, {x}, "relu");
  net.add_output(0, net.add<ops::ElementwiseBinary>({ops::BinaryOperation::Mul}, {relu, two}, "double"), "y");
  return net;
}

template <class... Bs>
Status run_once(Runtime<Bs...>& runtime, NetworkId id, const std::vector<float>& x, std::vector<float>& y) {
  const TensorInfo in_info = *runtime.input_info(id, 0), out_info = *runtime.output_info(id, 0);
  const InputBinding in[] = {{0, {in_info, x.data()}}};
  const OutputBinding out[] = {{0, {out_info, y.data()}}};
  return runtime.enqueue(id, in, out);
}
}  // namespace

TEST_CASE("Every byte goes through the user's allocator and comes back at unload", "[runtime][allocator]") {
  CountingAllocator counting;
  {
    Runtime<RefBackend> runtime({.host_allocator = AllocatorRef<HostMemory>(counting)});
    auto optimized = optimize<RefBackend>(examples::small_cnn());
    REQUIRE(optimized);
    auto id = runtime.load(*optimized);
    REQUIRE(id);
    const MemorySummary memory = *runtime.memory_summary(*id);
    CHECK(counting.live == memory.constant_bytes);  // the arena waits for the first inference
    std::vector<float> x(32 * 32 * 3, 0.5f), y(10);
    REQUIRE(run_once(runtime, *id, x, y));
    CHECK(counting.live == memory.constant_bytes + memory.arena_bytes);
    REQUIRE(runtime.unload(*id));
    CHECK(counting.live == 0);
    CHECK(counting.blocks.empty());
  }
  CHECK(counting.allocations > 0);
}

TEST_CASE("Switching networks can release the previous one's working memory", "[runtime][allocator]") {
  for (bool release : {false, true}) {
    CountingAllocator counting;
    Runtime<RefBackend> runtime(
        {.host_allocator = AllocatorRef<HostMemory>(counting), .release_working_memory_on_switch = release});
    auto a = runtime.load(*optimize<RefBackend>(examples::mlp()));
    auto b = runtime.load(*optimize<RefBackend>(examples::mlp()));
    REQUIRE((a && b));
    const MemorySummary memory = *runtime.memory_summary(*a);
    std::vector<float> x(64, 1.0f), y(12);
    REQUIRE(run_once(runtime, *a, x, y));
    REQUIRE(run_once(runtime, *b, x, y));
    INFO("release on switch " << release);
    CHECK(counting.live == 2 * memory.constant_bytes + (release ? 1 : 2) * memory.arena_bytes);
    REQUIRE(run_once(runtime, *a, x, y));  // reallocated on demand
  }
}

TEST_CASE("A failing allocator is reported at load, not a crash", "[runtime][allocator][errors]") {
  struct Exhausted {
    using memory = HostMemory;
    void* allocate(std::size_t, std::size_t) { return nullptr; }
    void deallocate(void*, std::size_t, std::size_t) {}
  } exhausted;
  Runtime<RefBackend> runtime({.host_allocator = AllocatorRef<HostMemory>(exhausted)});
  auto id = runtime.load(*optimize<RefBackend>(relu_times_two()));
  REQUIRE_FALSE(id);
  CHECK(id.status().code() == ErrorCode::OutOfMemory);
  CHECK(id.status().message() == "cannot allocate 4 bytes for constant 'two'");
}

TEST_CASE("Profiling records load, every layer and every inference", "[runtime][profiling]") {
  Runtime<RefBackend> runtime;
  LoadOptions options;
  options.profiling = true;
  auto id = runtime.load(*optimize<RefBackend>(relu_times_two()), options);
  REQUIRE(id);
  std::vector<float> x{-1, 0, 1, 2}, y(4);
  for (int i = 0; i < 3; ++i) REQUIRE(run_once(runtime, *id, x, y));
  CHECK(y == std::vector<float>{0, 0, 2, 4});
  const Profile profile = *runtime.profile(*id);
  CHECK(profile.load_us > 0);
  REQUIRE(profile.inferences.size() == 3);
  for (const InferenceTiming& inference : profile.inferences) {
    REQUIRE(inference.layers.size() == 2);
    CHECK(inference.layers[0].layer == "relu");
    CHECK(inference.layers[0].op == "Activation");
    CHECK(inference.layers[0].backend == "CpuRef");
    CHECK(inference.layers[1].layer == "double");
    CHECK(inference.layers[1].start_us >= inference.layers[0].start_us);
    CHECK(inference.duration_us >= inference.layers[0].duration_us + inference.layers[1].duration_us);
  }
  const std::string table = profile.to_table();
  CHECK_THAT(table, Catch::Contains("relu") && Catch::Contains("ElementwiseBinary") && Catch::Contains("3 inferences"));
  const std::string trace = profile.to_chrome_trace();
  CHECK_THAT(trace, Catch::StartsWith("{\"traceEvents\":[{\"name\":\"load\""));
  CHECK_THAT(trace, Catch::Contains("\"name\":\"double\",\"cat\":\"layer\",\"ph\":\"X\""));

  // Without profiling nothing is recorded.
  auto quiet = runtime.load(*optimize<RefBackend>(relu_times_two()));
  REQUIRE(run_once(runtime, *quiet, x, y));
  CHECK(runtime.profile(*quiet)->inferences.empty());
}

TEST_CASE("The debug callback sees every layer's output", "[runtime][debug]") {
  std::vector<std::pair<std::string, std::vector<float>>> seen;
  LoadOptions options;
  options.debug_callback = [&](const DebugEvent& event) {
    const auto values = event.tensor.as<float>();
    seen.emplace_back(std::string(event.layer_name), std::vector<float>(values.begin(), values.end()));
    CHECK(event.backend == "CpuRef");
    CHECK(event.output_index == 0);
  };
  Runtime<RefBackend> runtime;
  auto id = runtime.load(*optimize<RefBackend>(relu_times_two()), options);
  REQUIRE(id);
  std::vector<float> x{-1, 0, 1, 2}, y(4);
  REQUIRE(run_once(runtime, *id, x, y));
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == std::pair<std::string, std::vector<float>>{"relu", {0, 0, 1, 2}});
  CHECK(seen[1] == std::pair<std::string, std::vector<float>>{"double", {0, 0, 2, 4}});
}

// A backend written outside kiln's tree: sequential only, and with context hooks.
namespace custom {
struct Context : ref::Context {
  std::vector<std::string> events;
  bool refuse = false;
  Status before_load(const Network& network) {
    events.push_back("before_load " + std::to_string(network.num_layers()));
    return refuse ? Status::error(ErrorCode::DeviceError, "device busy") : Status::ok();
  }
  void after_load(NetworkId id) { events.push_back("after_load " + std::to_string(id)); }
  void before_unload(NetworkId id) { events.push_back("before_unload " + std::to_string(id)); }
  void after_unload(NetworkId id) { events.push_back("after_unload " + std::to_string(id)); }
};
}  // namespace custom

struct SequentialBackend {
  using fallback = RefBackend;
  static constexpr std::string_view id = "Sequential";
  static constexpr std::size_t alignment = 32;
  static constexpr BackendCapabilities capabilities{.async_execution = false};
  using memory = HostMemory;
  using context = custom::Context;
  static bool available() noexcept { return true; }
};

TEST_CASE("Asking for a capability a chosen backend lacks fails at load", "[runtime][capabilities][errors]") {
  Runtime<SequentialBackend, RefBackend> runtime;
  // Only Sequential may be used, so it runs the ReLU with the workload it inherits from RefBackend.
  auto optimized = optimize<SequentialBackend, RefBackend>(relu_times_two(), {{"Sequential"}});
  REQUIRE(optimized);
  LoadOptions options;
  options.async_execution = true;
  auto id = runtime.load(*optimized, options);
  REQUIRE_FALSE(id);
  CHECK(id.status().message() ==
        "layer 'relu' (Activation): backend Sequential cannot execute asynchronously; load without async_execution");
  CHECK_FALSE(Runtime<SequentialBackend, RefBackend>::device_spec().backends[0].capabilities.async_execution);
  // The same network on RefBackend alone loads for asynchronous execution.
  auto on_ref = optimize<SequentialBackend, RefBackend>(relu_times_two(), {{"CpuRef"}});
  CHECK(runtime.load(*on_ref, options));
}

TEST_CASE("Backend contexts hear about loads and unloads; a refusal cancels the load", "[runtime][hooks]") {
  Runtime<SequentialBackend, RefBackend> runtime;
  auto optimized = optimize<SequentialBackend, RefBackend>(relu_times_two());
  REQUIRE(optimized);
  auto id = runtime.load(*optimized);
  REQUIRE(id);
  std::vector<float> x{-1, 0, 1, 2}, y(4);
  REQUIRE(run_once(runtime, *id, x, y));
  CHECK(y == std::vector<float>{0, 0, 2, 4});
  REQUIRE(runtime.unload(*id));
  custom::Context& context = runtime.context<SequentialBackend>();
  CHECK(context.events ==
        std::vector<std::string>{"before_load 5", "after_load 0", "before_unload 0", "after_unload 0"});

  context.refuse = true;
  auto refused = runtime.load(*optimized);
  REQUIRE_FALSE(refused);
  CHECK(refused.status().message() == "device busy");
}

TEST_CASE("A loaded network prints its backends, shapes and arena offsets as text and DOT", "[runtime][details]") {
  Runtime<RefBackend> runtime;
  auto id = runtime.load(*optimize<RefBackend>(relu_times_two()));
  REQUIRE(id);
  CHECK(*runtime.network_text(*id) ==
        "memory: greedy-by-size, arena 128 bytes (lower bound 128), constants 4 bytes\n"
        "x (Input) binding 0\n"
        "  out Float32 [4] @0\n"
        "relu (Activation) on CpuRef\n"
        "  in  Float32 [4] @0\n"
        "  out Float32 [4] @64\n"
        "double (ElementwiseBinary) on CpuRef\n"
        "  in  Float32 [4] @64\n"
        "  in  Float32 [1] constant\n"
        "  out Float32 [4] @0\n"
        "y (Output) binding 0\n"
        "  in  Float32 [4] @0\n");
  const std::string dot = *runtime.network_dot(*id);
  CHECK_THAT(dot, Catch::StartsWith("digraph kiln {"));
  CHECK_THAT(dot, Catch::Contains("step1 [label=\"relu\\nActivation\\nCpuRef\"];"));
  CHECK_THAT(dot, Catch::Contains("step0 -> step1 [label=\"Float32 [4] @0\"];"));
  CHECK_THAT(dot, Catch::Contains("[shape=note, label=\"Float32 [1] constant\"];"));
  CHECK(runtime.network_dot(99).status().code() == ErrorCode::NotFound);
}

TEST_CASE("The logger is silent by default and reports loads, unloads and failures when asked", "[runtime][logging]") {
  std::vector<std::string> lines;
  auto sink = [&](LogSeverity severity, std::string_view message) {
    lines.push_back(std::string(to_string(severity)) + ": " + std::string(message));
  };
  {
    Runtime<RefBackend> quiet({.logger = {LogSeverity::Off, sink}});
    auto id = quiet.load(*optimize<RefBackend>(relu_times_two()));
    REQUIRE(id);
    CHECK_FALSE(quiet.enqueue(*id, {}, {}));
    CHECK(lines.empty());
  }
  Runtime<RefBackend> runtime({.logger = {LogSeverity::Info, sink}});
  auto id = runtime.load(*optimize<RefBackend>(relu_times_two()));
  REQUIRE(id);
  CHECK_FALSE(runtime.enqueue(*id, {}, {}));
  REQUIRE(runtime.unload(*id));
  REQUIRE(lines.size() == 3);
  CHECK_THAT(lines[0], Catch::StartsWith("info: loaded network 0 (5 layers): greedy-by-size arena 128 bytes"));
  CHECK(lines[1] == "error: enqueue failed: input binding 0 is missing");
  CHECK(lines[2] == "info: unloaded network 0");

  Runtime<RefBackend> errors_only({.logger = {LogSeverity::Error, sink}});
  lines.clear();
  auto second = errors_only.load(*optimize<RefBackend>(relu_times_two()));
  CHECK(lines.empty());
  CHECK_FALSE(errors_only.unload(*second + 1));
}

// A backend with typed options, handed to its context when the runtime is built.
namespace tuned {
struct Options {
  int threads = 1;
  bool fast_math = false;
  std::string tuning_file;
};
struct Context : ref::Context {
  Options seen;
  int configured = 0;
  void configure(const Options& options) {
    seen = options;
    ++configured;
  }
};
}  // namespace tuned

struct TunedBackend {
  using fallback = RefBackend;
  static constexpr std::string_view id = "Tuned";
  static constexpr std::size_t alignment = 64;
  using memory = HostMemory;
  using context = tuned::Context;
  using options = tuned::Options;
  static bool available() noexcept { return true; }
};

TEST_CASE("Typed backend options reach the backend's context", "[runtime][options]") {
  static_assert(std::is_same_v<backend_options_t<TunedBackend>, tuned::Options>);
  static_assert(std::is_same_v<backend_options_t<RefBackend>, NoBackendOptions>);
  BackendOptions<TunedBackend, RefBackend> options;
  options.get<TunedBackend>().threads = 3;
  options.get<TunedBackend>().fast_math = true;
  options.get<TunedBackend>().tuning_file = "tuned.txt";
  Runtime<TunedBackend, RefBackend> runtime({}, options);
  const tuned::Context& context = runtime.context<TunedBackend>();
  CHECK(context.configured == 1);
  CHECK(context.seen.threads == 3);
  CHECK(context.seen.fast_math);
  CHECK(context.seen.tuning_file == "tuned.txt");
  // Without options the context is configured with the defaults.
  Runtime<TunedBackend, RefBackend> defaults;
  CHECK(defaults.context<TunedBackend>().configured == 1);
  CHECK(defaults.context<TunedBackend>().seen.threads == 1);
}
