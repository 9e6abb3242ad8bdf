// SPDX-License-Identifier: Apache-2.0
// kiln: run, check, benchmark, inspect and evaluate ONNX models (in the spirit of Arm NN's ExecuteNetwork).
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include <kiln/import/quantize.hpp>

#include "compile_header.hpp"
#include "session.hpp"

namespace {

using kiln::Status;
using kiln::onnx::HostTensor;
using kiln::tool::Session;
using kiln::tool::SessionOptions;

/// Each command's synopsis and what it does, as `kiln --help` and `kiln COMMAND --help` print them.
struct CommandHelp {
  std::string_view name, text;
};
constexpr CommandHelp commands[] = {
    {"run", R"(  run MODEL [--input FILE ...] [--output FILE ...]
        one inference; inputs are TensorProto (.pb) or NumPy (.npy) files in the model's input order
        (deterministic random data when none are given); outputs are written as .pb or .npy
)"},
    {"check", R"(  check MODEL TEST_DIR [--rtol R] [--atol A]
        runs the ONNX test cases TEST_DIR/test_data_set_*/{input,output}_*.pb and compares
        (pass: |kiln - expected| <= atol + rtol * |expected|; defaults 1e-3 and 1e-4)
)"},
    {"bench", R"(  bench MODEL [--iterations N] [--warmup N]
        load time and latency (min, median, p90)
)"},
    {"inspect", R"(  inspect MODEL [--profile FILE [--iterations N]]
        the optimized network (layer -> backend, shapes) and its memory plan; --profile writes a
        Chrome trace (chrome://tracing, Perfetto) of N inferences (default 1; the first one is cold:
        its first touches of the arena and the caches count)
)"},
    {"eval", R"(  eval MODEL [MODEL ...] IMAGES.npy [--labels LABELS.npy] [--reference LOGITS.npy] [--min-agreement P]
        a classifier over a batch of examples (one inference per example), each model on each
        backend of --backend in turn (default: every available one): accuracy, agreement with the
        reference outputs (the command fails below P percent, default 100), latency
)"},
    {"quantize",
     R"(  quantize MODEL CALIBRATION.npy -o OUTPUT.onnx [--activations u8|s8] [--weights per-channel|per-tensor]
           [--calibration minmax|percentile] [--percentile P]
        post-training int8 quantisation: runs the Float32 model on each example of CALIBRATION.npy
        (a batch of its input; on --backend, default ref), chooses each activation's range (the
        extremes, or the central P percent, default 99.99) and writes a QDQ model that kiln and
        ONNX Runtime load (default: uint8 activations, int8 weights per output channel)
)"},
    {"compile", R"(  compile MODEL -o NAME.hpp [--namespace N] [--ops-only-used]
        the model optimized and planned for RefBackend, written as one C++ header of constants
        (weights, tensors, steps, the arena's size) that kiln::StaticModel runs with no heap, on a
        microcontroller too (docs/firmware.md); the namespace defaults to NAME. --ops-only-used
        also declares Ops, the kiln::OpSet of the ops it uses, for a kiln::Runtime<Ops, ...> that
        compiles only their workloads (StaticModel always does)
)"},
};

constexpr std::string_view common_options = R"(
options for every command:
  --backend LIST   comma-separated preference list of ref, neon, cl (default: every available one,
                   cl first); layers a backend cannot run fall back to the next
  --threads N      NeonBackend threads (default: every hardware thread)
  --precision P    fp32 (default), or fp16: the layers compute in Float16 where a backend can
                   (inputs and outputs stay Float32; OptimizerOptions::reduce_float32_to_float16)
  --dim NAME=N     the value of the dimension NAME that an ONNX model's inputs leave open (batch,
                   sequence...); repeats, one per name (onnx::ImportOptions::dimensions)
  --shape INPUT=D0xD1x...
                   the whole shape of the ONNX model's input INPUT, for dynamic dimensions with no
                   name; repeats, one per input (onnx::ImportOptions::input_shapes)
)";

void print_usage(std::FILE* to) {
  std::fputs("usage: kiln COMMAND MODEL [ARGS] [OPTIONS]   (kiln COMMAND --help: that command alone)\n\ncommands:\n",
             to);
  for (const auto& command : commands) std::fwrite(command.text.data(), 1, command.text.size(), to);
  std::fwrite(common_options.data(), 1, common_options.size(), to);
}

/// The command line: positional arguments and --options (each takes a value; some repeat).
struct Arguments {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>, std::less<>> options;

  std::optional<std::string> get(std::string_view name) const {
    auto found = options.find(name);
    if (found == options.end()) return std::nullopt;
    return found->second.back();
  }
  std::vector<std::string> all(std::string_view name) const {
    auto found = options.find(name);
    return found == options.end() ? std::vector<std::string>{} : found->second;
  }
};

int fail(const std::string& message) {
  std::fprintf(stderr, "kiln: %s\n", message.c_str());
  return 1;
}
int fail(const Status& status) { return fail(status.message()); }

kiln::Expected<double> number(const Arguments& args, std::string_view name, double fallback) {
  const auto text = args.get(name);
  if (!text) return fallback;
  char* end = nullptr;
  const double value = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || *end != '\0' || !std::isfinite(value))
    return Status::error(kiln::ErrorCode::InvalidArgument, "--", name, " takes a number, got '", *text, "'");
  return value;
}

// "NAME=VALUE" split at its last '=' (input names may hold one; values do not).
kiln::Expected<std::pair<std::string, std::string>> assignment(std::string_view option, const std::string& text) {
  const auto equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0)
    return Status::error(kiln::ErrorCode::InvalidArgument, "--", option, " takes NAME=VALUE, got '", text, "'");
  return std::pair{text.substr(0, equals), text.substr(equals + 1)};
}

kiln::Expected<std::int64_t> positive_integer(std::string_view option, std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value <= 0)
    return Status::error(kiln::ErrorCode::InvalidArgument, "--", option, " takes positive whole numbers, got '", text,
                         "'");
  return value;
}

// --dim NAME=N and --shape INPUT=D0xD1x... (each repeats): the importer's values for the dimensions
// an ONNX model's inputs leave open.
kiln::Expected<kiln::onnx::ImportOptions> import_options(const Arguments& args) {
  kiln::onnx::ImportOptions options;
  for (const auto& text : args.all("dim")) {
    auto named = assignment("dim", text);
    if (!named) return named.status();
    auto value = positive_integer("dim", named->second);
    if (!value) return value.status();
    if (!options.dimensions.emplace(named->first, *value).second)
      return Status::error(kiln::ErrorCode::InvalidArgument, "--dim gives '", named->first, "' twice");
  }
  for (const auto& text : args.all("shape")) {
    auto named = assignment("shape", text);
    if (!named) return named.status();
    std::vector<std::int64_t> dims;
    std::string_view rest = named->second;
    while (!rest.empty()) {  // "" is a scalar's shape
      const auto x = rest.find('x');
      auto dim = positive_integer("shape", rest.substr(0, x));
      if (!dim) return dim.status();
      dims.push_back(*dim);
      rest = x == std::string_view::npos ? std::string_view{} : rest.substr(x + 1);
    }
    if (!options.input_shapes.emplace(named->first, std::move(dims)).second)
      return Status::error(kiln::ErrorCode::InvalidArgument, "--shape gives '", named->first, "' twice");
  }
  return options;
}

kiln::Expected<std::unique_ptr<Session>> open_session(const Arguments& args, const std::string& model,
                                                      bool profiling = false) {
  SessionOptions options;
  options.backends = args.get("backend").value_or("");
  auto threads = number(args, "threads", 0);
  if (!threads) return threads.status();
  if (*threads < 0 || *threads > 1024)
    return Status::error(kiln::ErrorCode::InvalidArgument, "--threads must be 0 to 1024");
  options.threads = static_cast<int>(*threads);
  options.profiling = profiling;
  const std::string precision = args.get("precision").value_or("fp32");
  if (precision != "fp32" && precision != "fp16")
    return Status::error(kiln::ErrorCode::InvalidArgument, "--precision takes fp32 or fp16, not '", precision, "'");
  options.float16 = precision == "fp16";
  auto import = import_options(args);
  if (!import) return import.status();
  options.import = std::move(*import);
  return Session::open(model, options);
}

void print_tensor(const HostTensor& t) {
  std::printf("  %s: %s", t.name.c_str(), t.info.to_string().c_str());
  if (t.info.type == kiln::DataType::Float32) {
    const std::span<const float> v(reinterpret_cast<const float*>(t.data.data()), t.info.num_elements());
    if (!v.empty()) {
      const auto best = std::ranges::max_element(v) - v.begin();
      std::printf("  argmax %td (%.6g); first", best, v[static_cast<std::size_t>(best)]);
    }
    for (std::size_t i = 0; i < std::min<std::size_t>(8, v.size()); ++i) std::printf(" %.6g", v[i]);
  } else if (t.info.type == kiln::DataType::Signed32) {
    const std::span<const std::int32_t> v(reinterpret_cast<const std::int32_t*>(t.data.data()), t.info.num_elements());
    std::printf("  first");
    for (std::size_t i = 0; i < std::min<std::size_t>(8, v.size()); ++i) std::printf(" %d", v[i]);
  } else if (kiln::is_quantized(t.info.type)) {
    const bool is_signed = t.info.type != kiln::DataType::QAsymmU8;
    std::printf("  first");
    for (std::size_t i = 0; i < std::min<std::size_t>(8, t.data.size()); ++i) {
      const auto byte = std::to_integer<std::uint8_t>(t.data[i]);
      std::printf(" %d", is_signed ? static_cast<int>(static_cast<std::int8_t>(byte)) : static_cast<int>(byte));
    }
  }
  std::printf("\n");
}

int run_command(const Arguments& args) {
  auto session = open_session(args, args.positional[0]);
  if (!session) return fail(session.status());
  std::vector<HostTensor> inputs;
  const auto input_files = args.all("input");
  if (input_files.empty()) {
    inputs = (*session)->random_inputs();
  } else {
    for (const auto& file : input_files) {
      auto tensor = kiln::onnx::read_tensor_file(file);
      if (!tensor) return fail(tensor.status());
      inputs.push_back(std::move(*tensor));
    }
  }
  auto outputs = (*session)->make_outputs();
  if (auto status = (*session)->run(inputs, outputs); !status) return fail(status);
  const auto output_files = args.all("output");
  if (!output_files.empty() && output_files.size() != outputs.size())
    return fail(kiln::detail::str_cat("the model has ", outputs.size(), " outputs; ", output_files.size(),
                                      " --output files were given"));
  std::printf("%s: %zu inputs%s, %zu outputs (load %.1f ms)\n", args.positional[0].c_str(), inputs.size(),
              input_files.empty() ? " (random)" : "", outputs.size(), (*session)->load_ms());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    print_tensor(outputs[i]);
    if (!output_files.empty())
      if (auto status = kiln::onnx::write_tensor_file(output_files[i], outputs[i]); !status) return fail(status);
  }
  return 0;
}

int check_command(const Arguments& args) {
  if (args.positional.size() < 2) return fail("check needs MODEL and TEST_DIR");
  auto rtol = number(args, "rtol", 1e-3);
  auto atol = number(args, "atol", 1e-4);
  if (!rtol || !atol) return fail(!rtol ? rtol.status() : atol.status());
  std::error_code error;
  std::vector<std::filesystem::path> sets;
  for (const auto& entry : std::filesystem::directory_iterator(args.positional[1], error))
    if (entry.is_directory() && entry.path().filename().string().starts_with("test_data_set_"))
      sets.push_back(entry.path());
  if (error) return fail(kiln::detail::str_cat("cannot read '", args.positional[1], "': ", error.message()));
  if (sets.empty()) return fail(kiln::detail::str_cat("'", args.positional[1], "' has no test_data_set_* folders"));
  std::ranges::sort(sets);
  auto session = open_session(args, args.positional[0]);
  if (!session) return fail(session.status());
  bool all_pass = true;
  for (const auto& set : sets) {
    auto data = kiln::onnx::read_test_data_set(set.string());
    if (!data) return fail(data.status());
    auto outputs = (*session)->make_outputs();
    if (auto status = (*session)->run(data->inputs, outputs); !status)
      return fail(status.with_context(set.filename().string()));
    if (data->outputs.size() != outputs.size())
      return fail(
          kiln::detail::str_cat(set.string(), " has ", data->outputs.size(), " outputs; the model ", outputs.size()));
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const auto& expected = data->outputs[i];
      const auto c = kiln::onnx::compare(outputs[i], expected, *rtol, *atol);
      all_pass = all_pass && c.passed();
      if (!c.same_info)
        std::printf("%s output %zu '%s': FAIL %s, expected %s\n", set.filename().c_str(), i, outputs[i].name.c_str(),
                    outputs[i].info.to_string().c_str(), expected.info.to_string().c_str());
      else
        std::printf("%s output %zu '%s': %s  max abs error %.3g, max rel error %.3g, %llu of %llu outside tolerance\n",
                    set.filename().c_str(), i, outputs[i].name.c_str(), c.passed() ? "pass" : "FAIL", c.max_abs_error,
                    c.max_rel_error, static_cast<unsigned long long>(c.mismatches),
                    static_cast<unsigned long long>(outputs[i].info.num_elements()));
    }
  }
  return all_pass ? 0 : 1;
}

struct Latency {
  double min, median, p90;
};
Latency summarize(std::vector<double> times) {
  std::ranges::sort(times);
  auto at = [&](double q) {
    return times[std::min(times.size() - 1, static_cast<std::size_t>(q * static_cast<double>(times.size())))];
  };
  return {times.front(), at(0.5), at(0.9)};
}

void progress(int done, int total) {
  constexpr int width = 40;
  const int filled = total == 0 ? width : done * width / total;
  std::fprintf(stderr, "\r[%.*s%*s] %d/%d", filled, "########################################", width - filled, "",
               done, total);
  if (done == total) std::fprintf(stderr, "\r%*s\r", width + 24, "");
  std::fflush(stderr);
}

int bench_command(const Arguments& args) {
  auto iterations = number(args, "iterations", 50);
  auto warmup = number(args, "warmup", 5);
  if (!iterations || !warmup) return fail(!iterations ? iterations.status() : warmup.status());
  if (*iterations < 1 || *warmup < 0) return fail("--iterations must be 1 or more and --warmup 0 or more");
  auto session = open_session(args, args.positional[0]);
  if (!session) return fail(session.status());
  const auto inputs = (*session)->random_inputs();
  auto outputs = (*session)->make_outputs();
  const bool terminal = isatty(STDERR_FILENO) != 0;
  for (int i = 0; i < static_cast<int>(*warmup); ++i)
    if (auto status = (*session)->run(inputs, outputs); !status) return fail(status);
  std::vector<double> times;
  const int n = static_cast<int>(*iterations);
  for (int i = 0; i < n; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (auto status = (*session)->run(inputs, outputs); !status) return fail(status);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (terminal) progress(i + 1, n);
  }
  const Latency l = summarize(times);
  std::printf("%s on %s: load %.1f ms; latency over %d runs (%d warm-up): min %.4f ms, median %.4f ms, p90 %.4f ms\n",
              args.positional[0].c_str(), args.get("backend").value_or("every available backend").c_str(),
              (*session)->load_ms(), n, static_cast<int>(*warmup), l.min, l.median, l.p90);
  return 0;
}

int inspect_command(const Arguments& args) {
  const auto profile_file = args.get("profile");
  auto session = open_session(args, args.positional[0], profile_file.has_value());
  if (!session) return fail(session.status());
  const auto& model = (*session)->model();
  std::printf("model %s: %s %lld, producer '%s', %zu nodes (%zu folded into constants at import, %zu unused)\n",
              args.positional[0].c_str(), std::string(model.opset_name).c_str(), static_cast<long long>(model.opset),
              model.producer.c_str(), model.num_nodes, model.num_folded, model.num_unused);
  for (const auto& in : model.inputs)
    std::printf("  input %u '%s': %s\n", in.binding, in.name.c_str(), in.info.to_string().c_str());
  for (const auto& out : model.outputs)
    std::printf("  output %u '%s': %s\n", out.binding, out.name.c_str(), out.info.to_string().c_str());
  std::printf("\noptimized network (layer -> backend, output shapes):\n%s\n", (*session)->network_text().c_str());
  const auto memory = *(*session)->runtime().memory_summary((*session)->id());
  std::printf(
      "memory plan (%.*s): %zu tensors, arena %llu B, lower bound %llu B, one block per tensor %llu B; "
      "constants %llu B, and %llu B more held only packed into the workloads\n",
      static_cast<int>(memory.strategy.size()), memory.strategy.data(), memory.tensors,
      static_cast<unsigned long long>(memory.arena_bytes), static_cast<unsigned long long>(memory.lower_bound_bytes),
      static_cast<unsigned long long>(memory.unplanned_bytes), static_cast<unsigned long long>(memory.constant_bytes),
      static_cast<unsigned long long>(memory.constant_bytes_in_workloads));
  if (memory.device_tensors > 0)
    std::printf("device memory: %zu tensors, arena %llu B, lower bound %llu B\n", memory.device_tensors,
                static_cast<unsigned long long>(memory.device_arena_bytes),
                static_cast<unsigned long long>(memory.device_lower_bound_bytes));
  if (profile_file) {
    const auto iterations = number(args, "iterations", 1);
    if (!iterations) return fail(iterations.status());
    if (*iterations < 1) return fail("--iterations must be 1 or more");
    const auto inputs = (*session)->random_inputs();
    auto outputs = (*session)->make_outputs();
    const auto runs = static_cast<long long>(*iterations);
    for (long long i = 0; i < runs; ++i)
      if (auto status = (*session)->run(inputs, outputs); !status) return fail(status);
    const auto profile = (*session)->runtime().profile((*session)->id());
    if (!profile) return fail(profile.status());
    std::ofstream file(*profile_file);
    if (!(file << profile->to_chrome_trace())) return fail(kiln::detail::str_cat("cannot write '", *profile_file, "'"));
    std::printf("\nprofile of %lld inferences written to %s\n%s", runs, profile_file->c_str(),
                profile->to_table().c_str());
  }
  return 0;
}

// One example of a batch [N, ...] as a tensor of `info` (whose leading dimension is 1).
HostTensor example(const HostTensor& batch, std::size_t i, const kiln::TensorInfo& info) {
  const std::size_t bytes = info.num_bytes();
  HostTensor t{batch.name, info, {}};
  t.data.assign(batch.data.begin() + static_cast<std::ptrdiff_t>(i * bytes),
                batch.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * bytes));
  return t;
}

std::size_t argmax(std::span<const float> values) {
  return static_cast<std::size_t>(std::ranges::max_element(values) - values.begin());
}
// Row i of a Float32 tensor of rows of `width`, and entry i of a Signed32 vector.
std::span<const float> row(const HostTensor& t, std::size_t i, std::size_t width) {
  return {reinterpret_cast<const float*>(t.data.data()) + i * width, width};
}
std::size_t label(const HostTensor& t, std::size_t i) {
  return static_cast<std::size_t>(reinterpret_cast<const std::int32_t*>(t.data.data())[i]);
}

/// The backends of --backend, or every available one.
std::vector<std::string> backend_names(const Arguments& args) {
  std::vector<std::string> backends;
  if (auto list = args.get("backend")) {
    for (std::string_view rest = *list; !rest.empty();) {
      const auto comma = rest.find(',');
      backends.emplace_back(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  } else {
    for (const auto& b : kiln::tool::compiled_backends())
      if (kiln::tool::backend_available(b.id)) backends.emplace_back(b.name);
  }
  return backends;
}

/// What eval measured of one model on one backend.
struct Evaluation {
  std::size_t examples = 0, correct = 0, agree = 0;
  double max_diff = 0.0;
  Latency latency{};
  double load_ms = 0.0;
};

kiln::Expected<Evaluation> evaluate(const Arguments& args, const std::string& model_path, const std::string& backend,
                                    const HostTensor& images, const std::optional<HostTensor>& labels,
                                    const std::optional<HostTensor>& reference) {
  Arguments one = args;
  one.options["backend"] = {backend};
  auto session = open_session(one, model_path);
  if (!session) return session.status();
  const auto& model = (*session)->model();
  if (model.inputs.size() != 1 || model.outputs.size() != 1)
    return Status::error(kiln::ErrorCode::Unsupported, "eval takes a model with one input and one output");
  const kiln::TensorInfo in_info = model.inputs[0].info;
  const kiln::TensorInfo out_info = model.outputs[0].info;
  if (in_info.rank() == 0 || in_info.shape[0] != 1 || images.info.rank() != in_info.rank() ||
      images.info.type != in_info.type || images.info.num_bytes() % in_info.num_bytes() != 0)
    return Status::error(kiln::ErrorCode::InvalidArgument, "the examples ", images.info.to_string(),
                         " are not a batch of the model's input ", in_info.to_string());
  if (out_info.type != kiln::DataType::Float32)
    return Status::error(kiln::ErrorCode::Unsupported, "eval needs a Float32 output");
  Evaluation e;
  e.examples = images.info.num_bytes() / in_info.num_bytes();
  const std::size_t classes = out_info.num_elements();
  if (labels && labels->info.num_elements() != e.examples)
    return Status::error(kiln::ErrorCode::InvalidArgument, "--labels has a different number of examples");
  if (reference && reference->info.num_elements() != e.examples * classes)
    return Status::error(kiln::ErrorCode::InvalidArgument, "--reference does not hold one output per example");
  std::vector<double> times;
  auto outputs = (*session)->make_outputs();
  for (std::size_t i = 0; i < e.examples; ++i) {
    const HostTensor input = example(images, i, in_info);
    const auto start = std::chrono::steady_clock::now();
    if (auto status = (*session)->run(std::span(&input, 1), outputs); !status) return status;
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    const std::span<const float> logits = row(outputs[0], 0, classes);
    const std::size_t predicted = argmax(logits);
    if (labels) e.correct += label(*labels, i) == predicted;
    if (reference) {
      const std::span<const float> expected = row(*reference, i, classes);
      e.agree += argmax(expected) == predicted;
      for (std::size_t k = 0; k < classes; ++k)
        e.max_diff = std::max(e.max_diff, std::abs(double{logits[k]} - expected[k]));
    }
  }
  e.latency = summarize(times);
  e.load_ms = (*session)->load_ms();
  return e;
}

int eval_command(const Arguments& args) {
  if (args.positional.size() < 2) return fail("eval needs MODEL and IMAGES.npy");
  const std::vector<std::string> models(args.positional.begin(), args.positional.end() - 1);
  const std::string& images_path = args.positional.back();
  auto images = kiln::onnx::read_tensor_file(images_path);
  if (!images) return fail(images.status());
  std::optional<HostTensor> labels, reference;
  if (auto file = args.get("labels")) {
    auto read = kiln::onnx::read_tensor_file(*file);
    if (!read) return fail(read.status());
    labels = std::move(*read);
  }
  if (auto file = args.get("reference")) {
    auto read = kiln::onnx::read_tensor_file(*file);
    if (!read) return fail(read.status());
    reference = std::move(*read);
  }
  auto min_agreement = number(args, "min-agreement", 100.0);
  if (!min_agreement) return fail(min_agreement.status());
  const std::uint32_t examples = images->info.rank() ? images->info.shape[0] : 0;
  std::printf("%u examples from %s\n", examples, images_path.c_str());
  if (labels && reference && examples > 0 && labels->info.num_elements() == examples &&
      reference->info.num_elements() % examples == 0) {
    // The reference's own accuracy, which kiln's should equal.
    const std::size_t classes = reference->info.num_elements() / examples;
    std::size_t correct = 0;
    for (std::size_t i = 0; i < examples; ++i) correct += label(*labels, i) == argmax(row(*reference, i, classes));
    std::printf("reference outputs (%s): accuracy %.2f%%\n", args.get("reference")->c_str(),
                100.0 * static_cast<double>(correct) / examples);
  }
  std::size_t model_width = 5;
  for (const auto& m : models) model_width = std::max(model_width, m.size());
  const int width = static_cast<int>(model_width);
  std::printf("%-*s %-8s %10s %12s %14s %12s %12s %10s\n", width, "model", "backend", "accuracy", "agreement",
              "max |diff|", "median ms", "p90 ms", "load ms");
  int status_code = 0;
  for (const auto& model : models)
    for (const auto& backend : backend_names(args)) {
      auto e = evaluate(args, model, backend, *images, labels, reference);
      if (!e) return fail(e.status().with_context(model));
      auto percent = [&](std::size_t n) {
        return 100.0 * static_cast<double>(n) / static_cast<double>(std::max<std::size_t>(1, e->examples));
      };
      auto shown = [&](bool present, std::size_t n) {
        char text[16] = "-";
        if (present) std::snprintf(text, sizeof text, "%.2f%%", percent(n));
        return std::string(text);
      };
      std::printf("%-*s %-8s %10s %12s %14.3g %12.4f %12.4f %10.1f\n", width, model.c_str(), backend.c_str(),
                  shown(labels.has_value(), e->correct).c_str(), shown(reference.has_value(), e->agree).c_str(),
                  reference ? e->max_diff : 0.0, e->latency.median, e->latency.p90, e->load_ms);
      if (reference && percent(e->agree) < *min_agreement) status_code = 1;
    }
  return status_code;
}

kiln::Expected<kiln::onnx::QuantizeOptions> quantize_options(const Arguments& args) {
  kiln::onnx::QuantizeOptions options;
  const std::string activations = args.get("activations").value_or("u8");
  if (activations != "u8" && activations != "s8")
    return Status::error(kiln::ErrorCode::InvalidArgument, "--activations takes u8 or s8, not '", activations, "'");
  options.activations = activations == "u8" ? kiln::DataType::QAsymmU8 : kiln::DataType::QAsymmS8;
  const std::string weights = args.get("weights").value_or("per-channel");
  if (weights != "per-channel" && weights != "per-tensor")
    return Status::error(kiln::ErrorCode::InvalidArgument, "--weights takes per-channel or per-tensor, not '", weights,
                         "'");
  options.per_channel = weights == "per-channel";
  const std::string method = args.get("calibration").value_or("minmax");
  if (method != "minmax" && method != "percentile")
    return Status::error(kiln::ErrorCode::InvalidArgument, "--calibration takes minmax or percentile, not '", method,
                         "'");
  options.method =
      method == "minmax" ? kiln::onnx::CalibrationMethod::MinMax : kiln::onnx::CalibrationMethod::Percentile;
  auto percentile = number(args, "percentile", options.percentile);
  if (!percentile) return percentile.status();
  if (*percentile <= 50.0 || *percentile > 100.0)
    return Status::error(kiln::ErrorCode::InvalidArgument, "--percentile must be above 50 and at most 100");
  options.percentile = *percentile;
  auto import = import_options(args);
  if (!import) return import.status();
  options.import = std::move(*import);
  return options;
}

int quantize_command(const Arguments& args) {
  if (args.positional.size() != 2) return fail("quantize needs MODEL and CALIBRATION.npy");
  const auto output = args.get("output");
  if (!output) return fail("quantize needs -o OUTPUT.onnx");
  auto options = quantize_options(args);
  if (!options) return fail(options.status());
  std::ifstream file(args.positional[0], std::ios::binary);
  if (!file.is_open()) return fail(kiln::detail::str_cat("cannot open model file '", args.positional[0], "'"));
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const auto bytes = std::as_bytes(std::span(text));
  auto examples = kiln::onnx::read_tensor_file(args.positional[1]);
  if (!examples) return fail(examples.status());

  SessionOptions session;
  session.backends = args.get("backend").value_or("ref");
  auto ids = kiln::tool::parse_backends(session.backends);
  if (!ids) return fail(ids.status());
  kiln::OptimizerOptions optimizer;
  optimizer.backend_preferences = *ids;
  kiln::tool::ToolRuntime runtime;
  const auto start = std::chrono::steady_clock::now();
  auto quantized = kiln::onnx::quantize(bytes, *examples, *options, runtime, optimizer);
  if (!quantized) return fail(quantized.status().with_context(args.positional[0]));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ofstream out(*output, std::ios::binary);
  if (!out.write(reinterpret_cast<const char*>(quantized->bytes.data()),
                 static_cast<std::streamsize>(quantized->bytes.size())))
    return fail(kiln::detail::str_cat("cannot write '", *output, "'"));
  const auto& s = quantized->summary;
  std::string float_ops;
  for (const auto& op : s.float_ops) float_ops += kiln::detail::str_cat(float_ops.empty() ? "" : ", ", op);
  std::printf(
      "%s: calibrated on %zu examples in %.2f s; %zu nodes quantised (%zu Relu/Clip folded into their ranges), "
      "%zu activations and %zu weight tensors quantised; Float32 ops left: %s\nwrote %s (%zu bytes)\n",
      args.positional[0].c_str(), quantized->examples, seconds, s.quantized_nodes, s.removed_activations,
      s.quantized_tensors, s.quantized_weights, float_ops.empty() ? "none" : float_ops.c_str(), output->c_str(),
      quantized->bytes.size());
  return 0;
}

}  // namespace

int compile_command(const Arguments& args) {
  const auto output = args.get("output");
  if (!output) return fail("compile needs -o NAME.hpp");
  kiln::tool::CompileOptions options;
  options.model_path = args.positional[0];
  options.name_space = args.get("namespace").value_or(std::filesystem::path(*output).stem().string());
  // What the header says wrote it: the same for any -o, so that the header is reproducible anywhere.
  options.ops_only_used = args.get("ops-only-used").has_value();
  auto import = import_options(args);
  if (!import) return fail(import.status());
  options.import = std::move(*import);
  options.command = kiln::detail::str_cat("kiln compile ", options.model_path, " --namespace ", options.name_space,
                                          options.ops_only_used ? " --ops-only-used" : "");
  auto header = kiln::tool::compile_header(options);
  if (!header) return fail(header.status());
  std::ofstream file(*output, std::ios::binary);
  if (!(file << header->text) || !file.flush()) return fail(kiln::detail::str_cat("cannot write '", *output, "'"));
  std::printf("%s: %s\n", output->c_str(), header->summary.c_str());
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string_view command = argv[1];
  const auto help = std::ranges::find(commands, command, &CommandHelp::name);
  if (help == std::end(commands)) {
    std::string names;
    for (const auto& c : commands) names += kiln::detail::str_cat(names.empty() ? "" : ", ", c.name);
    return fail(kiln::detail::str_cat("unknown command '", command, "' (", names, "; kiln --help)"));
  }
  for (int i = 2; i < argc; ++i)
    if (argv[i] == std::string_view("--help") || argv[i] == std::string_view("-h")) {
      const std::string_view synopsis = help->text.substr(2);  // "run MODEL ...", past its indent
      std::printf("usage: kiln ");
      std::fwrite(synopsis.data(), 1, synopsis.size(), stdout);
      std::fwrite(common_options.data(), 1, common_options.size(), stdout);
      return 0;
    }
  Arguments args;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i] == std::string_view("-o") ? "--output" : argv[i];
    if (arg == "--ops-only-used") {  // the one option without a value
      args.options[std::string(arg.substr(2))].emplace_back();
    } else if (arg.starts_with("--")) {
      if (i + 1 >= argc) return fail(kiln::detail::str_cat("option ", arg, " needs a value"));
      args.options[std::string(arg.substr(2))].emplace_back(argv[++i]);
    } else {
      args.positional.emplace_back(arg);
    }
  }
  constexpr std::string_view known_options[] = {
      "backend",     "threads",    "input",     "output",    "rtol",          "atol",        "iterations",
      "warmup",      "profile",    "labels",    "reference", "min-agreement", "activations", "weights",
      "calibration", "percentile", "precision", "namespace", "ops-only-used", "dim",         "shape"};
  for (const auto& [name, values] : args.options)
    if (std::ranges::find(known_options, name) == std::end(known_options))
      return fail(kiln::detail::str_cat("unknown option --", name, " (kiln --help lists them)"));
  if (args.positional.empty()) return fail(kiln::detail::str_cat("no MODEL given (kiln ", command, " --help)"));
  if (command == "run") return run_command(args);
  if (command == "check") return check_command(args);
  if (command == "bench") return bench_command(args);
  if (command == "inspect") return inspect_command(args);
  if (command == "eval") return eval_command(args);
  if (command == "quantize") return quantize_command(args);
  return compile_command(args);
}
