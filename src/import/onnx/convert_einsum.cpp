// SPDX-License-Identifier: Apache-2.0
// ONNX Einsum, for the equations models use: one operand permuted and summed, or two operands
// contracted as one BatchMatMul (the batched matrix products of attention, "bhqd,bhkd->bhqk"),
// with the Transposes and Reshapes around it that the labels' order needs.
#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <string>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

/// One operand of an equation (or its output): a label per dimension.
using Labels = std::string;

/// The labels of the last `count` dimensions an ellipsis stands for: digits, aligned to the right
/// ("89" for two), so that operands with fewer such dimensions share the trailing ones.
std::string ellipsis_labels(std::size_t count) {
  return std::string("0123456789").substr(10 - std::min<std::size_t>(count, 10));
}

/// Splits "ab,bc->ac" into the operands' labels and the output's; ellipses become one label per
/// dimension they stand for (the digits, aligned to the right as numpy broadcasts them), and an
/// equation without "->" gets numpy's implicit output, the labels used once in alphabetical order.
Expected<std::pair<std::vector<Labels>, Labels>> parse_equation(Importer& im, std::string equation,
                                                                std::span<const std::size_t> ranks) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const std::size_t arrow = equation.find("->");
  const std::string left = equation.substr(0, arrow);
  std::vector<Labels> operands;
  for (std::size_t start = 0;;) {
    const std::size_t comma = left.find(',', start);
    operands.push_back(left.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (operands.size() != ranks.size())
    return im.invalid("equation '", equation, "' names ", operands.size(), " operands but the node has ", ranks.size(),
                      " inputs");
  std::size_t ellipsis_dims = 0;
  auto expand = [&](Labels& labels, std::size_t rank) -> Status {
    const std::size_t dots = labels.find("...");
    const std::size_t named = labels.size() - (dots == std::string::npos ? 0 : 3);
    if (dots == std::string::npos ? named != rank : named > rank)
      return im.invalid("operand '", labels, "' of equation '", equation, "' does not fit an input of rank ", rank);
    for (char c : labels)
      if (c != '.' && !std::isalpha(static_cast<unsigned char>(c)))
        return im.invalid("equation '", equation, "' has the label '", c, "' (letters only)");
    if (dots == std::string::npos) return Status::ok();
    const std::size_t covered = rank - named;
    ellipsis_dims = std::max(ellipsis_dims, covered);
    labels.replace(dots, 3, ellipsis_labels(covered));
    return Status::ok();
  };
  for (std::size_t i = 0; i < operands.size(); ++i)
    if (auto s = expand(operands[i], ranks[i]); !s) return s;
  Labels output;
  if (arrow != std::string::npos) {
    output = equation.substr(arrow + 2);
    if (const std::size_t dots = output.find("..."); dots != std::string::npos)
      output.replace(dots, 3, ellipsis_labels(ellipsis_dims));
  } else {
    std::map<char, int> uses;
    for (const Labels& labels : operands)
      for (char c : labels) ++uses[c];
    output = ellipsis_labels(ellipsis_dims);
    for (const auto& [c, n] : uses)
      if (n == 1 && std::isalpha(static_cast<unsigned char>(c))) output += c;
  }
  return std::pair{operands, output};
}

/// `slot` (labels `from`) with its axes permuted into the order of `to` (the same labels).
Expected<OutputSlot> permuted(Importer& im, OutputSlot slot, const Labels& from, const Labels& to,
                              std::string_view name) {
  if (from == to) return slot;
  DimVector<std::uint32_t> permutation;
  for (char c : to) permutation.push_back(static_cast<std::uint32_t>(from.find(c)));
  return im.add<ops::Transpose>({permutation}, {slot}, name);
}

/// `slot` summed over the labels of `labels` that `keep` lacks; `labels` becomes what is left.
Expected<OutputSlot> summed(Importer& im, OutputSlot slot, Labels& labels, const Labels& keep, std::string_view name) {
  DimVector<std::int64_t> axes;
  Labels left;
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (keep.find(labels[i]) == std::string::npos)
      axes.push_back(static_cast<std::int64_t>(i));
    else
      left += labels[i];
  if (axes.empty()) return slot;
  labels = left;
  return im.add<ops::Reduce>({ops::ReduceOperation::Sum, axes, false}, {slot}, name);
}

Status einsum(Importer& im) {
  const auto equation = im.attr_string("equation");
  if (!equation) return im.invalid("equation is missing");
  if (im.num_inputs() == 0 || im.num_inputs() > 2)
    return im.error(im.num_inputs(), " operands (kiln's Einsum takes one or two)");
  std::vector<Value*> values;
  std::vector<std::size_t> ranks;
  for (std::size_t i = 0; i < im.num_inputs(); ++i) {
    KILN_ONNX_TRY(value, im.input(i));
    values.push_back(value);
    ranks.push_back(value->dims.size());
  }
  KILN_ONNX_TRY(parsed, parse_equation(im, *equation, ranks));
  auto& [operands, output] = parsed;
  // Every label's size, the same wherever it appears; a label twice in one operand is a diagonal.
  std::map<char, std::int64_t> size_of;
  for (std::size_t i = 0; i < operands.size(); ++i)
    for (std::size_t d = 0; d < operands[i].size(); ++d) {
      const char c = operands[i][d];
      if (operands[i].find(c) != d)
        return im.error("equation '", *equation, "' repeats '", c, "' in one operand (a diagonal)");
      const std::int64_t n = values[i]->dims[d];
      if (auto [it, added] = size_of.emplace(c, n); !added && it->second != n)
        return im.invalid("label '", c, "' has sizes ", it->second, " and ", n, " (kiln does not broadcast in Einsum)");
    }
  for (char c : output)
    if (!size_of.count(c) || output.find(c) != output.rfind(c))
      return im.invalid("output label '", c, "' of equation '", *equation, "' is not an input's, or repeats");

  std::vector<OutputSlot> slots;
  for (Value* value : values) {
    KILN_ONNX_TRY(slot, im.plain(*value));
    slots.push_back(slot);
  }
  if (operands.size() == 1) {
    KILN_ONNX_TRY(reduced, summed(im, slots[0], operands[0], output, "sum"));
    KILN_ONNX_TRY(y, permuted(im, reduced, operands[0], output, "transpose"));
    im.define(0, y, Layout::Plain);
    return Status::ok();
  }
  // Each operand first sums the labels it alone has and the output lacks.
  Labels &a = operands[0], &b = operands[1];
  KILN_ONNX_TRY(a_reduced, summed(im, slots[0], a, output + b, "sum_a"));
  KILN_ONNX_TRY(b_reduced, summed(im, slots[1], b, output + a, "sum_b"));
  // Then a [batch, M, K] x [batch, K, N] product: batch labels in both and the output, K in both
  // only, M and N in one and the output.
  Labels batch, m, k, n;
  for (char c : a) (b.find(c) == std::string::npos ? m : output.find(c) == std::string::npos ? k : batch) += c;
  for (char c : b)
    if (a.find(c) == std::string::npos) n += c;
  auto extent = [&](const Labels& labels) {
    return std::accumulate(labels.begin(), labels.end(), std::int64_t{1},
                           [&](std::int64_t product, char c) { return product * size_of[c]; });
  };
  auto matrix = [&](OutputSlot slot, const Labels& labels, const Labels& rows, const Labels& columns,
                    std::string_view name) -> Expected<OutputSlot> {
    auto ordered = permuted(im, slot, labels, batch + rows + columns, name);
    if (!ordered) return ordered;
    DimVector<std::int64_t> dims;
    for (char c : batch) dims.push_back(size_of[c]);
    dims.push_back(extent(rows));
    dims.push_back(extent(columns));
    return im.add<ops::Reshape>({dims}, {*ordered}, std::string(name) + "_matrix");
  };
  KILN_ONNX_TRY(left, matrix(a_reduced, a, m, k, "a"));
  KILN_ONNX_TRY(right, matrix(b_reduced, b, k, n, "b"));
  KILN_ONNX_TRY(product, im.add<ops::BatchMatMul>({}, {left, right}, "product"));
  DimVector<std::int64_t> dims;
  for (char c : batch + m + n) dims.push_back(size_of[c]);
  KILN_ONNX_TRY(unflattened, im.add<ops::Reshape>({dims}, {product}, "labels"));
  KILN_ONNX_TRY(y, permuted(im, unflattened, batch + m + n, output, "transpose"));
  im.define(0, y, Layout::Plain);
  return Status::ok();
}

constexpr ConverterEntry einsum_ops[] = {
    {"Einsum", einsum},
};

}  // namespace

std::span<const ConverterEntry> einsum_converters() { return einsum_ops; }

}  // namespace kiln::onnx::detail
