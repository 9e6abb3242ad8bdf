// SPDX-License-Identifier: Apache-2.0
// `kiln compile`: imports an ONNX or TensorFlow Lite model, optimizes and plans it for RefBackend as
// the dynamic path would (the same Runtime, the same memory plan `kiln inspect` prints), and writes
// the result as a header of constants: the weights in their stored type, the tensor table, the steps with their
// parameters, and the arena's size. StaticModel (kiln/static/static_model.hpp) runs it.
#include "compile_header.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/import/onnx.hpp>
#include <kiln/runtime/runtime.hpp>

#include "cpp_source.hpp"
#include "model_file.hpp"

namespace kiln::tool {
namespace {

using CompileRuntime = Runtime<RefBackend>;
using kiln::detail::str_cat;

/// `name` as a C++ identifier: other characters become '_', runs of them one.
std::string identifier(std::string_view name) {
  std::string id;
  for (char c : name) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (word)
      id += c;
    else if (!id.empty() && id.back() != '_')
      id += '_';
  }
  while (!id.empty() && id.back() == '_') id.pop_back();
  return id;
}

/// `text` as a C++ string literal.
std::string string_literal(std::string_view text) {
  std::string literal = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      literal += '\\';
      literal += c;
    } else if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\%03o", static_cast<unsigned>(static_cast<unsigned char>(c)));
      literal += escaped;
    } else {
      literal += c;
    }
  }
  return literal + "\"";
}

/// The C++ element type a constant of `type` is written as, or null for a type the header does not hold.
const char* element_type(DataType type) {
  switch (type) {
    case DataType::Float32: return "float";
    case DataType::Signed32: return "std::int32_t";
    case DataType::QAsymmS8:
    case DataType::QSymmS8: return "std::int8_t";
    case DataType::QAsymmU8: return "std::uint8_t";
    case DataType::Boolean: return "bool";
    default: return nullptr;
  }
}

/// The elements of a constant, `per_line` to a line, as the initialiser of an array.
std::string elements(DataType type, std::span<const std::byte> data) {
  std::string text;
  const std::size_t per_line = type == DataType::Float32 ? 6 : size_of(type) == 1 ? 16 : 12;
  auto write = [&]<class E>(E*, auto literal) {
    const std::size_t count = data.size() / sizeof(E);
    for (std::size_t i = 0; i < count; ++i) {
      E value;
      std::memcpy(&value, data.data() + i * sizeof(E), sizeof(E));
      text += i % per_line == 0 ? "\n    " : " ";
      text += literal(value) + (i + 1 < count ? "," : "");
    }
  };
  const auto integer = [](auto v) { return std::to_string(v); };
  if (type == DataType::Float32)
    write(static_cast<float*>(nullptr), [](float v) { return float_literal(v); });
  else if (type == DataType::Signed32)
    write(static_cast<std::int32_t*>(nullptr), integer);
  else if (type == DataType::QAsymmS8 || type == DataType::QSymmS8)
    write(static_cast<std::int8_t*>(nullptr), integer);
  else if (type == DataType::QAsymmU8)
    write(static_cast<std::uint8_t*>(nullptr), integer);
  else
    write(static_cast<std::uint8_t*>(nullptr), [](std::uint8_t v) { return std::string(v ? "true" : "false"); });
  return text;
}

std::string shape_list(const TensorShape& shape) {
  std::string list = "{";
  for (std::size_t d = 0; d < shape.rank(); ++d) list += str_cat(d ? ", " : "", shape[d]);
  return list + "}";
}

/// The scales of a tensor quantised per axis, as an array of the header's constants.
std::string scales_array(const std::string& name, const QuantizationInfo& q) {
  return str_cat("inline constexpr float ", name, "[", q.scales.size(), "] = {",
                 elements(DataType::Float32, std::as_bytes(q.scales.values())), "};\n");
}

/// The StaticQuantization argument of a quantised tensor (none for the others): its scale inline,
/// or `scales`, the array scales_array wrote.
std::string quantization_source(const QuantizationInfo& q, const std::string& scales) {
  if (q.empty()) return "";
  if (!q.is_per_axis()) return str_cat(", {", float_literal(q.scales[0]), ", ", q.offset, "}");
  return str_cat(", {0.0f, ", q.offset, ", weights::", scales, ", ", q.axis ? std::int64_t{*q.axis} : -1, "}");
}

/// What the header says, built up in order.
class HeaderWriter {
 public:
  HeaderWriter(const Network& network, const NetworkPlan& plan) : network_(network), plan_(plan) {}

  Status check() const {
    for (const PlannedStep& step : plan_.steps) {
      if (step.kind == PlannedStep::Kind::Compute && step.backend != RefBackend::id)
        return Status::error(ErrorCode::Unsupported, "layer '", network_.layer(step.layer).name, "' runs on ",
                             step.backend, "; a compiled network runs on RefBackend");
      for (const auto* tensors : {&step.inputs, &step.outputs})
        for (std::size_t t : *tensors)
          if (auto s = check_tensor(t); !s) return s.with_context(network_.layer(step.layer).describe());
    }
    if (plan_.tensors.size() > 0xffff)
      return Status::error(ErrorCode::Unsupported, "the network has over 65535 tensors");
    return Status::ok();
  }

  CompiledHeader write(const CompileOptions& options) {
    number_tensors();
    place_kept();
    std::string weights, tensors, steps;
    std::uint64_t weight_bytes = 0;
    for (std::size_t t : used_) {
      const PlannedTensor& tensor = plan_.tensors[t];
      const std::string type = str_cat("kiln::DataType::", to_string(tensor.info.type));
      const std::string comment = str_cat("  // ", index_[t], ": ", tensor.info.to_string(), ", ", name_of(t), "\n");
      const std::string name = str_cat("t", index_[t], "_", identifier(name_of(t)));
      const QuantizationInfo& q = tensor.info.quantization;
      if (tensor.is_constant) weights += str_cat("// ", name_of(t), ": ", tensor.info.to_string(), "\n");
      if (q.is_per_axis()) weights += scales_array(name + "_scales", q);
      const std::string quantization = quantization_source(q, name + "_scales");
      if (!tensor.is_constant) {
        tensors += str_cat("    kiln::in_arena(", type, ", ", shape_list(tensor.info.shape), ", ", tensor.offset,
                           quantization, "),");
      } else {
        const auto& data = network_.layer(tensor.producer.layer).params_if<ops::Constant>()->data;
        weights += str_cat("alignas(", plan_.alignment, ") inline constexpr ", element_type(tensor.info.type), " ",
                           name, "[", tensor.info.num_elements(), "] = {", elements(tensor.info.type, data), "};\n");
        weight_bytes += tensor.info.num_bytes();
        tensors += str_cat("    kiln::in_flash(", type, ", ", shape_list(tensor.info.shape), ", weights::", name,
                           quantization, "),");
      }
      tensors += comment;
    }
    for (std::size_t s = 0; s < plan_.steps.size(); ++s) steps += str_cat("    ", step_source(s), ",\n");
    steps.erase(steps.size() - 2, 1);  // the last step's comma

    const auto layers = std::ranges::count(plan_.steps, PlannedStep::Kind::Compute, &PlannedStep::kind);
    const std::string summary =
        str_cat(layers, " layers for RefBackend, ", used_.size(), " tensors; arena ", arena_bytes_, " B: tensors ",
                plan_.arena_bytes, " B (the memory plan's lower bound: ", plan_.lower_bound_bytes, " B)",
                kept_bytes_ ? str_cat(" and ", kept_bytes_, " B the workloads keep from load on") : "", "; weights ",
                weight_bytes, " B, read in place");
    std::string header = str_cat(
        "// SPDX-License-Identifier: Apache-2.0\n"
        "// clang-format off\n"
        "// Written by `",
        options.command,
        "`; do not edit (write it again).\n"
        "// ",
        summary,
        ".\n"
        "// Run it with StaticModel (docs/firmware.md):\n"
        "//   alignas(",
        plan_.alignment, ") static std::byte arena[", options.name_space, "::arena_bytes];\n", "//   ",
        options.name_space, "::Model<kiln::RefBackend> model{arena};\n",
        "//   kiln::Status status = model.run(std::span<const float>(input), std::span<float>(output));\n"
        "#pragma once\n\n"
        "#include <cstddef>\n#include <cstdint>\n#include <limits>\n#include <optional>\n#include <tuple>\n\n"
        "#include <kiln/ops/op_set.hpp>\n#include <kiln/static/static_model.hpp>\n\n"
        "namespace ",
        options.name_space,
        " {\n\n"
        "/// Bytes of working memory the network needs: its intermediate tensors, as planned, and what\n"
        "/// RefBackend's workloads keep from load on (kept_bytes).\n"
        "inline constexpr std::uint64_t arena_bytes = ",
        arena_bytes_,
        ";\n"
        "inline constexpr std::uint64_t kept_bytes = ",
        kept_bytes_,
        ";\n"
        "/// No plan needs fewer bytes: the largest total of tensors alive at once, and kept_bytes.\n"
        "inline constexpr std::uint64_t arena_lower_bound = ",
        plan_.lower_bound_bytes + kept_bytes_,
        ";\n"
        "/// Bytes of the constants below, read in place.\n"
        "inline constexpr std::uint64_t weight_bytes = ",
        weight_bytes, ";\n\nnamespace weights {\n\n", weights, "\n}  // namespace weights\n\n",
        "/// Every tensor: an offset in the arena, or a constant above.\n"
        "inline constexpr kiln::StaticTensor tensors[] = {\n",
        tensors,
        "};\n\n"
        "/// The steps in execution order: inputs in, layers, outputs out.\n"
        "inline constexpr std::tuple layers{\n",
        steps, "};\n\n", options.ops_only_used ? op_set() : "",
        "/// The network run by Backend (or, layer by layer, the first of its fallbacks with a workload).\n"
        "template <class Backend>\n"
        "using Model = kiln::StaticModel<Backend, layers, tensors, arena_bytes>;\n\n"
        "}  // namespace ",
        options.name_space, "\n");
    return {std::move(header), summary};
  }

 private:
  Status check_tensor(std::size_t t) const {
    const PlannedTensor& tensor = plan_.tensors[t];
    if (!tensor.in_host_memory) return Status::error(ErrorCode::Unsupported, "a tensor lives in device memory");
    if (tensor.is_constant && element_type(tensor.info.type) == nullptr)
      return Status::error(ErrorCode::Unsupported, "a constant of type ", to_string(tensor.info.type),
                           "; compiled networks hold Float32, 8-bit quantised, Signed32 and Boolean constants for now");
    return Status::ok();
  }

  std::string_view name_of(std::size_t t) const { return network_.layer(plan_.tensors[t].producer.layer).name; }

  /// Numbers the tensors the steps use, in the order the steps first use them.
  void number_tensors() {
    index_.assign(plan_.tensors.size(), 0);
    std::vector<bool> seen(plan_.tensors.size(), false);
    for (const PlannedStep& step : plan_.steps)
      for (const auto* list : {&step.inputs, &step.outputs})
        for (std::size_t t : *list)
          if (!seen[t]) {
            seen[t] = true;
            index_[t] = used_.size();
            used_.push_back(t);
          }
  }

  std::string indices(const std::vector<std::size_t>& tensors) const {
    std::string list = "{";
    for (std::size_t t : tensors) list += str_cat(list.size() > 1 ? ", " : "", index_[t]);
    return list + "}";
  }

  /// The declaration of Ops: the OpSet of the ops the steps use, in the order they first appear.
  std::string op_set() const {
    std::vector<std::string_view> names;
    for (const PlannedStep& step : plan_.steps)
      visit_op(network_.layer(step.layer).descriptor, [&]<class Op>(const OpParams<Op>&) {
        if constexpr (!ops::is_structural_v<Op>)
          if (std::ranges::find(names, type_name<Op>()) == names.end()) names.push_back(type_name<Op>());
      });
    std::string list;
    for (std::string_view name : names) list += str_cat(list.empty() ? "" : ", ", name);
    return str_cat("/// The ops the network uses: kiln::Runtime<Ops, Backend> compiles only their workloads.\n",
                   "using Ops = kiln::OpSet<", list, ">;\n\n");
  }

  /// Places what each layer's workload keeps from load on after the tensors, the largest first (the
  /// regions then need no padding between them while their sizes are multiples of the alignment).
  void place_kept() {
    constexpr std::uint64_t alignment = KeptMemory::alignment;
    std::vector<std::size_t> order;
    for (std::size_t s = 0; s < plan_.steps.size(); ++s)
      if (plan_.steps[s].kept_bytes != 0) order.push_back(s);
    std::ranges::stable_sort(order, std::greater<>{}, [&](std::size_t s) { return plan_.steps[s].kept_bytes; });
    kept_offset_.assign(plan_.steps.size(), 0);
    arena_bytes_ = plan_.arena_bytes;
    for (std::size_t s : order) {
      kept_offset_[s] = (arena_bytes_ + alignment - 1) / alignment * alignment;
      arena_bytes_ = kept_offset_[s] + plan_.steps[s].kept_bytes;
      kept_bytes_ += plan_.steps[s].kept_bytes;
    }
  }

  static std::string region(std::uint64_t offset, std::uint64_t bytes) {
    return bytes ? str_cat("{", offset, ", ", bytes, "}") : "{}";
  }

  std::string step_source(std::size_t s) const {
    const PlannedStep& step = plan_.steps[s];
    const Layer& layer = network_.layer(step.layer);
    if (step.kind == PlannedStep::Kind::Input)
      return str_cat("kiln::StaticInput{", step.binding, ", ", index_[step.outputs[0]], "}");
    if (step.kind == PlannedStep::Kind::Output)
      return str_cat("kiln::StaticOutput{", step.binding, ", ", index_[step.inputs[0]], "}");
    std::vector<TensorInfo> inputs;
    for (std::size_t t : step.inputs) inputs.push_back(plan_.tensors[t].info);
    const DataType type = ops::layer_data_type(inputs, layer.outputs);
    const bool tflite = network_.arithmetic() == QuantizedArithmetic::TfLite;
    return visit_op(layer.descriptor, [&]<class Op>(const OpParams<Op>& params) -> std::string {
      if constexpr (ops::is_structural_v<Op>)  // inputs, outputs and constants are not compute steps
        return {};
      else
        return str_cat("kiln::StaticLayer<", type_name<Op>(), ", kiln::DataType::", to_string(type), ", ",
                       step.inputs.size(), ", ", step.outputs.size(), ">{\n        ", string_literal(layer.name), ", ",
                       to_cpp(params.value), ", ", indices(step.inputs), ", ", indices(step.outputs),
                       step.scratch_bytes || step.kept_bytes || tflite
                           ? str_cat(", ", region(step.scratch_offset, step.scratch_bytes),
                                     step.kept_bytes || tflite ? ", " + region(kept_offset_[s], step.kept_bytes) : "")
                           : "",
                       tflite ? ", kiln::QuantizedArithmetic::TfLite" : "", "}");
    });
  }

  const Network& network_;
  const NetworkPlan& plan_;
  std::vector<std::size_t> index_;          ///< per plan tensor, its index in the header's table
  std::vector<std::size_t> used_;           ///< the plan tensors the header holds, in its order
  std::vector<std::uint64_t> kept_offset_;  ///< per step, where what its workload keeps lies in the arena
  std::uint64_t kept_bytes_ = 0;
  std::uint64_t arena_bytes_ = 0;
};

}  // namespace

Expected<CompiledHeader> compile_header(const CompileOptions& options) {
  if (identifier(options.name_space) != options.name_space || options.name_space.empty() ||
      (options.name_space[0] >= '0' && options.name_space[0] <= '9'))
    return Status::error(ErrorCode::InvalidArgument, "--namespace '", options.name_space,
                         "' is not a C++ identifier (letters, digits and single underscores)");
  auto imported = import_model_file(options.model_path, options.import);
  if (!imported) return imported.status();
  OptimizerOptions optimizer;
  optimizer.backend_preferences = {RefBackend::id};
  auto optimized = CompileRuntime::optimize(std::move(imported->network), optimizer);
  if (!optimized) return optimized.status();
  CompileRuntime runtime;
  auto id = runtime.load(*optimized);
  if (!id) return id.status();
  auto plan = runtime.plan(*id);
  if (!plan) return plan.status();
  HeaderWriter writer(optimized->network(), *plan);
  if (auto status = writer.check(); !status) return status.with_context("kiln compile");
  return writer.write(options);
}

}  // namespace kiln::tool
