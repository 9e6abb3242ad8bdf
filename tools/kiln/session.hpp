// SPDX-License-Identifier: Apache-2.0
// What every `kiln` command does first: import a model, optimize it for the backends asked for, load
// it into a runtime holding every compiled-in backend, and run it on host tensors.
#pragma once

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <kiln/import/onnx.hpp>
#include <kiln/kiln.hpp>

#include "model_file.hpp"

namespace kiln::tool {

/// Every backend this build of kiln has, for every op.
using ToolRuntime = DefaultRuntime;

/// The names `--backend` takes, with kiln's backend ids, in the runtime's default preference order.
struct BackendName {
  std::string_view name;
  std::string_view id;
};
inline std::vector<BackendName> compiled_backends() {
  constexpr BackendName short_names[] = {{"cl", "GpuAcc"}, {"neon", "CpuAcc"}, {"ref", "CpuRef"}};
  std::vector<BackendName> names;
  [&]<class... Bs>(TypeList<Bs...>) {
    auto add = [&](std::string_view id) {
      for (const BackendName& known : short_names)
        if (known.id == id) names.push_back(known);
    };
    (add(Bs::id), ...);
  }(enabled_backends{});
  return names;
}

/// Whether the backend with this id can run here. Asked only of the backends a command uses:
/// ClBackend's answer costs an OpenCL platform discovery (tens of milliseconds, and the driver's
/// memory) that `--backend neon` should not pay.
inline bool backend_available(std::string_view id) {
  return []<class... Bs>(TypeList<Bs...>, std::string_view wanted) {
    return ((Bs::id == wanted && Bs::available()) || ...);
  }(enabled_backends{}, id);
}

/// "neon,ref" as backend ids, or an error naming what is wrong.
inline Expected<std::vector<std::string_view>> parse_backends(std::string_view list) {
  std::vector<std::string_view> ids;
  const auto known = compiled_backends();
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    const auto found = std::ranges::find(known, name, &BackendName::name);
    if (found == known.end()) {
      std::string names;
      for (const auto& b : known) names += kiln::detail::str_cat(names.empty() ? "" : ", ", b.name);
      return Status::error(ErrorCode::NotFound, "backend '", name, "' is not compiled into this kiln (it has ", names,
                           ")");
    }
    if (!backend_available(found->id))
      return Status::error(ErrorCode::Unsupported, "backend '", name, "' is not available on this machine",
                           name == "cl" ? " (no OpenCL device)" : "");
    ids.push_back(found->id);
  }
  if (ids.empty()) return Status::error(ErrorCode::InvalidArgument, "--backend lists no backend");
  return ids;
}

struct SessionOptions {
  std::string backends;  ///< "" means every available backend, in the default order
  int threads = 0;       ///< NeonBackend threads; 0 means every hardware thread
  bool profiling = false;
  bool float16 = false;        ///< compute in Float16 (OptimizerOptions::reduce_float32_to_float16)
  onnx::ImportOptions import;  ///< values of the dimensions the model's inputs leave open (--shape, --dim)
};

/// A model loaded into a runtime.
class Session {
 public:
  static Expected<std::unique_ptr<Session>> open(const std::string& model_path, const SessionOptions& options) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    auto imported = import_model_file(model_path, options.import);
    if (!imported) return imported.status();
    auto session = std::unique_ptr<Session>(new Session(options));
    session->model_ = std::move(*imported);
    OptimizerOptions optimizer;
    std::vector<std::string_view> ids;
    if (!options.backends.empty()) {
      auto parsed = parse_backends(options.backends);
      if (!parsed) return parsed.status();
      ids = *parsed;
    } else {
      for (const auto& b : compiled_backends())
        if (backend_available(b.id)) ids.push_back(b.id);
    }
    optimizer.backend_preferences = ids;
    optimizer.reduce_float32_to_float16 = options.float16;
    // The session keeps the model's inputs and outputs; its network (and weights) go to the optimizer.
    auto optimized = ToolRuntime::optimize(std::move(session->model_.network), optimizer);
    if (!optimized) return optimized.status();
    session->network_text_ = optimized->to_string();
    LoadOptions load;
    load.profiling = options.profiling;
    auto id = session->runtime_.load(std::move(*optimized), load);  // its weights are let go as they are packed
    if (!id) return id.status();
    session->id_ = *id;
    session->load_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return session;
  }

  const onnx::ImportedModel& model() const { return model_; }
  ToolRuntime& runtime() { return runtime_; }
  NetworkId id() const { return id_; }
  double load_ms() const { return load_ms_; }
  const std::string& network_text() const { return network_text_; }

  /// Output tensors with the right infos and zeroed data.
  std::vector<onnx::HostTensor> make_outputs() const {
    std::vector<onnx::HostTensor> outputs;
    for (const auto& out : model_.outputs)
      outputs.push_back({out.name, out.info, std::vector<std::byte>(out.info.num_bytes())});
    return outputs;
  }

  /// Runs one inference; inputs in the model's input order, each checked against its info.
  Status run(std::span<const onnx::HostTensor> inputs, std::vector<onnx::HostTensor>& outputs) {
    if (inputs.size() != model_.inputs.size())
      return Status::error(ErrorCode::InvalidArgument, "the model has ", model_.inputs.size(), " inputs; ",
                           inputs.size(), " were given");
    std::vector<InputBinding> in;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const auto& expected = model_.inputs[i];
      if (inputs[i].info.shape != expected.info.shape || inputs[i].info.type != expected.info.type)
        return Status::error(ErrorCode::InvalidArgument, "input ", i, " '", expected.name, "' must be ",
                             expected.info.to_string(), ", got ", inputs[i].info.to_string());
      if (expected.used) in.push_back({expected.binding, {expected.info, inputs[i].data.data()}});
    }
    std::vector<OutputBinding> out;
    for (std::size_t i = 0; i < outputs.size(); ++i)
      out.push_back({model_.outputs[i].binding, {outputs[i].info, outputs[i].data.data()}});
    return runtime_.enqueue(id_, in, out);
  }

  /// Deterministic random inputs: uniform in [-1, 1) for floats, uniform bytes for 8-bit integers,
  /// 0 for wider integers, alternating bools.
  std::vector<onnx::HostTensor> random_inputs(unsigned seed = 42) const {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<onnx::HostTensor> inputs;
    for (const auto& in : model_.inputs) {
      onnx::HostTensor t{in.name, in.info, std::vector<std::byte>(in.info.num_bytes())};
      if (in.info.type == DataType::Float32)
        for (float& v : std::span(reinterpret_cast<float*>(t.data.data()), in.info.num_elements()))
          v = uniform(generator);
      else if (in.info.type == DataType::Boolean)
        for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = std::byte(i % 2);
      else if (is_quantized(in.info.type))
        for (std::byte& b : t.data) b = static_cast<std::byte>(generator() & 0xff);
      inputs.push_back(std::move(t));
    }
    return inputs;
  }

 private:
  explicit Session(const SessionOptions& options) : runtime_(RuntimeOptions{}, backend_options(options)) {}

  /// --threads goes to every backend that takes a thread count.
  static ToolRuntime::Options backend_options(const SessionOptions& options) {
    ToolRuntime::Options o;
    [&]<class... Bs>(TypeList<Bs...>) {
      auto set_threads = [&](auto& backend) {
        if constexpr (requires { backend.threads; })
          if (options.threads > 0) backend.threads = static_cast<unsigned>(options.threads);
      };
      (set_threads(o.template get<Bs>()), ...);
    }(enabled_backends{});
    return o;
  }

  ToolRuntime runtime_;
  onnx::ImportedModel model_;
  NetworkId id_{};
  double load_ms_ = 0.0;
  std::string network_text_;
};

}  // namespace kiln::tool
