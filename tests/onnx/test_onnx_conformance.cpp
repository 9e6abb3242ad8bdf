// SPDX-License-Identifier: Apache-2.0
// ONNX conformance: the ONNX project's own test cases (Debian's libonnx-testdata: node tests and the
// PyTorch-converted and PyTorch-operator tests) through kiln's importer, on every backend.
//
// A case counts when every op of its model is one the importer claims. It passes when it imports
// and every test_data_set output matches on every available backend (rtol 1e-3, atol 1e-4); it is
// skipped, with the importer's reason, when the importer refuses it (an attribute value or data
// type kiln does not run); it fails otherwise. The test fails on any failure, and on any case of
// the recorded passing list (tests/onnx/conformance_passing.txt) that no longer passes, so the
// list can only grow. `--write-passing FILE` rewrites the list.
//
// usage: test_onnx_conformance DATA_DIR PASSING_LIST [--write-passing FILE] [--filter SUBSTRING]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <onnx/onnx_pb.h>

#include "session.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::tool::ToolRuntime;

enum class Outcome { Passed, Failed, Skipped, NotClaimed };

struct CaseResult {
  std::string name;  ///< "node/test_conv_with_strides_padding"
  Outcome outcome = Outcome::Passed;
  std::string reason;
};

constexpr double relative_tolerance = 1e-3, absolute_tolerance = 1e-4;

struct ModelSummary {
  std::set<std::string> ops;
  std::vector<std::string> inputs;  ///< graph inputs that are not initializers, in order
};

// The op types and inputs of a model, or nothing when it does not parse.
std::optional<ModelSummary> summary_of(const fs::path& model) {
  std::ifstream file(model, std::ios::binary);
  ::onnx::ModelProto proto;
  if (!proto.ParseFromIstream(&file)) return std::nullopt;
  ModelSummary summary;
  for (const auto& node : proto.graph().node())
    summary.ops.insert(node.domain().empty() || node.domain() == "ai.onnx" ? node.op_type()
                                                                           : node.domain() + "." + node.op_type());
  std::set<std::string> initializers;
  for (const auto& initializer : proto.graph().initializer()) initializers.insert(initializer.name());
  for (const auto& input : proto.graph().input())
    if (!initializers.contains(input.name())) summary.inputs.push_back(input.name());
  return summary;
}

bool all_float(const kiln::onnx::ImportedModel& model) {
  auto is_float = [](const kiln::onnx::ModelTensor& t) { return t.info.type == kiln::DataType::Float32; };
  return std::ranges::all_of(model.inputs, is_float) && std::ranges::all_of(model.outputs, is_float);
}

std::vector<fs::path> data_sets(const fs::path& dir) {
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && entry.path().filename().string().starts_with("test_data_set_"))
      sets.push_back(entry.path());
  std::ranges::sort(sets);
  return sets;
}

// Runs one test data set on the backends `preferences`; an empty string when every output matches.
// `data.inputs` holds the model's inputs in order (those made constant at import left out).
std::string run_set(ToolRuntime& runtime, const kiln::onnx::ImportedModel& model, const kiln::onnx::TestDataSet& data,
                    std::vector<std::string_view> preferences) {
  if (data.inputs.size() != model.inputs.size() || data.outputs.size() != model.outputs.size())
    return "test data and model disagree on the number of inputs or outputs";
  kiln::OptimizerOptions options;
  options.backend_preferences = preferences;
  auto optimized = ToolRuntime::optimize(model.network, options);
  if (!optimized) return "optimize: " + optimized.status().message();
  auto id = runtime.load(*optimized);
  if (!id) return "load: " + id.status().message();
  std::string problem;
  std::vector<kiln::InputBinding> inputs;
  for (std::size_t i = 0; i < data.inputs.size() && problem.empty(); ++i) {
    if (data.inputs[i].info != model.inputs[i].info)
      problem = kiln::detail::str_cat("input ", i, " is ", data.inputs[i].info.to_string(), ", the model takes ",
                                      model.inputs[i].info.to_string());
    else if (model.inputs[i].used)
      inputs.push_back({model.inputs[i].binding, {model.inputs[i].info, data.inputs[i].data.data()}});
  }
  std::vector<kiln::onnx::HostTensor> actual;
  std::vector<kiln::OutputBinding> outputs;
  for (const auto& out : model.outputs)
    actual.push_back({out.name, out.info, std::vector<std::byte>(out.info.num_bytes())});
  for (std::size_t i = 0; i < actual.size(); ++i)
    outputs.push_back({model.outputs[i].binding, {actual[i].info, actual[i].data.data()}});
  if (problem.empty())
    if (auto status = runtime.enqueue(*id, inputs, outputs); !status) problem = "run: " + status.message();
  for (std::size_t i = 0; i < actual.size() && problem.empty(); ++i) {
    const auto c = kiln::onnx::compare(actual[i], data.outputs[i], relative_tolerance, absolute_tolerance);
    if (!c.same_info)
      problem = kiln::detail::str_cat("output ", i, " is ", actual[i].info.to_string(), ", expected ",
                                      data.outputs[i].info.to_string());
    else if (!c.passed())
      problem = kiln::detail::str_cat("output ", i, ": ", c.mismatches, " elements outside tolerance, max abs error ",
                                      c.max_abs_error);
  }
  (void)runtime.unload(*id);
  return problem;
}

// Inputs that set shapes, axes, bounds or quantisation rather than carry data: 32-bit integer and
// bool tensors, and short vectors (Resize's scales, Clip's bounds, scales and zero points). Test
// models take them as inputs; kiln needs them at import.
bool sets_shapes(const kiln::onnx::HostTensor& t) {
  const bool short_vector = t.info.rank() <= 1 && t.info.num_elements() <= 8;
  return short_vector || (t.info.type != kiln::DataType::Float32 && !kiln::is_quantized(t.info.type));
}

// Imports the case's model and runs its data sets on every backend; the problem, or "" when all pass.
// A model the importer refuses because an input must be constant (or is an empty list of axes) is
// imported again per data set with its shape-setting inputs made constant.
CaseResult run_case(ToolRuntime& runtime, const fs::path& dir, const ModelSummary& summary, CaseResult result,
                    const std::vector<std::pair<std::string_view, std::vector<std::string_view>>>& backends) {
  const auto path = (dir / "model.onnx").string();
  auto model = kiln::onnx::import_file(path);
  const std::string refusal = model.status().message();
  const bool freeze = !model && model.status().code() == kiln::ErrorCode::Unsupported &&
                      (refusal.find("must be a constant") != std::string::npos ||
                       refusal.find("has an empty dimension") != std::string::npos);
  if (!model && !freeze) {
    result.outcome = model.status().code() == kiln::ErrorCode::Unsupported ? Outcome::Skipped : Outcome::Failed;
    result.reason = "import: " + model.status().message();
    return result;
  }
  for (const auto& set : data_sets(dir)) {
    auto data = kiln::onnx::read_test_data_set(set.string());
    if (!data) {
      result.outcome = Outcome::Failed;
      result.reason = "test data: " + data.status().message();
      return result;
    }
    if (freeze) {
      kiln::onnx::ImportOptions options;
      std::vector<kiln::onnx::HostTensor> kept;
      for (std::size_t i = 0; i < data->inputs.size() && i < summary.inputs.size(); ++i) {
        data->inputs[i].name = summary.inputs[i];
        (sets_shapes(data->inputs[i]) ? options.constant_inputs : kept).push_back(std::move(data->inputs[i]));
      }
      data->inputs = std::move(kept);
      model = kiln::onnx::import_file(path, options);
      if (!model) {
        result.outcome = model.status().code() == kiln::ErrorCode::Unsupported ? Outcome::Skipped : Outcome::Failed;
        result.reason = "import (shape inputs made constant): " + model.status().message();
        return result;
      }
    }
    for (const auto& [name, preferences] : backends) {
      const std::string problem = run_set(runtime, *model, *data, preferences);
      if (problem.empty()) continue;
      // Every Float32 case of a claimed op must pass; other data types may be refused.
      const bool float_case = all_float(*model);
      result.outcome = float_case ? Outcome::Failed : Outcome::Skipped;
      result.reason = kiln::detail::str_cat(float_case ? "" : "data type (not Float32): ", name, ", ",
                                            set.filename().string(), ": ", problem);
      return result;
    }
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s DATA_DIR PASSING_LIST [--write-passing FILE] [--filter SUBSTRING]\n", argv[0]);
    return 2;
  }
  const fs::path data_dir = argv[1];
  std::string write_passing, filter;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::string_view(argv[i]) == "--write-passing") write_passing = argv[i + 1];
    if (std::string_view(argv[i]) == "--filter") filter = argv[i + 1];
  }
  std::set<std::string> recorded;
  {
    std::ifstream list(argv[2]);
    for (std::string line; std::getline(list, line);)
      if (!line.empty() && line[0] != '#') recorded.insert(line);
  }
  if (!fs::is_directory(data_dir)) {
    std::fprintf(stderr, "no ONNX test data at %s (Debian: apt-get install libonnx-testdata)\n", data_dir.c_str());
    return 1;
  }
  const auto supported = kiln::onnx::supported_ops();

  // Backend under test first, the reference backend behind it for layers it does not take.
  std::vector<std::pair<std::string_view, std::vector<std::string_view>>> backends;
  for (const auto& b : kiln::tool::compiled_backends())
    if (kiln::tool::backend_available(b.id))
      backends.push_back({b.name, b.id == kiln::RefBackend::id
                                      ? std::vector<std::string_view>{b.id}
                                      : std::vector<std::string_view>{b.id, kiln::RefBackend::id}});
  ToolRuntime runtime;

  std::vector<CaseResult> results;
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator"}) {
    std::vector<fs::path> cases;
    for (const auto& entry : fs::directory_iterator(data_dir / suite))
      if (entry.is_directory()) cases.push_back(entry.path());
    std::ranges::sort(cases);
    for (const auto& dir : cases) {
      CaseResult result{kiln::detail::str_cat(suite, '/', dir.filename().string())};
      if (!filter.empty() && result.name.find(filter) == std::string::npos) continue;
      const auto summary = summary_of(dir / "model.onnx");
      if (!summary) {
        result.outcome = Outcome::NotClaimed;
        result.reason = "model.onnx does not parse";
      } else if (auto missing = std::ranges::find_if(
                     summary->ops,
                     [&](const std::string& op) { return std::ranges::find(supported, op) == supported.end(); });
                 missing != summary->ops.end()) {
        result.outcome = Outcome::NotClaimed;
        result.reason = "op " + *missing;
      } else {
        result = run_case(runtime, dir, *summary, std::move(result), backends);
      }
      results.push_back(std::move(result));
    }
  }

  std::map<Outcome, std::size_t> counts;
  for (const auto& r : results) ++counts[r.outcome];
  std::printf("ONNX conformance (%s; backends:", data_dir.c_str());
  for (const auto& [name, preferences] : backends) std::printf(" %.*s", static_cast<int>(name.size()), name.data());
  std::printf("; rtol %g, atol %g)\n", relative_tolerance, absolute_tolerance);
  auto list = [&](Outcome outcome, const char* heading) {
    if (counts[outcome] == 0) return;
    std::printf("\n%s:\n", heading);
    for (const auto& r : results)
      if (r.outcome == outcome) std::printf("  %s: %s\n", r.name.c_str(), r.reason.c_str());
  };
  list(Outcome::Skipped, "skipped (the importer refuses them, with its reason)");
  list(Outcome::Failed, "FAILED");
  std::size_t regressions = 0;
  for (const auto& r : results)
    if (recorded.contains(r.name) && r.outcome != Outcome::Passed) {
      std::printf("REGRESSION: %s passed before (tests/onnx/conformance_passing.txt) and does not now\n",
                  r.name.c_str());
      ++regressions;
    }
  std::size_t new_passes = 0;
  for (const auto& r : results) new_passes += r.outcome == Outcome::Passed && !recorded.contains(r.name) ? 1 : 0;
  std::printf("\n%zu passed, %zu failed, %zu skipped (%zu cases use ops kiln does not claim)\n",
              counts[Outcome::Passed], counts[Outcome::Failed], counts[Outcome::Skipped], counts[Outcome::NotClaimed]);
  if (new_passes > 0)
    std::printf("%zu cases pass that the recorded list does not have: add them with --write-passing\n", new_passes);
  if (!write_passing.empty()) {
    std::ofstream out(write_passing);
    out << "# ONNX test cases that pass on every backend; tests/onnx/test_onnx_conformance.cpp checks that they\n"
           "# still do. Regenerate with: build/tests/test_onnx_conformance DATA_DIR LIST --write-passing LIST\n";
    for (const auto& r : results)
      if (r.outcome == Outcome::Passed || recorded.contains(r.name)) out << r.name << '\n';
  }
  return counts[Outcome::Failed] == 0 && regressions == 0 ? 0 : 1;
}
