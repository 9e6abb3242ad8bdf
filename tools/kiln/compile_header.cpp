// SPDX-License-Identifier: Apache-2.0
// `kiln compile`: imports an ONNX model, optimizes and plans it for RefBackend as the dynamic path
// would (the same Runtime, the same memory plan `kiln inspect` prints), and writes the result as a
// header of constants: the weights in their stored type, the tensor table, the steps with their
// parameters, and the arena's size. StaticModel (kiln/static/static_model.hpp) runs it.
#include "compile_header.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/import/onnx.hpp>
#include <kiln/runtime/runtime.hpp>

#include "cpp_source.hpp"

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
    case DataType::Boolean: return "bool";
    default: return nullptr;
  }
}

/// The elements of a constant, `per_line` to a line, as the initialiser of an array.
std::string elements(DataType type, std::span<const std::byte> data) {
  std::string text;
  const std::size_t per_line = type == DataType::Float32 ? 6 : 12;
  auto write = [&]<class E>(E*, auto literal) {
    const std::size_t count = data.size() / sizeof(E);
    for (std::size_t i = 0; i < count; ++i) {
      E value;
      std::memcpy(&value, data.data() + i * sizeof(E), sizeof(E));
      text += i % per_line == 0 ? "\n    " : " ";
      text += literal(value) + (i + 1 < count ? "," : "");
    }
  };
  if (type == DataType::Float32)
    write(static_cast<float*>(nullptr), [](float v) { return float_literal(v); });
  else if (type == DataType::Signed32)
    write(static_cast<std::int32_t*>(nullptr), [](std::int32_t v) { return std::to_string(v); });
  else
    write(static_cast<std::uint8_t*>(nullptr), [](std::uint8_t v) { return std::string(v ? "true" : "false"); });
  return text;
}

std::string shape_list(const TensorShape& shape) {
  std::string list = "{";
  for (std::size_t d = 0; d < shape.rank(); ++d) list += str_cat(d ? ", " : "", shape[d]);
  return list + "}";
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
    std::string weights, tensors, steps;
    std::uint64_t weight_bytes = 0;
    std::size_t layers = 0;
    for (std::size_t t : used_) {
      const PlannedTensor& tensor = plan_.tensors[t];
      const std::string type = str_cat("kiln::DataType::", to_string(tensor.info.type));
      const std::string comment = str_cat("  // ", index_[t], ": ", tensor.info.to_string(), ", ", name_of(t), "\n");
      if (!tensor.is_constant) {
        tensors += str_cat("    kiln::in_arena(", type, ", ", shape_list(tensor.info.shape), ", ", tensor.offset, "),");
      } else {
        const auto& data = network_.layer(tensor.producer.layer).params_if<ops::Constant>()->data;
        const std::string array = str_cat("t", index_[t], "_", identifier(name_of(t)));
        weights += str_cat("// ", name_of(t), ": ", tensor.info.to_string(), "\nalignas(", plan_.alignment,
                           ") inline constexpr ", element_type(tensor.info.type), " ", array, "[",
                           tensor.info.num_elements(), "] = {", elements(tensor.info.type, data), "};\n");
        weight_bytes += tensor.info.num_bytes();
        tensors +=
            str_cat("    kiln::in_flash(", type, ", ", shape_list(tensor.info.shape), ", weights::", array, "),");
      }
      tensors += comment;
    }
    for (const PlannedStep& step : plan_.steps) steps += str_cat("    ", step_source(step, layers), ",\n");
    steps.erase(steps.size() - 2, 1);  // the last step's comma

    const std::string summary =
        str_cat(layers, " layers for RefBackend, ", used_.size(), " tensors; arena ", plan_.arena_bytes,
                " B (the memory plan's lower bound: ", plan_.lower_bound_bytes, " B); weights ", weight_bytes,
                " B, read in place");
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
        "#include <kiln/ops/op_list.hpp>\n#include <kiln/static/static_model.hpp>\n\n"
        "namespace ",
        options.name_space,
        " {\n\n"
        "/// Bytes of working memory the network needs: its intermediate tensors, as planned.\n"
        "inline constexpr std::uint64_t arena_bytes = ",
        plan_.arena_bytes,
        ";\n"
        "/// No plan of these tensors needs fewer bytes: the largest total of tensors alive at once.\n"
        "inline constexpr std::uint64_t arena_lower_bound = ",
        plan_.lower_bound_bytes,
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
        steps,
        "};\n\n"
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
    if (!tensor.info.quantization.empty())
      return Status::error(ErrorCode::Unsupported, "tensor ", tensor.info.to_string(),
                           " is quantised; compiled networks hold Float32 (and Signed32, Boolean) tensors for now");
    if (tensor.is_constant && element_type(tensor.info.type) == nullptr)
      return Status::error(ErrorCode::Unsupported, "a constant of type ", to_string(tensor.info.type),
                           "; compiled networks hold Float32, Signed32 and Boolean constants for now");
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

  std::string step_source(const PlannedStep& step, std::size_t& layers) const {
    const Layer& layer = network_.layer(step.layer);
    if (step.kind == PlannedStep::Kind::Input)
      return str_cat("kiln::StaticInput{", step.binding, ", ", index_[step.outputs[0]], "}");
    if (step.kind == PlannedStep::Kind::Output)
      return str_cat("kiln::StaticOutput{", step.binding, ", ", index_[step.inputs[0]], "}");
    ++layers;
    std::vector<TensorInfo> inputs;
    for (std::size_t t : step.inputs) inputs.push_back(plan_.tensors[t].info);
    const DataType type = ops::layer_data_type(inputs, layer.outputs);
    return visit_op(layer.descriptor, [&]<class Op>(const OpParams<Op>& params) -> std::string {
      if constexpr (ops::is_structural_v<Op>)  // inputs, outputs and constants are not compute steps
        return {};
      else
        return str_cat("kiln::StaticLayer<", type_name<Op>(), ", kiln::DataType::", to_string(type), ", ",
                       step.inputs.size(), ", ", step.outputs.size(), ">{\n        ", string_literal(layer.name), ", ",
                       to_cpp(params.value), ", ", indices(step.inputs), ", ", indices(step.outputs),
                       step.scratch_bytes ? str_cat(", {", step.scratch_offset, ", ", step.scratch_bytes, "}") : "",
                       "}");
    });
  }

  const Network& network_;
  const NetworkPlan& plan_;
  std::vector<std::size_t> index_;  ///< per plan tensor, its index in the header's table
  std::vector<std::size_t> used_;   ///< the plan tensors the header holds, in its order
};

}  // namespace

Expected<CompiledHeader> compile_header(const CompileOptions& options) {
  if (identifier(options.name_space) != options.name_space || options.name_space.empty() ||
      (options.name_space[0] >= '0' && options.name_space[0] <= '9'))
    return Status::error(ErrorCode::InvalidArgument, "--namespace '", options.name_space,
                         "' is not a C++ identifier (letters, digits and single underscores)");
  auto imported = onnx::import_file(options.model_path);
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
