// SPDX-License-Identifier: Apache-2.0
// ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, as their ONNX function bodies define
// them: each target's score picked by GatherElements, weighted, negated and reduced. (Training
// losses; kiln runs them as any other graph, e.g. to score a batch.)
#include <limits>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

// The loss of `log_prob` ([N, C, d...], plain) against the targets (input `target_input`, [N, d...])
// with the optional class weights (input `weight_input`), reduced as the node's `reduction` says.
Status negative_log_likelihood(Importer& im, OutputSlot log_prob, std::size_t target_input, std::size_t weight_input) {
  KILN_ONNX_TRY(target, im.input(target_input));
  if (target->type != DataType::Signed32) return im.invalid("the target is ", to_string(target->type));
  const TensorShape& scores = im.info(log_prob).shape;
  if (scores.rank() < 2 || target->dims.size() + 1 != scores.rank())
    return im.invalid("the input must be [N, C, d...] and the target [N, d...]");
  const std::string reduction = im.attr_string("reduction").value_or("mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return im.invalid("reduction '", reduction, "' is not none, sum or mean");
  KILN_ONNX_TRY(targets, im.plain(*target));
  const auto signed_zero = im.add_constant(ConstValue{{}, false, false, {}, {0}}, DataType::Signed32, "zero_index");
  // Targets equal to ignore_index weigh 0; they read class 0, so that no index is out of range.
  std::optional<OutputSlot> ignored;
  OutputSlot safe_targets = targets;
  if (const auto ignore_index = im.attr_int("ignore_index")) {
    const auto ignore =
        im.add_constant(ConstValue{{}, false, false, {}, {*ignore_index}}, DataType::Signed32, "ignore_index");
    KILN_ONNX_TRY(is_ignored, im.add<ops::Comparison>({ops::ComparisonOperation::Equal}, {targets, ignore}, "ignored"));
    KILN_ONNX_TRY(safe, im.add<ops::Select>({}, {is_ignored, signed_zero, targets}, "safe_targets"));
    ignored = is_ignored;
    safe_targets = safe;
  }
  DimVector<std::int64_t> column;  // [N, 1, d...]: the target of each position, along the class axis
  for (std::size_t d = 0; d < scores.rank(); ++d) column.push_back(d == 1 ? 1 : scores[d]);
  DimVector<std::int64_t> positions;  // [N, d...]
  for (std::size_t d = 0; d < scores.rank(); ++d)
    if (d != 1) positions.push_back(scores[d]);
  KILN_ONNX_TRY(index, im.add<ops::Reshape>({column}, {safe_targets}, "target_column"));
  KILN_ONNX_TRY(picked_column, im.add<ops::GatherElements>({1}, {log_prob, index}, "picked"));
  KILN_ONNX_TRY(picked, im.add<ops::Reshape>({positions}, {picked_column}, "picked_positions"));
  // Each position's weight: its class's, or 1; 0 where ignored.
  std::optional<OutputSlot> weights;
  if (im.has_input(weight_input)) {
    KILN_ONNX_TRY(weight, im.input(weight_input));
    KILN_ONNX_TRY(class_weights, im.plain(*weight));
    KILN_ONNX_TRY(gathered, im.add<ops::Gather>({0}, {class_weights, safe_targets}, "weights"));
    weights = gathered;
  }
  if (ignored) {
    const auto zero = im.add_constant(ConstValue{{}, true, false, {0.0f}, {}}, DataType::Float32, "zero_weight");
    const auto one = im.add_constant(ConstValue{{}, true, false, {1.0f}, {}}, DataType::Float32, "unit_weight");
    KILN_ONNX_TRY(kept, im.add<ops::Select>({}, {*ignored, zero, weights.value_or(one)}, "kept_weights"));
    weights = kept;
  }
  OutputSlot loss = picked;
  if (weights) {
    KILN_ONNX_TRY(weighted,
                  im.add<ops::ElementwiseBinary>({ops::BinaryOperation::Mul}, {picked, *weights}, "weighted"));
    loss = weighted;
  }
  KILN_ONNX_TRY(negated, im.add<ops::ElementwiseUnary>({ops::UnaryOperation::Neg}, {loss}, "loss"));
  if (reduction == "none") {
    im.define(0, negated, Layout::Plain);
    return Status::ok();
  }
  const auto fold = [&](ops::ReduceOperation op, OutputSlot x, std::string_view suffix) {
    return im.add<ops::Reduce>({op, {}, false}, {x}, suffix);
  };
  if (reduction == "sum" || !weights) {
    KILN_ONNX_TRY(y, fold(reduction == "sum" ? ops::ReduceOperation::Sum : ops::ReduceOperation::Mean, negated, {}));
    im.define(0, y, Layout::Plain);
    return Status::ok();
  }
  // The mean of weighted losses divides by the weights' sum.
  KILN_ONNX_TRY(total, fold(ops::ReduceOperation::Sum, negated, "total"));
  KILN_ONNX_TRY(weight_total, fold(ops::ReduceOperation::Sum, *weights, "weight_total"));
  KILN_ONNX_TRY(y, im.add<ops::ElementwiseBinary>({ops::BinaryOperation::Div}, {total, weight_total}));
  im.define(0, y, Layout::Plain);
  return Status::ok();
}

Status nll_loss(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  KILN_ONNX_TRY(input, im.plain(*x));
  return negative_log_likelihood(im, input, 1, 2);
}

// LogSoftmax over the class axis, then the negative log-likelihood; output 1 is the log-probabilities.
Status softmax_cross_entropy(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->dims.size() < 2) return im.invalid("the scores must be [N, C, d...]");
  KILN_ONNX_TRY(scores, im.plain(*x));
  KILN_ONNX_TRY(log_prob, im.add<ops::Softmax>({1, 1.0f, true}, {scores}, "log_prob"));
  if (auto status = negative_log_likelihood(im, log_prob, 1, 2); !status) return status;
  if (im.is_output(1)) im.define(1, log_prob, Layout::Plain);
  return Status::ok();
}

constexpr ConverterEntry loss_ops[] = {
    {"NegativeLogLikelihoodLoss", nll_loss},
    {"SoftmaxCrossEntropyLoss", softmax_cross_entropy},
};

}  // namespace

std::span<const ConverterEntry> loss_converters() { return loss_ops; }

}  // namespace kiln::onnx::detail
