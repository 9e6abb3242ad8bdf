// SPDX-License-Identifier: Apache-2.0
// ONNX LSTM, GRU and RNN: one Recurrent layer each, in ONNX's own tensor order and gate order.
#include <algorithm>
#include <cctype>

#include "importer.hpp"

namespace kiln::onnx::detail {
namespace {

/// ONNX's name of an activation function (any case) as kiln's, with the alpha and beta it takes
/// from the lists `activation_alpha` and `activation_beta` in turn, or their defaults.
Expected<ops::Activation::Params> recurrent_activation(Importer& im, std::string name, std::span<const float> alphas,
                                                       std::size_t& next_alpha, std::span<const float> betas,
                                                       std::size_t& next_beta) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  auto alpha = [&](float fallback) { return next_alpha < alphas.size() ? alphas[next_alpha++] : fallback; };
  auto beta = [&](float fallback) { return next_beta < betas.size() ? betas[next_beta++] : fallback; };
  using A = ops::ActivationFunction;
  if (name == "sigmoid") return ops::Activation::Params{A::Sigmoid};
  if (name == "tanh") return ops::Activation::Params{A::Tanh};
  if (name == "relu") return ops::Activation::Params{A::ReLU};
  if (name == "softsign") return ops::Activation::Params{A::Softsign};
  if (name == "softplus") return ops::Activation::Params{A::Softplus};
  if (name == "leakyrelu") return ops::Activation::Params{A::LeakyReLU, alpha(0.01f)};
  if (name == "thresholdedrelu") return ops::Activation::Params{A::ThresholdedReLU, alpha(1.0f)};
  if (name == "elu") return ops::Activation::Params{A::ELU, alpha(1.0f)};
  if (name == "hardsigmoid") {
    const float a = alpha(0.2f);
    return ops::Activation::Params{A::HardSigmoid, a, beta(0.5f)};
  }
  return im.error("activation '", name, "' (kiln's recurrent layers take Sigmoid, Tanh, Relu, LeakyRelu, ",
                  "ThresholdedRelu, HardSigmoid, Elu, Softsign and Softplus)");
}

template <ops::RecurrentCell Cell>
Status recurrent_layer(Importer& im) {
  using R = ops::Recurrent;
  KILN_ONNX_TRY(x, im.input(R::X));
  KILN_ONNX_TRY(r, im.input(R::R));
  if (x->dims.size() != 3) return im.invalid("X has rank ", x->dims.size(), "; it must be 3");
  if (r->dims.size() != 3) return im.invalid("R has rank ", r->dims.size(), "; it must be 3");
  R::Params params{.cell = Cell};
  const auto direction = im.attr_string("direction").value_or("forward");
  if (direction == "reverse")
    params.direction = ops::RecurrentDirection::Reverse;
  else if (direction == "bidirectional")
    params.direction = ops::RecurrentDirection::Bidirectional;
  else if (direction != "forward")
    return im.invalid("direction '", direction, "' (forward, reverse or bidirectional)");
  params.hidden_size = static_cast<std::uint32_t>(im.attr_int("hidden_size", r->dims[2]));
  params.batch_major = im.attr_int("layout", 0) != 0;
  params.input_forget = im.attr_int("input_forget", 0) != 0;
  params.linear_before_reset = im.attr_int("linear_before_reset", 0) != 0;
  params.clip = im.attr_float("clip");
  if (const auto* names = im.attr("activations")) {
    const std::vector<float> alphas = im.attr_floats("activation_alpha").value_or(std::vector<float>{});
    const std::vector<float> betas = im.attr_floats("activation_beta").value_or(std::vector<float>{});
    std::size_t next_alpha = 0, next_beta = 0;
    for (const std::string& name : names->strings()) {
      KILN_ONNX_TRY(activation, recurrent_activation(im, name, alphas, next_alpha, betas, next_beta));
      params.activations.push_back(activation);
    }
  }
  const auto directions = static_cast<std::int64_t>(R::directions(params));
  const std::int64_t hidden = params.hidden_size, gated = static_cast<std::int64_t>(R::gates(Cell)) * hidden;
  const std::int64_t batch = x->dims[params.batch_major ? 0 : 1], seq = x->dims[params.batch_major ? 1 : 0];
  const std::vector<std::int64_t> state = params.batch_major ? std::vector<std::int64_t>{batch, directions, hidden}
                                                             : std::vector<std::int64_t>{directions, batch, hidden};
  // kiln's inputs are positional: one left out before a given one becomes the value ONNX means by
  // leaving it out.
  auto absent = [&](std::size_t i) -> ConstValue {
    if (i == R::SequenceLengths) return {{batch}, false, false, {}, std::vector<std::int64_t>(std::size_t(batch), seq)};
    const std::vector<std::int64_t> dims = i == R::B ? std::vector<std::int64_t>{directions, 2 * gated} : state;
    return {dims, true, false, std::vector<float>(element_count(dims), 0.0f), {}};
  };
  constexpr std::string_view roles[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  std::vector<OutputSlot> inputs;
  for (std::size_t i = 0; i < im.num_inputs(); ++i) {
    if (!im.has_input(i)) {
      if (i < R::B) return im.invalid("input ", i, " (", roles[i], ") is missing");
      inputs.push_back(im.add_constant(absent(i), i == R::SequenceLengths ? DataType::Signed32 : DataType::Float32,
                                       std::string(roles[i])));
      continue;
    }
    KILN_ONNX_TRY(value, im.input(i));
    KILN_ONNX_TRY(slot, im.plain(*value));
    inputs.push_back(slot);
  }
  KILN_ONNX_TRY(y, im.add<R>(params, inputs));
  for (std::uint32_t i = 0; i < R::num_outputs(params); ++i) im.define(i, OutputSlot{y.layer, i}, Layout::Plain);
  return Status::ok();
}

constexpr ConverterEntry recurrent_ops[] = {
    {"GRU", recurrent_layer<ops::RecurrentCell::GRU>},
    {"LSTM", recurrent_layer<ops::RecurrentCell::LSTM>},
    {"RNN", recurrent_layer<ops::RecurrentCell::RNN>},
};

}  // namespace

std::span<const ConverterEntry> recurrent_converters() { return recurrent_ops; }

}  // namespace kiln::onnx::detail
