// SPDX-License-Identifier: Apache-2.0
// Reference Recurrent: each direction and batch entry stepped on its own, every gate's products
// summed in double precision, the cell's equations as ONNX writes them.
#pragma once

#include <algorithm>
#include <utility>

#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

template <>
struct Workload<ops::Recurrent, RefBackend, DataType::Float32> : ref::Float32Kernel<ops::Recurrent> {
  using Float32Kernel::Float32Kernel;
  using R = ops::Recurrent;

  /// Float32 everywhere but the sequence lengths.
  static Status is_supported(const WorkloadInfo<R>& info) {
    for (std::size_t i = 0; i < info.inputs.size(); ++i)
      if (i != R::SequenceLengths && info.inputs[i].type != DataType::Float32)
        return Status::error(ErrorCode::Unsupported, "runs Recurrent on Float32 tensors only; input ", i, " is ",
                             to_string(info.inputs[i].type));
    return Status::ok();
  }

  /// The states and each step's gate pre-activations: 5 + 2 * gates rows of hidden_size floats.
  ScratchSize scratch(const ref::Context&) const {
    return {(5 + 2 * R::gates(params_.cell)) * std::uint64_t{params_.hidden_size} * sizeof(float), alignof(float)};
  }

  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, ref::Context&,
             std::span<std::byte> scratch) const {
    const R::Layout layout(params_, in[R::X].info.shape);
    const std::uint32_t h = params_.hidden_size, input_size = in[R::X].info.shape[2];
    const std::size_t gates = R::gates(params_.cell);
    const std::span<const std::int32_t> lengths =
        in.size() > R::SequenceLengths ? in[R::SequenceLengths].as<std::int32_t>() : std::span<const std::int32_t>{};
    if (auto s = R::check_lengths(lengths, layout.seq); !s) return s;
    auto optional = [&](std::size_t i) { return in.size() > i ? ref::floats(in[i]) : nullptr; };
    const float *x = ref::floats(in[R::X]), *bias = optional(R::B), *initial_h = optional(R::InitialH),
                *initial_c = optional(R::InitialC), *peepholes = optional(R::Peepholes);
    float* y = ref::floats(out[0]);
    std::fill_n(y, out[0].info.num_elements(), 0.0f);

    float* const rows = reinterpret_cast<float*>(scratch.data());
    float *state = rows, *cell = rows + h, *next = rows + 2 * h, *update = rows + 3 * h, *reset_state = rows + 4 * h;
    float *input_part = rows + 5 * h, *recurrent_part = input_part + gates * h;
    for (std::size_t d = 0; d < layout.directions; ++d) {
      const float* w = ref::floats(in[R::W]) + d * gates * h * input_size;
      const float* r = ref::floats(in[R::R]) + d * gates * h * h;
      const float* wb = bias ? bias + d * 2 * gates * h : nullptr;
      const float* rb = bias ? wb + gates * h : nullptr;
      const float* p = peepholes ? peepholes + d * 3 * h : nullptr;
      const bool reverse = params_.direction == ops::RecurrentDirection::Reverse || d == 1;
      auto activation = [&](std::size_t which, float v) {
        if (params_.clip) v = std::clamp(v, -*params_.clip, *params_.clip);
        return ops::Activation::apply(R::activation(params_, d, which), v);
      };
      // result[j] = matrix row j . v + b[j], for the first `count` rows of a [*, n] matrix.
      auto products = [](const float* matrix, const float* b, const float* v, std::size_t n, std::size_t count,
                         float* result) {
        for (std::size_t j = 0; j < count; ++j) {
          double sum = b ? b[j] : 0.0;
          for (std::size_t k = 0; k < n; ++k) sum += double(matrix[j * n + k]) * v[k];
          result[j] = static_cast<float>(sum);
        }
      };
      for (std::uint32_t b = 0; b < layout.batch; ++b) {
        const std::uint64_t state_at = layout.state_row(d, b) * h;
        for (std::uint32_t j = 0; j < h; ++j) {
          state[j] = initial_h ? initial_h[state_at + j] : 0.0f;
          cell[j] = initial_c ? initial_c[state_at + j] : 0.0f;
        }
        const auto length = lengths.empty() ? layout.seq : static_cast<std::uint32_t>(lengths[b]);
        for (std::uint32_t s = 0; s < length; ++s) {
          const std::uint32_t t = reverse ? length - 1 - s : s;
          products(w, wb, x + layout.x_row(t, b) * input_size, input_size, gates * h, input_part);
          products(r, rb, state, h, gates * h, recurrent_part);
          auto pre = [&](std::size_t gate, std::uint32_t j) {
            return input_part[gate * h + j] + recurrent_part[gate * h + j];
          };
          switch (params_.cell) {
            case ops::RecurrentCell::RNN:
              for (std::uint32_t j = 0; j < h; ++j) next[j] = activation(0, pre(0, j));
              break;
            case ops::RecurrentCell::GRU: {
              enum { Z, Reset, Hidden };
              for (std::uint32_t j = 0; j < h; ++j) {
                update[j] = activation(0, pre(Z, j));
                reset_state[j] = activation(0, pre(Reset, j));
              }
              if (!params_.linear_before_reset) {
                // The hidden gate's recurrent product takes r (.) H, not H.
                for (std::uint32_t j = 0; j < h; ++j) reset_state[j] *= state[j];
                products(r + Hidden * h * h, rb ? rb + Hidden * h : nullptr, reset_state, h, h,
                         recurrent_part + Hidden * h);
              }
              for (std::uint32_t j = 0; j < h; ++j) {
                const float recurrent = params_.linear_before_reset ? reset_state[j] * recurrent_part[Hidden * h + j]
                                                                    : recurrent_part[Hidden * h + j];
                const float candidate = activation(1, input_part[Hidden * h + j] + recurrent);
                next[j] = (1.0f - update[j]) * candidate + update[j] * state[j];
              }
              break;
            }
            case ops::RecurrentCell::LSTM: {
              enum { I, O, F, C };
              for (std::uint32_t j = 0; j < h; ++j) {
                const float input_gate = activation(0, pre(I, j) + (p ? p[j] * cell[j] : 0.0f));
                const float forget_gate = params_.input_forget
                                              ? 1.0f - input_gate
                                              : activation(0, pre(F, j) + (p ? p[2 * h + j] * cell[j] : 0.0f));
                cell[j] = forget_gate * cell[j] + input_gate * activation(1, pre(C, j));
                const float output_gate = activation(0, pre(O, j) + (p ? p[h + j] * cell[j] : 0.0f));
                next[j] = output_gate * activation(2, cell[j]);
              }
              break;
            }
          }
          std::swap(state, next);
          std::copy_n(state, h, y + layout.y_row(t, d, b) * h);
        }
        std::copy_n(state, h, ref::floats(out[1]) + state_at);
        if (out.size() > 2) std::copy_n(cell, h, ref::floats(out[2]) + state_at);
      }
    }
    return Status::ok();
  }
};

}  // namespace kiln
