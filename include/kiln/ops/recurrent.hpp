// SPDX-License-Identifier: Apache-2.0
// Recurrent: a sequence through an LSTM, GRU or simple RNN layer, forward, reverse or both ways.
#pragma once

#include <optional>
#include <string_view>

#include "kiln/ops/activation.hpp"

namespace kiln::ops {

/// The cell a Recurrent layer steps, with its gates in ONNX's order.
enum class RecurrentCell : std::uint8_t {
  RNN,   ///< one gate:  H = f(X W^T + H R^T + Wb + Rb)
  GRU,   ///< gates z, r, h (update, reset, hidden)
  LSTM,  ///< gates i, o, f, c (input, output, forget, cell)
};

enum class RecurrentDirection : std::uint8_t { Forward, Reverse, Bidirectional };

constexpr std::string_view to_string(RecurrentCell c) noexcept {
  constexpr std::string_view names[] = {"RNN", "GRU", "LSTM"};
  return names[static_cast<std::size_t>(c)];
}
constexpr std::string_view to_string(RecurrentDirection d) noexcept {
  constexpr std::string_view names[] = {"forward", "reverse", "bidirectional"};
  return names[static_cast<std::size_t>(d)];
}

/// A recurrent layer over a whole sequence (ONNX LSTM, GRU and RNN, opset 14; PyTorch's nn.LSTM,
/// nn.GRU and nn.RNN; Arm NN's UnidirectionalSequenceLstm).
///
/// Inputs, in ONNX's order, the first three required: X, the sequence, [seq, batch, input]
/// ([batch, seq, input] when `batch_major`, ONNX layout 1); W [directions, gates * hidden, input];
/// R [directions, gates * hidden, hidden]; B [directions, 2 * gates * hidden], W's biases then R's
/// (zero when absent); sequence_lens [batch], Signed32, each batch entry's length (all `seq` when
/// absent); initial_h [directions, batch, hidden] (zero when absent); initial_c, LSTM only, shaped
/// as initial_h; P [directions, 3 * hidden], LSTM only, the peephole weights of gates i, o, f.
/// An input after an absent one must be given (as zeros, or full lengths).
///
/// Outputs: Y [seq, directions, batch, hidden] ([batch, seq, directions, hidden] when batch_major),
/// every step's hidden state, zero past a batch entry's length; Y_h, the last hidden state of each
/// direction, shaped as initial_h; LSTM also Y_c, the last cell state. The reverse direction of
/// a batch entry of length L reads its steps L - 1 down to 0.
///
/// Each direction applies `activations.size() / directions` functions (f, g, h for LSTM; f, g for
/// GRU; f for RNN; the forward direction's first), by default Sigmoid, Tanh, Tanh. With `clip`, the
/// input of every activation is clipped to [-clip, clip]. `input_forget` (LSTM) makes the forget
/// gate 1 - i; `linear_before_reset` (GRU) applies the reset gate after the hidden gate's
/// recurrent product and its bias (PyTorch's GRU) instead of before it.
struct Recurrent {
  static constexpr std::string_view name = "Recurrent";
  static constexpr Arity arity{3, 8};
  static constexpr std::size_t max_activations = 6;
  struct Params {
    RecurrentCell cell = RecurrentCell::LSTM;
    RecurrentDirection direction = RecurrentDirection::Forward;
    std::uint32_t hidden_size = 0;
    bool batch_major = false;
    bool input_forget = false;
    bool linear_before_reset = false;
    std::optional<float> clip;
    /// Empty: each cell's defaults.
    InlineVector<Activation::Params, max_activations> activations;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  static constexpr std::size_t gates(RecurrentCell c) {
    return c == RecurrentCell::LSTM ? 4 : c == RecurrentCell::GRU ? 3 : 1;
  }
  static constexpr std::size_t functions_per_direction(RecurrentCell c) {
    return c == RecurrentCell::LSTM ? 3 : c == RecurrentCell::GRU ? 2 : 1;
  }
  static constexpr std::size_t directions(const Params& p) {
    return p.direction == RecurrentDirection::Bidirectional ? 2 : 1;
  }
  static constexpr std::size_t num_outputs(const Params& p) { return p.cell == RecurrentCell::LSTM ? 3 : 2; }

  /// Activation `which` (0 for f, 1 for g, 2 for h) of direction `d` (0 forward, 1 reverse).
  static constexpr Activation::Params activation(const Params& p, std::size_t d, std::size_t which) {
    if (!p.activations.empty()) return p.activations[d * functions_per_direction(p.cell) + which];
    const bool gate = which == 0 && p.cell != RecurrentCell::RNN;
    return {gate ? ActivationFunction::Sigmoid : ActivationFunction::Tanh, 0.0f, 0.0f};
  }

  /// Where a step's rows lie in X, Y and the states, for a layer of `p` on X of shape `x`.
  struct Layout {
    std::uint32_t seq, batch, hidden;
    std::size_t directions;
    bool batch_major;
    constexpr Layout(const Params& p, const TensorShape& x)
        : seq(x[p.batch_major ? 1 : 0]),
          batch(x[p.batch_major ? 0 : 1]),
          hidden(p.hidden_size),
          directions(Recurrent::directions(p)),
          batch_major(p.batch_major) {}
    /// X's row (of input_size values) of step t of batch entry b.
    constexpr std::uint64_t x_row(std::uint64_t t, std::uint64_t b) const {
      return batch_major ? b * seq + t : t * batch + b;
    }
    /// Y's row (of hidden values) of step t, direction d, batch entry b.
    constexpr std::uint64_t y_row(std::uint64_t t, std::uint64_t d, std::uint64_t b) const {
      return batch_major ? (b * seq + t) * directions + d : (t * directions + d) * batch + b;
    }
    /// The row of a state (initial_h, initial_c, Y_h, Y_c) of direction d, batch entry b.
    constexpr std::uint64_t state_row(std::uint64_t d, std::uint64_t b) const {
      return batch_major ? b * directions + d : d * batch + b;
    }
  };

  /// Fails unless every sequence length lies in [0, seq]: checked at run, where the lengths are known.
  static Status check_lengths(std::span<const std::int32_t> lengths, std::uint32_t seq) {
    for (std::size_t b = 0; b < lengths.size(); ++b)
      if (lengths[b] < 0 || static_cast<std::uint32_t>(lengths[b]) > seq)
        return Status::error(ErrorCode::InvalidArgument, "sequence_lens[", b, "] is ", lengths[b],
                             "; it must lie between 0 and the sequence length ", seq);
    return Status::ok();
  }

  /// Position of each input.
  enum Input : std::size_t { X, W, R, B, SequenceLengths, InitialH, InitialC, Peepholes };

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    const bool lstm = p.cell == RecurrentCell::LSTM;
    if (!lstm && in.size() > InitialC)
      return detail::invalid("a ", to_string(p.cell),
                             " layer takes at most 6 inputs (initial_c and P are LSTM's), got ", in.size());
    if (p.input_forget && !lstm) return detail::invalid("input_forget applies to LSTM only");
    if (p.linear_before_reset && p.cell != RecurrentCell::GRU)
      return detail::invalid("linear_before_reset applies to GRU only");
    if (p.hidden_size == 0) return detail::invalid("hidden_size must be at least 1");
    if (p.clip && !(*p.clip > 0.0f)) return detail::invalid("clip must be positive, got ", *p.clip);
    if (auto s = detail::require_fits(p.activations, "activations"); !s) return s;
    const std::size_t dirs = directions(p), per_direction = functions_per_direction(p.cell);
    if (!p.activations.empty() && p.activations.size() != dirs * per_direction)
      return detail::invalid("a ", to_string(p.direction), ' ', to_string(p.cell), " layer takes ",
                             dirs * per_direction, " activations, got ", p.activations.size());
    for (const Activation::Params& a : p.activations)
      if (auto s = Activation::validate(a); !s) return s;
    if (auto s = detail::expect_rank(in, X, "X", 3); !s) return s;
    const std::uint32_t seq = in[X].shape[p.batch_major ? 1 : 0], batch = in[X].shape[p.batch_major ? 0 : 1];
    const std::uint32_t input_size = in[X].shape[2], h = p.hidden_size;
    const auto gated = static_cast<std::uint32_t>(gates(p.cell) * h), d = static_cast<std::uint32_t>(dirs);
    const TensorShape state = p.batch_major ? TensorShape{batch, d, h} : TensorShape{d, batch, h};
    struct Operand {
      Input input;
      std::string_view role;
      TensorShape shape;
    };
    const Operand operands[] = {{W, "W", {d, gated, input_size}}, {R, "R", {d, gated, h}},
                                {B, "B", {d, 2 * gated}},         {SequenceLengths, "sequence_lens", {batch}},
                                {InitialH, "initial_h", state},   {InitialC, "initial_c", state},
                                {Peepholes, "P", {d, 3 * h}}};
    for (const Operand& e : operands) {
      if (e.input >= in.size()) break;
      if (e.input == SequenceLengths) {
        if (in[e.input].type != DataType::Signed32)
          return detail::invalid("input 4 (sequence_lens) must be Signed32, got ", to_string(in[e.input].type));
      } else if (auto s = detail::expect_same_type(in, X, e.input); !s) {
        return s;
      }
      if (in[e.input].shape != e.shape)
        return detail::invalid("input ", std::size_t{e.input}, " (", e.role, ") has shape ",
                               in[e.input].shape.to_string(), "; a ", to_string(p.direction), ' ', to_string(p.cell),
                               " of hidden size ", h, " on X of shape ", in[X].shape.to_string(), " needs ",
                               e.shape.to_string());
    }
    const TensorShape y = p.batch_major ? TensorShape{batch, seq, d, h} : TensorShape{seq, d, batch, h};
    out[0] = TensorInfo{y, in[X].type, {}};
    for (std::size_t o = 1; o < num_outputs(p); ++o) out[o] = TensorInfo{state, in[X].type, {}};
    return Status::ok();
  }
};

}  // namespace kiln::ops
