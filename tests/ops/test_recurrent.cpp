// SPDX-License-Identifier: Apache-2.0
// Recurrent (LSTM, GRU, RNN): hand-computed steps, PyTorch's nn.LSTM/GRU/RNN (fixtures), the
// accelerated backends against RefBackend on odd sizes and every option, errors.
#include <cmath>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {
using R = ops::Recurrent;
using ops::RecurrentCell;
using ops::RecurrentDirection;

/// Lengths of every batch entry equal to the whole sequence: an input to give when a later one is.
TestTensor full_lengths(std::uint32_t batch, std::uint32_t seq) {
  return TestTensor::i32({batch}, std::vector<std::int32_t>(batch, static_cast<std::int32_t>(seq)));
}
}  // namespace

TEMPLATE_LIST_TEST_CASE("Recurrent: hand-computed RNN and LSTM steps", "[ops][recurrent]", tested_backends) {
  if (!has_own_workload<R, TestType>(DataType::Float32)) {
    SUCCEED(TestType::id << " has no Recurrent workload");
    return;
  }
  // RNN, hidden 1, input 1, W = 0.5, R = 2, biases 0.25 and 0.25, X = [1, -1] in one batch entry:
  // h1 = tanh(0.5 + 0.5) = tanh(1) = 0.7615942; h2 = tanh(-0.5 + 2 * 0.7615942 + 0.5) = tanh(1.5231884)
  // = 0.9092517. Reverse reads -1 first: h1' = tanh(0) = 0, h2' = tanh(0.5 + 0 + 0.5) = 0.7615942,
  // stored at steps 1 and 0.
  const std::vector<TestTensor> rnn{
      TestTensor::f32({2, 1, 1}, {1, -1}), TestTensor::f32({1, 1, 1}, {0.5f}).as_constant(),
      TestTensor::f32({1, 1, 1}, {2}).as_constant(), TestTensor::f32({1, 2}, {0.25f, 0.25f}).as_constant()};
  check_op<R, TestType>(
      {.cell = RecurrentCell::RNN, .hidden_size = 1}, rnn,
      {TestTensor::f32({2, 1, 1, 1}, {0.7615942f, 0.9092517f}), TestTensor::f32({1, 1, 1}, {0.9092517f})}, 1e-6, 1e-6);
  check_op<R, TestType>({.cell = RecurrentCell::RNN, .direction = RecurrentDirection::Reverse, .hidden_size = 1}, rnn,
                        {TestTensor::f32({2, 1, 1, 1}, {0.7615942f, 0.0f}), TestTensor::f32({1, 1, 1}, {0.7615942f})},
                        1e-6, 1e-6);
  // LSTM, hidden 1, all weights 0 but the cell gate's W = 1, one step of x = 2 from c0 = 1, h0 = 0:
  // i = f = o = sigmoid(0) = 0.5, c~ = tanh(2) = 0.9640276, c = 0.5 * 1 + 0.5 * 0.9640276 = 0.9820138,
  // h = 0.5 * tanh(0.9820138) = 0.5 * 0.7539363 = 0.3769682.
  check_op<R, TestType>({.cell = RecurrentCell::LSTM, .hidden_size = 1},
                        {TestTensor::f32({1, 1, 1}, {2}), TestTensor::f32({1, 4, 1}, {0, 0, 0, 1}).as_constant(),
                         TestTensor::f32({1, 4, 1}, {0, 0, 0, 0}).as_constant(),
                         TestTensor::f32({1, 8}, {0, 0, 0, 0, 0, 0, 0, 0}).as_constant(), full_lengths(1, 1),
                         TestTensor::f32({1, 1, 1}, {0}), TestTensor::f32({1, 1, 1}, {1})},
                        {TestTensor::f32({1, 1, 1, 1}, {0.3769682f}), TestTensor::f32({1, 1, 1}, {0.3769682f}),
                         TestTensor::f32({1, 1, 1}, {0.9820138f})},
                        1e-6, 1e-6);
}

TEMPLATE_LIST_TEST_CASE("Recurrent matches PyTorch's LSTM, GRU and RNN", "[ops][recurrent]", tested_backends) {
  if (!has_own_workload<R, TestType>(DataType::Float32)) {
    SUCCEED(TestType::id << " has no Recurrent workload");
    return;
  }
  for (const auto& c : load_fixtures("recurrent")) {
    SECTION(c.name) {
      const auto cell = static_cast<RecurrentCell>(c.i64("cell"));
      const TestTensor& x = c.tensor("x");
      const std::uint32_t hidden = c.tensor("r").info.shape[2];
      const bool batch_major = c.i64("batch_major") != 0, bidirectional = c.i64("bidirectional") != 0;
      R::Params params{.cell = cell,
                       .direction = bidirectional ? RecurrentDirection::Bidirectional : RecurrentDirection::Forward,
                       .hidden_size = hidden,
                       .batch_major = batch_major,
                       .linear_before_reset = cell == RecurrentCell::GRU};
      if (c.i64("relu") != 0)  // ReLU, the default Activation::Params, for each direction
        params.activations = decltype(params.activations)(bidirectional ? 2 : 1, ops::Activation::Params{});
      std::vector<TestTensor> inputs{x, c.tensor("w").as_constant(), c.tensor("r").as_constant(),
                                     c.tensor("b").as_constant()};
      if (c.has("sequence_lens"))
        inputs.push_back(c.tensor("sequence_lens").to_i32());
      else if (c.has("initial_h"))
        inputs.push_back(full_lengths(x.info.shape[batch_major ? 0 : 1], x.info.shape[batch_major ? 1 : 0]));
      if (c.has("initial_h")) inputs.push_back(c.tensor("initial_h"));
      if (c.has("initial_c")) inputs.push_back(c.tensor("initial_c"));
      std::vector<TestTensor> expected{c.tensor("y"), c.tensor("y_h")};
      if (cell == RecurrentCell::LSTM) expected.push_back(c.tensor("y_c"));
      check_op<R, TestType>(params, inputs, expected, 1e-4, 1e-5);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("Recurrent on an accelerated backend matches RefBackend with every option", "[ops][recurrent]",
                        accelerated_backends) {
  if (!has_own_workload<R, TestType>(DataType::Float32)) {
    SUCCEED(TestType::id << " leaves Recurrent to RefBackend");
    return;
  }
  using A = ops::ActivationFunction;
  struct Case {
    RecurrentCell cell;
    RecurrentDirection direction;
    std::uint32_t input, hidden, seq, batch;
    bool batch_major, lengths, states, peepholes;
    R::Params extra;
  };
  const Case cases[] = {
      {RecurrentCell::LSTM, RecurrentDirection::Forward, 7, 17, 5, 3, false, false, false, false, {}},
      {RecurrentCell::LSTM, RecurrentDirection::Bidirectional, 3, 9, 4, 2, true, true, true, true, {}},
      {RecurrentCell::LSTM,
       RecurrentDirection::Reverse,
       10,
       33,
       3,
       5,
       false,
       true,
       true,
       true,
       {.input_forget = true, .clip = 0.75f}},
      {RecurrentCell::GRU, RecurrentDirection::Forward, 5, 1, 6, 1, false, false, false, false, {}},
      // One batch entry: the steps' products as one row (gemv_on_this_thread), panels in groups of four and a partial
      // one.
      {RecurrentCell::LSTM, RecurrentDirection::Forward, 6, 33, 5, 1, false, true, true, true, {}},
      {RecurrentCell::GRU, RecurrentDirection::Bidirectional, 3, 40, 4, 1, true, false, true, false, {}},
      {RecurrentCell::GRU, RecurrentDirection::Bidirectional, 6, 13, 5, 4, true, true, true, false, {}},
      {RecurrentCell::GRU,
       RecurrentDirection::Reverse,
       4,
       20,
       4,
       3,
       false,
       true,
       false,
       false,
       {.linear_before_reset = true, .clip = 1.5f}},
      {RecurrentCell::RNN, RecurrentDirection::Bidirectional, 8, 15, 6, 2, false, true, true, false, {}},
      {RecurrentCell::RNN, RecurrentDirection::Forward, 2, 64, 7, 3, true, false, true, false, {}},
  };
  std::uint32_t seed = 1;
  for (const Case& k : cases) {
    const std::uint32_t dirs = k.direction == RecurrentDirection::Bidirectional ? 2 : 1;
    const std::uint32_t gated = static_cast<std::uint32_t>(R::gates(k.cell)) * k.hidden;
    R::Params params = k.extra;
    params.cell = k.cell, params.direction = k.direction, params.hidden_size = k.hidden,
    params.batch_major = k.batch_major;
    // Functions other than the defaults in one case of each cell with two directions.
    if (k.direction == RecurrentDirection::Bidirectional) {
      const ops::Activation::Params hard{A::HardSigmoid, 0.3f, 0.4f}, leaky{A::LeakyReLU, 0.1f, 0.0f},
          soft{A::Softsign, 0.0f, 0.0f}, tanh{A::Tanh, 0.0f, 0.0f}, sigmoid{A::Sigmoid, 0.0f, 0.0f};
      if (k.cell == RecurrentCell::LSTM) params.activations = {hard, leaky, soft, sigmoid, tanh, tanh};
      if (k.cell == RecurrentCell::GRU) params.activations = {hard, soft, sigmoid, leaky};
      if (k.cell == RecurrentCell::RNN) params.activations = {leaky, soft};
    }
    const TensorShape xs = k.batch_major ? TensorShape{k.batch, k.seq, k.input} : TensorShape{k.seq, k.batch, k.input};
    const TensorShape state =
        k.batch_major ? TensorShape{k.batch, dirs, k.hidden} : TensorShape{dirs, k.batch, k.hidden};
    std::vector<TestTensor> inputs{random_f32(xs, seed++, -2.0f, 2.0f),
                                   random_f32({dirs, gated, k.input}, seed++, -0.6f, 0.6f).as_constant(),
                                   random_f32({dirs, gated, k.hidden}, seed++, -0.6f, 0.6f).as_constant(),
                                   random_f32({dirs, 2 * gated}, seed++).as_constant()};
    if (k.lengths || k.states) {
      std::vector<std::int32_t> lengths(k.batch, static_cast<std::int32_t>(k.seq));
      // Entries that end early, one of them before its first step.
      if (k.lengths)
        for (std::uint32_t b = 0; b < k.batch; ++b)
          lengths[b] = static_cast<std::int32_t>((k.seq + 2 * b) % (k.seq + 1));
      inputs.push_back(TestTensor::i32({k.batch}, lengths));
    }
    if (k.states) inputs.push_back(random_f32(state, seed++));
    if (k.states && k.cell == RecurrentCell::LSTM) inputs.push_back(random_f32(state, seed++));
    if (k.peepholes) inputs.push_back(random_f32({dirs, 3 * k.hidden}, seed++).as_constant());
    INFO(to_string(k.cell) << ' ' << to_string(k.direction) << ", input " << k.input << ", hidden " << k.hidden
                           << ", seq " << k.seq << ", batch " << k.batch);
    check_against_ref<R, TestType>(params, inputs, 1e-4, 1e-5);
  }
}

TEST_CASE("Recurrent refuses weights of another shape, bad options and lengths out of range",
          "[ops][recurrent][errors]") {
  const TestTensor x = random_f32({3, 2, 4}, 1), w = random_f32({1, 20, 4}, 2), r = random_f32({1, 20, 5}, 3);
  const R::Params lstm{.cell = RecurrentCell::LSTM, .hidden_size = 5};
  auto wrong_r = run_op<R>(lstm, {x, w, random_f32({1, 20, 4}, 3)});
  REQUIRE_FALSE(wrong_r);
  CHECK_THAT(wrong_r.status().message(),
             Catch::Contains("input 2 (R) has shape [1, 20, 4]; a forward LSTM of hidden size 5 on X of shape "
                             "[3, 2, 4] needs [1, 20, 5]"));
  auto gru_weights = run_op<R>({.cell = RecurrentCell::GRU, .hidden_size = 5}, {x, w, r});
  REQUIRE_FALSE(gru_weights);
  CHECK_THAT(gru_weights.status().message(), Catch::Contains("needs [1, 15, 4]"));
  auto activations = run_op<R>({.cell = RecurrentCell::LSTM, .hidden_size = 5, .activations = {{}, {}}}, {x, w, r});
  REQUIRE_FALSE(activations);
  CHECK_THAT(activations.status().message(), Catch::Contains("a forward LSTM layer takes 3 activations, got 2"));
  auto forget = run_op<R>({.cell = RecurrentCell::GRU, .hidden_size = 5, .input_forget = true},
                          {x, random_f32({1, 15, 4}, 2), random_f32({1, 15, 5}, 3)});
  REQUIRE_FALSE(forget);
  CHECK_THAT(forget.status().message(), Catch::Contains("input_forget applies to LSTM only"));
  auto lengths_type = run_op<R>(lstm, {x, w, r, random_f32({1, 40}, 4), random_f32({2}, 5)});
  REQUIRE_FALSE(lengths_type);
  CHECK_THAT(lengths_type.status().message(), Catch::Contains("input 4 (sequence_lens) must be Signed32, got Float32"));
  auto too_long = run_op<R>(lstm, {x, w, r, random_f32({1, 40}, 4), TestTensor::i32({2}, {3, 4})});
  REQUIRE_FALSE(too_long);
  CHECK_THAT(too_long.status().message(),
             Catch::Contains("sequence_lens[1] is 4; it must lie between 0 and the sequence length 3"));
}
