// SPDX-License-Identifier: Apache-2.0
// Neon Recurrent: the input's products with W for every step in one packed GEMM, then per step the
// hidden states' products with R (a GEMM over the batch, on one thread unless it is large) and the
// cell's equations a vector at a time.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "kiln/backends/neon/simd/gemm.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Deviation from Ref: W, R, B and P must be constants (packed at load); products are summed in
/// float lanes where Ref sums in double, so results differ by a few ulps a step.
template <>
struct Kernel<ops::Recurrent, DataType::Float32> : Float32Kernel<ops::Recurrent> {
  using R = ops::Recurrent;

  static Status is_supported(const WorkloadInfo<R>& info) {
    // infer() made every input but the lengths X's type.
    if (info.inputs[R::X].type != DataType::Float32)
      return Status::error(ErrorCode::Unsupported, "runs Recurrent on Float32 tensors only; X is ",
                           to_string(info.inputs[R::X].type));
    for (std::size_t i : {R::W, R::R, R::B, R::Peepholes})
      if (i < info.inputs.size() && info.constants[i] == nullptr)
        return Status::error(ErrorCode::Unsupported, "packs Recurrent's W, R, B and P at load, so input ", i,
                             " must be a constant");
    return Status::ok();
  }

  explicit Kernel(const WorkloadInfo<R>& info)
      : Float32Kernel(info), layout_(info.params, info.inputs[R::X].shape), input_size_(info.inputs[R::X].shape[2]) {
    const std::size_t h = layout_.hidden, gated = R::gates(params_.cell) * h;
    const auto* w = static_cast<const float*>(info.constants[R::W]);
    const auto* r = static_cast<const float*>(info.constants[R::R]);
    const auto* b = info.inputs.size() > R::B ? static_cast<const float*>(info.constants[R::B]) : nullptr;
    const auto* p =
        info.inputs.size() > R::Peepholes ? static_cast<const float*>(info.constants[R::Peepholes]) : nullptr;
    const bool gru = params_.cell == ops::RecurrentCell::GRU;
    std::vector<float> input_bias(gated, 0.0f);
    for (std::size_t d = 0; d < layout_.directions; ++d) {
      Direction& direction = directions_.emplace_back();
      // Both biases go with the input's products, but for a GRU that resets after the hidden gate's
      // recurrent product: that product's bias is inside the reset (with the packed R).
      const float* wb = b ? b + d * 2 * gated : nullptr;
      for (std::size_t j = 0; j < gated; ++j)
        input_bias[j] = wb ? wb[j] + (gru && params_.linear_before_reset && j >= 2 * h ? 0.0f : wb[gated + j]) : 0.0f;
      direction.input = PackedWeights(w + d * gated * input_size_, input_bias.data(), 1, gated, input_size_);
      const float* rd = r + d * gated * h;
      if (gru) {
        // z and r multiply H; the hidden gate multiplies r (.) H unless it resets after.
        direction.recurrent = PackedWeights(rd, nullptr, 1, 2 * h, h);
        direction.hidden =
            PackedWeights(rd + 2 * h * h, params_.linear_before_reset && wb ? wb + gated + 2 * h : nullptr, 1, h, h);
      } else {
        direction.recurrent = PackedWeights(rd, nullptr, 1, gated, h);
      }
      if (p) direction.peepholes.assign(p + d * 3 * h, p + (d + 1) * 3 * h);
      for (std::size_t f = 0; f < R::functions_per_direction(params_.cell); ++f)
        direction.activations[f] = R::activation(params_, d, f);
    }
  }

  /// Every step's input products, the batch's gates of one step, and the states h, c and a third
  /// row for r (.) H or tanh(c).
  ScratchSize scratch(const Context&) const {
    const std::uint64_t gated = R::gates(params_.cell) * std::uint64_t{layout_.hidden};
    const std::uint64_t rows = std::uint64_t{layout_.seq} * layout_.batch;
    return {((rows + layout_.batch) * gated + 3 * std::uint64_t{layout_.batch} * layout_.hidden) * sizeof(float), 64};
  }

  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
             std::span<std::byte> scratch) const {
    const std::span<const std::int32_t> lengths =
        in.size() > R::SequenceLengths ? in[R::SequenceLengths].as<std::int32_t>() : std::span<const std::int32_t>{};
    if (auto s = R::check_lengths(lengths, layout_.seq); !s) return s;
    const std::size_t h = layout_.hidden, batch = layout_.batch, gated = R::gates(params_.cell) * h;
    auto length = [&](std::size_t b) { return lengths.empty() ? layout_.seq : static_cast<std::uint32_t>(lengths[b]); };
    std::uint32_t longest = 0;
    for (std::size_t b = 0; b < batch; ++b) longest = std::max(longest, length(b));

    float* const projected = reinterpret_cast<float*>(scratch.data());
    float* const gates = projected + std::size_t{layout_.seq} * batch * gated;
    float* const state = gates + batch * gated;
    float* const cell = state + batch * h;
    float* const extra = cell + batch * h;
    float* const y = floats(out[0]);
    std::memset(y, 0, out[0].info.num_elements() * sizeof(float));
    auto optional = [&](std::size_t i) { return in.size() > i ? floats(in[i]) : nullptr; };
    const float *initial_h = optional(R::InitialH), *initial_c = optional(R::InitialC);

    for (std::size_t d = 0; d < layout_.directions; ++d) {
      const Direction& direction = directions_[d];
      const bool reverse = params_.direction == ops::RecurrentDirection::Reverse || d == 1;
      gemm(context, DenseRows{floats(in[R::X]), input_size_}, std::size_t{layout_.seq} * batch, direction.input,
           projected, gated, {}, {});
      for (std::size_t b = 0; b < batch; ++b) {
        const std::size_t from = layout_.state_row(d, b) * h;
        for (std::size_t j = 0; j < h; ++j) {
          state[b * h + j] = initial_h ? initial_h[from + j] : 0.0f;
          cell[b * h + j] = initial_c ? initial_c[from + j] : 0.0f;
        }
      }
      for (std::uint32_t s = 0; s < longest; ++s) {
        // Step s of batch entry b reads step t of its sequence; entries already at their end keep their state.
        auto step_of = [&](std::size_t b) { return reverse ? length(b) - 1 - s : s; };
        auto active = [&](std::size_t b) { return s < length(b); };
        step_product(context, state, direction.recurrent, gates, gated);
        for (std::size_t b = 0; b < batch; ++b) {
          if (!active(b)) continue;
          add(gates + b * gated, projected + layout_.x_row(step_of(b), b) * gated, direction.recurrent.n());
        }
        if (params_.cell == ops::RecurrentCell::GRU)
          gru_hidden_gate(context, direction, state, gates, extra, projected, active, step_of);
        for (std::size_t b = 0; b < batch; ++b) {
          if (!active(b)) continue;
          float* g = gates + b * gated;
          float *hb = state + b * h, *cb = cell + b * h;
          switch (params_.cell) {
            case ops::RecurrentCell::RNN:
              activate_in_place(direction.activations[0], g, h);
              std::memcpy(hb, g, h * sizeof(float));
              break;
            case ops::RecurrentCell::GRU: gru_update(g, hb, h); break;
            case ops::RecurrentCell::LSTM: lstm_update(direction, g, hb, cb, extra + b * h, h); break;
          }
          std::memcpy(y + layout_.y_row(step_of(b), d, b) * h, hb, h * sizeof(float));
        }
      }
      for (std::size_t b = 0; b < batch; ++b) {
        const std::size_t to = layout_.state_row(d, b) * h;
        std::memcpy(floats(out[1]) + to, state + b * h, h * sizeof(float));
        if (out.size() > 2) std::memcpy(floats(out[2]) + to, cell + b * h, h * sizeof(float));
      }
    }
    return Status::ok();
  }

 private:
  struct Direction {
    PackedWeights input, recurrent, hidden;
    std::vector<float> peepholes;
    std::array<ops::Activation::Params, 3> activations;
  };

  /// A step's products of the batch's rows (`hidden` values each) by packed R, into c (row stride
  /// ldc): on this thread unless a step holds enough work to share, since every step waits for the
  /// one before (a keyword spotter's 16K multiply-adds a step would meet the threads 49 times for
  /// a microsecond of work each).
  void step_product(Context& context, const float* rows, const PackedWeights& r, float* c, std::size_t ldc) const {
    constexpr std::size_t shared_work = std::size_t{1} << 18;
    const std::size_t batch = layout_.batch;
    if (batch == 1 && r.n() * r.k() < shared_work)
      gemv_on_this_thread(rows, r, c);
    else if (batch * r.n() * r.k() < shared_work)
      gemm_on_this_thread(DenseRows{rows, layout_.hidden}, batch, r, 0, c, ldc, {});
    else
      gemm(context, DenseRows{rows, layout_.hidden}, batch, r, c, ldc, {}, {});
  }

  /// x[i] += addend[i].
  static void add(float* x, const float* addend, std::size_t n) {
    for (std::size_t i = 0; i < n; i += lanes) {
      const std::size_t count = std::min(lanes, n - i);
      store_upto(x + i, load_upto(x + i, count) + load_upto(addend + i, count), count);
    }
  }

  /// x = activation(clip(x)) over n floats.
  void activate_in_place(const ops::Activation::Params& activation, float* x, std::size_t n) const {
    if (params_.clip) {
      const Vec limit(*params_.clip);
      map(x, x, n, [&](Vec v) { return clamp_lanes(v, -limit, limit); });
    }
    visit_activation(activation, [&](auto f) { map(x, x, n, f); });
  }

  /// The hidden gate's recurrent products of a GRU step, into each active entry's gates [2h, 3h):
  /// with r (.) H, or with H when the reset comes after (then times r). Activates z and r first.
  template <class Active, class StepOf>
  void gru_hidden_gate(Context& context, const Direction& direction, const float* state, float* gates, float* reset,
                       const float* projected, Active active, StepOf step_of) const {
    const std::size_t h = layout_.hidden, batch = layout_.batch, gated = 3 * h;
    for (std::size_t b = 0; b < batch; ++b) {
      if (!active(b)) continue;
      activate_in_place(direction.activations[0], gates + b * gated, 2 * h);
      if (!params_.linear_before_reset)
        for (std::size_t j = 0; j < h; ++j) reset[b * h + j] = gates[b * gated + h + j] * state[b * h + j];
    }
    step_product(context, params_.linear_before_reset ? state : reset, direction.hidden, gates + 2 * h, gated);
    for (std::size_t b = 0; b < batch; ++b) {
      if (!active(b)) continue;
      float* g = gates + b * gated;
      const float* input_part = projected + layout_.x_row(step_of(b), b) * gated + 2 * h;
      for (std::size_t i = 0; i < h; i += lanes) {
        const std::size_t count = std::min(lanes, h - i);
        Vec recurrent = load_upto(g + 2 * h + i, count);
        if (params_.linear_before_reset) recurrent *= load_upto(g + h + i, count);
        store_upto(g + 2 * h + i, load_upto(input_part + i, count) + recurrent, count);
      }
      activate_in_place(direction.activations[1], g + 2 * h, h);
    }
  }

  /// H = (1 - z) (.) candidate + z (.) H, from the activated gates z, r, candidate.
  static void gru_update(const float* g, float* state, std::size_t h) {
    for (std::size_t i = 0; i < h; i += lanes) {
      const std::size_t count = std::min(lanes, h - i);
      const Vec z = load_upto(g + i, count), candidate = load_upto(g + 2 * h + i, count);
      store_upto(state + i, multiply_add(z, load_upto(state + i, count) - candidate, candidate), count);
    }
  }

  /// One LSTM step of a batch entry from its gate pre-activations g (i, o, f, c): the peepholes
  /// added, the gates activated, the cell state and then the hidden state updated.
  void lstm_update(const Direction& direction, float* g, float* state, float* cell, float* squashed,
                   std::size_t h) const {
    float *i_gate = g, *o_gate = g + h, *f_gate = g + 2 * h, *c_gate = g + 3 * h;
    const float* p = direction.peepholes.empty() ? nullptr : direction.peepholes.data();
    const auto& [f, activation_g, activation_h] = direction.activations;
    if (p) {
      for (std::size_t j = 0; j < h; ++j) {
        i_gate[j] += p[j] * cell[j];
        f_gate[j] += p[2 * h + j] * cell[j];
      }
    }
    activate_in_place(f, i_gate, h);
    if (params_.input_forget)
      for (std::size_t j = 0; j < h; ++j) f_gate[j] = 1.0f - i_gate[j];
    else
      activate_in_place(f, f_gate, h);
    activate_in_place(activation_g, c_gate, h);
    for (std::size_t i = 0; i < h; i += lanes) {
      const std::size_t count = std::min(lanes, h - i);
      const Vec c = load_upto(f_gate + i, count) * load_upto(cell + i, count);
      store_upto(cell + i, multiply_add(load_upto(i_gate + i, count), load_upto(c_gate + i, count), c), count);
    }
    if (p)
      for (std::size_t j = 0; j < h; ++j) o_gate[j] += p[h + j] * cell[j];
    activate_in_place(f, o_gate, h);
    std::memcpy(squashed, cell, h * sizeof(float));
    activate_in_place(activation_h, squashed, h);
    for (std::size_t i = 0; i < h; i += lanes) {
      const std::size_t count = std::min(lanes, h - i);
      store_upto(state + i, load_upto(o_gate + i, count) * load_upto(squashed + i, count), count);
    }
  }

  R::Layout layout_;
  std::size_t input_size_;
  std::vector<Direction> directions_;  // on the heap: a kernel object is moved around at load
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
