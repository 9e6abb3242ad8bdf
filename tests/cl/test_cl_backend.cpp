// SPDX-License-Identifier: Apache-2.0
// ClBackend beyond single layers: the device, embedded and on-disk kernels, the program cache, build
// errors, device memory, mixed-backend networks, concurrency, zero copy, and no OpenCL at all.
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>
#include <kiln/kiln.hpp>

#include "example_networks.hpp"

using namespace kiln;

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

/// A fresh folder holding a copy of kernels/, for tests that edit kernels.
std::filesystem::path copy_of_kernels(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("kiln_cl_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const auto& entry : std::filesystem::directory_iterator(KILN_KERNEL_DIR))
    if (entry.path().extension() == ".cl") std::filesystem::copy_file(entry.path(), dir / entry.path().filename());
  return dir;
}

void replace_in_file(const std::filesystem::path& path, const std::string& from, const std::string& to) {
  std::string text = read_file(path);
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  std::ofstream(path) << text;
}

/// x -> Activation(ReLU) -> y on a [1, 8] tensor.
Network relu_network() {
  Network net;
  auto x = net.add_input(0, {{1, 8}}, "x");
  net.add_output(0, net.add<ops::Activation>({ops::ActivationFunction::ReLU}, {x}, "relu"), "y");
  return net;
}

/// Runs a one-input, one-output network that is loaded already.
template <class R>
std::vector<float> run(R& runtime, NetworkId id, const std::vector<float>& input) {
  const TensorInfo in_info = *runtime.input_info(id, 0), out_info = *runtime.output_info(id, 0);
  std::vector<float> output(out_info.num_elements());
  const InputBinding in[] = {{0, {in_info, input.data()}}};
  const OutputBinding out[] = {{0, {out_info, output.data()}}};
  const Status status = runtime.enqueue(id, in, out);
  INFO(status.message());
  REQUIRE(status);
  return output;
}

std::vector<float> run_on_ref(Network net, const std::vector<float>& input) {
  auto optimized = optimize<RefBackend>(std::move(net));
  REQUIRE(optimized);
  Runtime<RefBackend> runtime;
  auto id = runtime.load(*optimized);
  REQUIRE(id);
  return run(runtime, *id, input);
}

void check_close(const std::vector<float>& actual, const std::vector<float>& expected, double epsilon = 1e-4) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i);
    REQUIRE(actual[i] == Approx(expected[i]).margin(1e-5).epsilon(epsilon));
  }
}

using ClRuntime = Runtime<ClBackend, RefBackend>;

}  // namespace

TEST_CASE("An OpenCL device is present: a build with OpenCL runs its CL tests, never skips them", "[cl][device]") {
  REQUIRE(ClBackend::available());
  ClRuntime runtime;
  const Status ready = runtime.context<ClBackend>().ready();
  INFO(ready.message());
  REQUIRE(ready);
  INFO("OpenCL device: " << runtime.context<ClBackend>().device_description());
  CHECK_FALSE(runtime.context<ClBackend>().device_description().empty());
}

TEST_CASE("The embedded kernels are exactly the .cl files of kernels/", "[cl][kernels]") {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(KILN_KERNEL_DIR))
    files += entry.path().extension() == ".cl" ? 1 : 0;
  CHECK(opencl::embedded_kernel_sources.size() == files);
  for (const auto& source : opencl::embedded_kernel_sources) {
    INFO("kernels/" << source.family << ".cl");
    CHECK(read_file(std::filesystem::path(KILN_KERNEL_DIR) / (std::string(source.family) + ".cl")) == source.text);
  }
}

TEST_CASE("Programs are built once per kernel family and build options, then reused", "[cl][programs]") {
  ClRuntime runtime;
  auto optimized = optimize<ClBackend, RefBackend>(examples::small_cnn());
  REQUIRE(optimized);
  REQUIRE(runtime.load(*optimized));
  const std::size_t first = runtime.context<ClBackend>().programs_built();
  CHECK(first >= 2);  // convolution, pooling, ... each family once
  REQUIRE(runtime.load(*optimized));
  CHECK(runtime.context<ClBackend>().programs_built() == first);

  // The data-movement family is built once per element size: Float32 and Boolean transposes
  // need two programs, a second Float32 transpose none.
  auto transpose = [&](DataType type) {
    Network net;
    auto x = net.add_input(0, {{2, 3}, type}, "x");
    net.add_output(0, net.add<ops::Transpose>({}, {x}, "t"), "y");
    auto opt = optimize<ClBackend, RefBackend>(std::move(net));
    REQUIRE(opt);
    REQUIRE(runtime.load(*opt));
  };
  transpose(DataType::Float32);
  const std::size_t after_float = runtime.context<ClBackend>().programs_built();
  CHECK(after_float == first + 1);
  transpose(DataType::Boolean);
  CHECK(runtime.context<ClBackend>().programs_built() == after_float + 1);
  transpose(DataType::Float32);
  CHECK(runtime.context<ClBackend>().programs_built() == after_float + 1);
}

TEST_CASE("A kernel that does not compile fails the load with the compiler's build log", "[cl][programs][errors]") {
  const auto dir = copy_of_kernels("broken");
  replace_in_file(dir / "elementwise.cl", "STORE(y, i, kiln_activate(LOAD(x, i), function, a, b));",
                  "STORE(y, i, kiln_activate(LOAD(x, i), function, a, b) + undeclared_value);");
  BackendOptions<ClBackend, RefBackend> options;
  options.get<ClBackend>().kernel_dir = dir.string();
  ClRuntime runtime({}, options);
  auto optimized = optimize<ClBackend, RefBackend>(relu_network());
  REQUIRE(optimized);
  auto id = runtime.load(*optimized);
  REQUIRE_FALSE(id);
  // The multi-line log is shown only when a check fails: Catch's TAP reporter prints the messages
  // of passing checks too, and their line breaks would break the TAP stream.
  const std::string message = id.status().message();
  CHECK(id.status().code() == ErrorCode::DeviceError);
  bool names_layer_file_and_error = true;
  for (const char* part :
       {"layer 'relu'", "kernels/elementwise.cl", "build log", "undeclared_value", "elementwise.cl:"})
    names_layer_file_and_error = names_layer_file_and_error && message.find(part) != std::string::npos;
  if (!names_layer_file_and_error) FAIL_CHECK(message);
  std::filesystem::remove_all(dir);
}

TEST_CASE("Kernels load from a folder instead of the embedded copies (option and KILN_CL_KERNEL_DIR)",
          "[cl][kernels]") {
  const auto dir = copy_of_kernels("edited");
  replace_in_file(dir / "elementwise.cl", "STORE(y, i, kiln_activate(LOAD(x, i), function, a, b));", "y[i] = 42.0f;");
  auto optimized = optimize<ClBackend, RefBackend>(relu_network());
  REQUIRE(optimized);
  const std::vector<float> input{-1, 0, 1, 2, 3, 4, 5, 6};
  SECTION("Options::kernel_dir") {
    BackendOptions<ClBackend, RefBackend> options;
    options.get<ClBackend>().kernel_dir = dir.string();
    ClRuntime runtime({}, options);
    auto id = runtime.load(*optimized);
    REQUIRE(id);
    CHECK(run(runtime, *id, input) == std::vector<float>(8, 42.0f));
  }
  SECTION("KILN_CL_KERNEL_DIR") {
    ::setenv("KILN_CL_KERNEL_DIR", dir.c_str(), 1);
    ClRuntime runtime;
    auto id = runtime.load(*optimized);
    ::unsetenv("KILN_CL_KERNEL_DIR");
    REQUIRE(id);
    CHECK(run(runtime, *id, input) == std::vector<float>(8, 42.0f));
  }
  SECTION("the embedded kernels otherwise") {
    ClRuntime runtime;
    auto id = runtime.load(*optimized);
    REQUIRE(id);
    CHECK(run(runtime, *id, input) == std::vector<float>{0, 0, 1, 2, 3, 4, 5, 6});
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("Build options reach every program build (option and KILN_CL_BUILD_OPTIONS)", "[cl][kernels]") {
  // The edited kernel stores a value that only the build options define.
  const auto dir = copy_of_kernels("build_options");
  replace_in_file(dir / "elementwise.cl", "STORE(y, i, kiln_activate(LOAD(x, i), function, a, b));",
                  "STORE(y, i, KILN_TEST_VALUE);");
  auto optimized = optimize<ClBackend, RefBackend>(relu_network());
  REQUIRE(optimized);
  BackendOptions<ClBackend, RefBackend> options;
  options.get<ClBackend>().kernel_dir = dir.string();
  const std::vector<float> input(8, 1.0f);
  SECTION("Options::build_options") {
    options.get<ClBackend>().build_options = "-DKILN_TEST_VALUE=42.0f";
    ClRuntime runtime({}, options);
    auto id = runtime.load(*optimized);
    REQUIRE(id);
    CHECK(run(runtime, *id, input) == std::vector<float>(8, 42.0f));
  }
  SECTION("KILN_CL_BUILD_OPTIONS") {
    ::setenv("KILN_CL_BUILD_OPTIONS", "-DKILN_TEST_VALUE=7.0f", 1);
    ClRuntime runtime({}, options);
    auto id = runtime.load(*optimized);
    ::unsetenv("KILN_CL_BUILD_OPTIONS");
    REQUIRE(id);
    CHECK(run(runtime, *id, input) == std::vector<float>(8, 7.0f));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("A device that matches nothing fails the load, listing the devices there are", "[cl][device][errors]") {
  BackendOptions<ClBackend, RefBackend> options;
  options.get<ClBackend>().device = "no-such-device";
  ClRuntime runtime({}, options);
  auto optimized = optimize<ClBackend, RefBackend>(relu_network());
  REQUIRE(optimized);
  auto id = runtime.load(*optimized);
  REQUIRE_FALSE(id);
  CHECK_THAT(id.status().message(),
             Catch::Contains("no OpenCL device matches \"no-such-device\"") && Catch::Contains("there are 0:0"));
}

TEST_CASE("Tensors live in one device arena per working memory, planned with the device's alignment", "[cl][memory]") {
  ClRuntime runtime;
  auto optimized = optimize<ClBackend, RefBackend>(examples::small_cnn());
  REQUIRE(optimized);
  auto id = runtime.load(*optimized);
  REQUIRE(id);
  const MemorySummary memory = *runtime.memory_summary(*id);
  CHECK(memory.device_tensors > 0);
  CHECK(memory.device_arena_bytes >= memory.device_lower_bound_bytes);
  CHECK(memory.device_arena_bytes < memory.device_lower_bound_bytes * 2);
  // Only the input and output cross to the host; the host arena holds nothing else.
  const TensorInfo in = *runtime.input_info(*id, 0), out = *runtime.output_info(*id, 0);
  CHECK(memory.tensors == 2);
  CHECK(memory.arena_bytes <= in.num_bytes() + out.num_bytes() + 2 * 64);
  const std::string text = *runtime.network_text(*id);
  CHECK_THAT(text, Catch::Contains("@cl:") && Catch::Contains("cl arena"));
  const std::size_t alignment = runtime.context<ClBackend>().arena_alignment();
  for (std::size_t at = text.find("@cl:"); at != std::string::npos; at = text.find("@cl:", at + 1))
    CHECK(std::stoull(text.substr(at + 4)) % alignment == 0);
}

TEST_CASE("A network split across ClBackend and the CPU backends gets copies and the right result", "[cl][mixed]") {
  // conv (Cl) -> Gather with indices fed at run time (Cl gathers constant indices only) -> softmax (Cl).
  auto build = [] {
    examples::WeightGenerator weights(3);
    Network net;
    auto x = net.add_input(0, {{1, 6, 6, 3}}, "x");
    auto w = net.add_constant<float>({{4, 3, 3, 3}}, weights.values(4 * 27, 0.5f), "w");
    auto conv =
        net.add<ops::Convolution2d>({.padding = {1, 1, 1, 1}, .stride = {1, 1}, .dilation = {1, 1}}, {x, w}, "conv");
    auto indices = net.add_input(1, {{2}, DataType::Signed32}, "indices");
    auto picked = net.add<ops::Gather>({.axis = 1}, {conv, indices}, "gather");
    net.add_output(0, net.add<ops::Softmax>({}, {picked}, "softmax"), "y");
    return net;
  };
  const std::vector<float> x = examples::WeightGenerator(5).values(108, 1.0f);
  const std::vector<std::int32_t> indices{4, -1};
  auto run_with = [&]<class... Bs>(std::type_identity<Runtime<Bs...>>, OptimizerOptions options,
                                   std::string* printout) {
    auto optimized = optimize<Bs...>(build(), options);
    INFO(optimized.status().message());
    REQUIRE(optimized);
    if (printout) *printout = optimized->to_string();
    Runtime<Bs...> runtime;
    auto id = runtime.load(*optimized);
    INFO(id.status().message());
    REQUIRE(id);
    std::vector<float> y(runtime.output_info(*id, 0)->num_elements());
    const InputBinding in[] = {{0, {*runtime.input_info(*id, 0), x.data()}},
                               {1, {*runtime.input_info(*id, 1), indices.data()}}};
    const OutputBinding out[] = {{0, {*runtime.output_info(*id, 0), y.data()}}};
    REQUIRE(runtime.enqueue(*id, in, out));
    return y;
  };
  const auto expected = run_with(std::type_identity<Runtime<RefBackend>>{}, {}, nullptr);
  std::string printout;
  SECTION("Cl and Ref") {
    check_close(run_with(std::type_identity<ClRuntime>{}, {}, &printout), expected);
    CHECK_THAT(printout, Catch::Contains("conv (Convolution2d) Float32 [1, 6, 6, 4] -> GpuAcc") &&
                             Catch::Contains("conv to host (MemCopy device -> host)") &&
                             Catch::Contains("gather (Gather) Float32 [1, 2, 6, 4] -> CpuRef") &&
                             Catch::Contains("gather to cl (MemCopy host -> device)") &&
                             Catch::Contains("x to cl (MemCopy host -> device)") &&
                             Catch::Contains("softmax to host (MemCopy device -> host)"));
  }
  SECTION("In Float16: ClBackend runs the layers and the Casts in Float16, RefBackend the Gather") {
    const OptimizerOptions float16{.reduce_float32_to_float16 = true};
    const auto expected16 = run_with(std::type_identity<Runtime<RefBackend>>{}, float16, nullptr);
    check_close(expected16, expected, 1e-2);  // one Float16 rounding of the inputs, weights and each layer
    // Float arithmetic rounded once per result, as RefBackend's: one Float16 step apart at most.
    check_close(run_with(std::type_identity<ClRuntime>{}, float16, &printout), expected16, 1.0 / 1024);
    CHECK_THAT(printout, Catch::Contains("x/to_float16 (Cast) Float16 [1, 6, 6, 3] -> GpuAcc") &&
                             Catch::Contains("conv (Convolution2d) Float16 [1, 6, 6, 4] -> GpuAcc") &&
                             Catch::Contains("gather (Gather) Float16 [1, 2, 6, 4] -> CpuRef") &&
                             Catch::Contains("softmax (Softmax) Float16 [1, 2, 6, 4] -> GpuAcc") &&
                             Catch::Contains("softmax/to_float32 (Cast) Float32 [1, 2, 6, 4] -> GpuAcc"));
    // ClBackend alone runs the Casts too, so the whole network becomes Float16 on the device.
    Network alone;
    auto x = alone.add_input(0, {{1, 6, 6, 3}}, "x");
    auto w = alone.add_constant<float>({{4, 1, 1, 3}}, std::vector<float>(12, 0.5f), "w");
    alone.add_output(0, alone.add<ops::Convolution2d>({}, {x, w}, "conv"), "y");
    auto on_cl = optimize<ClBackend, RefBackend>(
        std::move(alone), {.backend_preferences = {"GpuAcc"}, .reduce_float32_to_float16 = true});
    REQUIRE(on_cl);
    CHECK_THAT(on_cl->to_string(), Catch::Contains("conv (Convolution2d) Float16 [1, 6, 6, 4] -> GpuAcc") &&
                                       Catch::Contains("conv/to_float32 (Cast) Float32 [1, 6, 6, 4] -> GpuAcc"));
  }
#if KILN_WITH_NEON
  SECTION("Cl, Neon and Ref: the Gather on Ref, whose workload NeonBackend would only inherit") {
    using Three = Runtime<ClBackend, NeonBackend, RefBackend>;
    check_close(run_with(std::type_identity<Three>{}, {}, &printout), expected);
    CHECK_THAT(printout, Catch::Contains("gather (Gather) Float32 [1, 2, 6, 4] -> CpuRef (Float32); "
                                         "GpuAcc: gathers with constant indices only; CpuAcc: no Gather workload"));
  }
  SECTION("Cl, Neon and Ref, preferring Neon: one memory kind, no copies") {
    using Three = Runtime<ClBackend, NeonBackend, RefBackend>;
    check_close(run_with(std::type_identity<Three>{}, {{"CpuAcc", "GpuAcc", "CpuRef"}}, &printout), expected);
    CHECK_THAT(printout,
               Catch::Contains("conv (Convolution2d) Float32 [1, 6, 6, 4] -> CpuAcc") && !Catch::Contains("MemCopy"));
  }
#endif
}

TEST_CASE("The debug callback sees device tensors, read back to the host", "[cl][debug]") {
  auto optimized = optimize<ClBackend, RefBackend>(relu_network(), {.fuse_activations = false});
  REQUIRE(optimized);
  ClRuntime runtime;
  std::vector<std::pair<std::string, std::vector<float>>> seen;
  LoadOptions options;
  options.debug_callback = [&](const DebugEvent& event) {
    const auto* data = static_cast<const float*>(event.tensor.data);
    seen.emplace_back(std::string(event.layer_name), std::vector<float>(data, data + event.tensor.info.num_elements()));
  };
  auto id = runtime.load(*optimized, std::move(options));
  REQUIRE(id);
  const std::vector<float> input{-3, -1, 0, 1, 2, -2, 5, 7};
  run(runtime, *id, input);
  REQUIRE(seen.size() == 3);  // the copy in, relu, the copy out
  CHECK(seen[0].first == "x to cl");
  CHECK(seen[0].second == input);
  CHECK(seen[1].first == "relu");
  CHECK(seen[1].second == std::vector<float>{0, 0, 0, 1, 2, 0, 5, 7});
  CHECK(seen[2].second == seen[1].second);
}

TEST_CASE("Working memory handles run a ClBackend network from several threads at once", "[cl][async][threads]") {
  ClRuntime runtime;
  auto optimized = optimize<ClBackend, RefBackend>(examples::small_cnn());
  REQUIRE(optimized);
  auto id = runtime.load(*optimized, {.async_execution = true});
  REQUIRE(id);
  const TensorInfo in_info = *runtime.input_info(*id, 0), out_info = *runtime.output_info(*id, 0);
  constexpr int threads = 3, inferences = 8;
  std::vector<std::vector<float>> inputs, expected;
  for (int i = 0; i < inferences; ++i) {
    inputs.push_back(examples::WeightGenerator(static_cast<std::uint64_t>(i)).values(in_info.num_elements(), 1.0f));
    expected.push_back(run_on_ref(examples::small_cnn(), inputs.back()));
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      auto handle = runtime.create_working_mem_handle(*id);
      if (!handle) return void(++bad);
      for (int i = 0; i < inferences; ++i) {
        std::vector<float> y(out_info.num_elements());
        const InputBinding in[] = {{0, {in_info, inputs[i].data()}}};
        const OutputBinding out[] = {{0, {out_info, y.data()}}};
        if (!runtime.execute(**handle, in, out)) ++bad;
        for (std::size_t k = 0; k < y.size(); ++k)
          if (std::abs(y[k] - expected[i][k]) > 1e-4f + 1e-4f * std::abs(expected[i][k])) return void(++bad);
      }
    });
  for (auto& thread : pool) thread.join();
  CHECK(bad == 0);
}

TEST_CASE("Imported inputs are read by the device in place; exported outputs are read straight into user memory",
          "[cl][zero-copy]") {
  ClRuntime runtime;
  auto optimized = optimize<ClBackend, RefBackend>(examples::small_cnn());
  REQUIRE(optimized);
  auto id = runtime.load(*optimized, {.import_inputs = true, .export_outputs = true, .profiling = true});
  REQUIRE(id);
  const TensorInfo in_info = *runtime.input_info(*id, 0), out_info = *runtime.output_info(*id, 0);
  alignas(64) static float input[1 << 12 | 1], output[1 << 12];
  REQUIRE(in_info.num_elements() + 1 <= std::size(input));
  auto copies_in_last_inference = [&] {
    const Profile profile = *runtime.profile(*id);  // kept: a temporary in the loop's range would die first
    std::size_t copies = 0;
    for (const LayerTiming& layer : profile.inferences.back().layers) copies += layer.op == "MemCopy" ? 1 : 0;
    return copies;
  };
  for (std::uint64_t seed : {9u, 10u}) {  // new values in the same buffer: nothing stale is read
    const std::vector<float> x = examples::WeightGenerator(seed).values(in_info.num_elements(), 1.0f);
    const std::vector<float> expected = run_on_ref(examples::small_cnn(), x);
    INFO("aligned: the copy to the device is skipped, the kernels read the user's buffer");
    std::copy(x.begin(), x.end(), input);
    const InputBinding aligned_in[] = {{0, {in_info, input}}};
    const OutputBinding out[] = {{0, {out_info, output}}};
    REQUIRE(runtime.enqueue(*id, aligned_in, out));
    check_close(std::vector<float>(output, output + out_info.num_elements()), expected);
    CHECK(copies_in_last_inference() == 1);  // only the result's way back
    INFO("misaligned: copied as without import");
    std::copy(x.begin(), x.end(), input + 1);
    const InputBinding misaligned_in[] = {{0, {in_info, input + 1}}};
    REQUIRE(runtime.enqueue(*id, misaligned_in, out));
    check_close(std::vector<float>(output, output + out_info.num_elements()), expected);
    CHECK(copies_in_last_inference() == 2);
  }
}

TEST_CASE("A MobileNet-v2-shaped network runs on ClBackend alone and matches RefBackend", "[cl][examples]") {
  auto optimized = optimize<ClBackend, RefBackend>(examples::mobilenet_v2(64, 100));
  REQUIRE(optimized);
  std::size_t copies = 0;
  for (LayerId id : optimized->execution_order()) {
    const Layer& layer = optimized->network().layer(id);
    if (optimized->backend_index(id) == OptimizedNetwork<ClBackend, RefBackend>::no_backend) continue;
    INFO(layer.describe());
    CHECK(optimized->backend_id(id) == "GpuAcc");
    copies += layer.is<ops::MemCopy>() ? 1 : 0;
  }
  CHECK(copies == 2);  // the input in, the probabilities out
  ClRuntime runtime;
  auto id = runtime.load(*optimized);
  REQUIRE(id);
  const std::vector<float> x = examples::WeightGenerator(7).values(runtime.input_info(*id, 0)->num_elements(), 1.0f);
  check_close(run(runtime, *id, x), run_on_ref(examples::mobilenet_v2(64, 100), x), 1e-3);
}

TEST_CASE("Without an OpenCL platform ClBackend is unavailable and the other backends run", "[cl][no-device]") {
  CHECK_FALSE(ClBackend::available());
  auto optimized = optimize<ClBackend, RefBackend>(relu_network());
  REQUIRE(optimized);
  for (LayerId id : optimized->execution_order())
    if (optimized->backend_index(id) != OptimizedNetwork<ClBackend, RefBackend>::no_backend)
      CHECK(optimized->backend_id(id) == "CpuRef");
  CHECK_THAT(optimized->to_string(), !Catch::Contains("MemCopy"));

  auto only_cl = optimize<ClBackend, RefBackend>(relu_network(), {{"GpuAcc"}});
  REQUIRE_FALSE(only_cl);
  CHECK_THAT(only_cl.status().message(), Catch::Contains("GpuAcc: not available on this machine"));

  ClRuntime runtime;
  const Status ready = runtime.context<ClBackend>().ready();
  REQUIRE_FALSE(ready);
  CHECK_THAT(ready.message(), Catch::Contains("no OpenCL platform is installed") && Catch::Contains("pocl-opencl-icd"));
  auto id = runtime.load(*optimized);
  REQUIRE(id);
  CHECK(run(runtime, *id, {-1, 0, 1, 2, 3, 4, 5, -6}) == std::vector<float>{0, 0, 1, 2, 3, 4, 5, 0});
}

TEST_CASE("A profiled network records each ClBackend layer's device time from its OpenCL events", "[cl][profiling]") {
  auto optimized = optimize<ClBackend, RefBackend>(examples::small_cnn());
  REQUIRE(optimized);
  ClRuntime runtime;
  auto id = runtime.load(*optimized, {.profiling = true});
  REQUIRE(id);
  const std::vector<float> x = examples::WeightGenerator(1).values(runtime.input_info(*id, 0)->num_elements(), 1.0f);
  for (int i = 0; i < 3; ++i) run(runtime, *id, x);
  const Profile profile = *runtime.profile(*id);
  REQUIRE(profile.inferences.size() == 3);
  for (const InferenceTiming& inference : profile.inferences) {
    std::size_t device_layers = 0;
    for (const LayerTiming& layer : inference.layers) {
      INFO(layer.layer);
      CHECK(layer.backend == "GpuAcc");
      CHECK(layer.duration_us > 0);
      // Device times fit inside the inference, which waited for all of them.
      CHECK(layer.start_us + layer.duration_us <= inference.duration_us + 1.0);
      ++device_layers;
    }
    std::size_t compute_layers = 0;
    for (LayerId layer : optimized->execution_order())
      compute_layers += optimized->backend_index(layer) != OptimizedNetwork<ClBackend, RefBackend>::no_backend ? 1 : 0;
    CHECK(device_layers == compute_layers);
  }
  CHECK_THAT(profile.to_table(), Catch::Contains("GpuAcc"));
}

TEST_CASE("The on-disk program cache turns a second start's builds into binary loads", "[cl][programs][cache]") {
  const auto dir = std::filesystem::temp_directory_path() / ("kiln_cl_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  BackendOptions<ClBackend, RefBackend> options;
  options.get<ClBackend>().program_cache_dir = dir.string();
  auto optimized = optimize<ClBackend, RefBackend>(examples::small_cnn());
  REQUIRE(optimized);
  const std::vector<float> x = examples::WeightGenerator(4).values(32 * 32 * 3, 1.0f);
  const std::vector<float> expected = run_on_ref(examples::small_cnn(), x);
  std::size_t built = 0;
  {
    ClRuntime cold({}, options);
    auto id = cold.load(*optimized);
    REQUIRE(id);
    check_close(run(cold, *id, x), expected);
    built = cold.context<ClBackend>().programs_built();
    CHECK(built > 0);
    CHECK(cold.context<ClBackend>().programs_loaded() == 0);
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files.push_back(entry.path());
  CHECK(files.size() == built);
  {
    ClRuntime warm({}, options);
    auto id = warm.load(*optimized);
    REQUIRE(id);
    check_close(run(warm, *id, x), expected);
    CHECK(warm.context<ClBackend>().programs_built() == 0);
    CHECK(warm.context<ClBackend>().programs_loaded() == built);
  }
  // A damaged entry is rebuilt from source, not trusted.
  std::ofstream(files.front(), std::ios::trunc) << "not a program binary";
  {
    ClRuntime damaged({}, options);
    auto id = damaged.load(*optimized);
    REQUIRE(id);
    check_close(run(damaged, *id, x), expected);
    CHECK(damaged.context<ClBackend>().programs_built() == 1);
    CHECK(damaged.context<ClBackend>().programs_loaded() == built - 1);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("The work-group tuner measures each kernel and shape once; later runtimes read its file", "[cl][tuner]") {
  const auto path = std::filesystem::temp_directory_path() / ("kiln_cl_tuning_" + std::to_string(::getpid()) + ".txt");
  std::filesystem::remove(path);
  auto optimized = optimize<ClBackend, RefBackend>(examples::small_cnn());
  REQUIRE(optimized);
  const std::vector<float> x = examples::WeightGenerator(6).values(32 * 32 * 3, 1.0f);
  const std::vector<float> expected = run_on_ref(examples::small_cnn(), x);
  BackendOptions<ClBackend, RefBackend> options;
  options.get<ClBackend>().tuning_file = path.string();
  std::size_t tuned = 0;
  {
    options.get<ClBackend>().tune = true;
    ClRuntime tuning({}, options);
    auto id = tuning.load(*optimized);
    REQUIRE(id);
    check_close(run(tuning, *id, x), expected);  // the first run measures, and still computes right
    check_close(run(tuning, *id, x), expected);
    tuned = tuning.context<ClBackend>().tuned_sizes();
    CHECK(tuned >= 5);  // one per kernel and global size of the network
  }
  std::size_t lines = 0;
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) ++lines;
  CHECK(lines == tuned);
  {
    options.get<ClBackend>().tune = false;
    ClRuntime tuned_runtime({}, options);
    auto id = tuned_runtime.load(*optimized);
    REQUIRE(id);
    CHECK(tuned_runtime.context<ClBackend>().tuned_sizes() == tuned);
    check_close(run(tuned_runtime, *id, x), expected);
  }
  std::ofstream(path, std::ios::trunc) << "gemm 8 16\n";
  {
    ClRuntime broken({}, options);
    auto id = broken.load(*optimized);
    REQUIRE_FALSE(id);
    CHECK_THAT(id.status().message(),
               Catch::Contains("line 1 of the OpenCL tuning file") && Catch::Contains("gemm 8 16"));
  }
  std::filesystem::remove(path);
}
