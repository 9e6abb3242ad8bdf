// SPDX-License-Identifier: Apache-2.0
// ADD, SUB and MUL (numpy broadcasting, a fused activation), and the activations LOGISTIC, TANH,
// RELU, RELU6, LEAKY_RELU and HARD_SWISH.
#include "importer.hpp"

namespace kiln::tflite::detail {
namespace {

template <class Options>
Status convert_binary(Importer& im, ops::BinaryOperation operation) {
  auto options = im.options<Options>();
  if (!options) return options.status();
  auto a = im.input(0);
  if (!a) return a.status();
  auto b = im.input(1);
  if (!b) return b.status();
  auto activation = im.fused((*options)->fused_activation_function());
  if (!activation) return activation.status();
  const Held inputs[] = {*a, *b};
  return im.add_as_output<ops::ElementwiseBinary>({operation, *activation}, inputs);
}

Status convert_activation(Importer& im, ops::Activation::Params params) {
  auto x = im.input(0);
  if (!x) return x.status();
  return im.add_as_output<ops::Activation>(params, std::span(&*x, 1));
}

}  // namespace

Status convert_add(Importer& im) { return convert_binary<format::AddOptions>(im, ops::BinaryOperation::Add); }
Status convert_sub(Importer& im) { return convert_binary<format::SubOptions>(im, ops::BinaryOperation::Sub); }
Status convert_mul(Importer& im) { return convert_binary<format::MulOptions>(im, ops::BinaryOperation::Mul); }

Status convert_logistic(Importer& im) { return convert_activation(im, {ops::ActivationFunction::Sigmoid}); }
Status convert_tanh(Importer& im) { return convert_activation(im, {ops::ActivationFunction::Tanh}); }
Status convert_relu(Importer& im) { return convert_activation(im, {ops::ActivationFunction::ReLU}); }
Status convert_relu6(Importer& im) {
  return convert_activation(im, {ops::ActivationFunction::BoundedReLU, 6.0f, 0.0f});
}
Status convert_hard_swish(Importer& im) { return convert_activation(im, {ops::ActivationFunction::HardSwish}); }
Status convert_leaky_relu(Importer& im) {
  auto options = im.options<format::LeakyReluOptions>();
  if (!options) return options.status();
  return convert_activation(im, {ops::ActivationFunction::LeakyReLU, (*options)->alpha()});
}

}  // namespace kiln::tflite::detail
