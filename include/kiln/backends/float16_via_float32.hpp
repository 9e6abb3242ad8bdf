// SPDX-License-Identifier: Apache-2.0
// Float16 layers run by a backend's Float32 workload: Float16 storage, Float32 arithmetic
// (decision 0019). Inputs are widened to Float32 in the workload's scratch, constants once at load,
// and the Float32 results are rounded to the nearest Float16 (ties to even).
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "kiln/backends/workload.hpp"
#include "kiln/core/half.hpp"

namespace kiln {

namespace detail {

/// `info` as the Float32 workload sees it: a Float16 tensor becomes a Float32 one of the same shape.
inline TensorInfo widened(TensorInfo info) {
  if (info.type == DataType::Float16) info.type = DataType::Float32;
  return info;
}

/// The largest number of inputs or outputs a widened layer may have: run() keeps its tensors in
/// fixed arrays, since inference allocates nothing.
inline constexpr std::size_t max_widened_tensors = 8;

/// Whether a Float32 workload W declares how many of its first inputs it reads at run time.
template <class W>
concept DeclaresInputsReadAtRun = requires {
  { W::inputs_read_at_run } -> std::convertible_to<std::size_t>;
};

template <class W>
struct InputsReadAtRun {
  static constexpr std::size_t inputs_at_run = max_widened_tensors;
};
template <DeclaresInputsReadAtRun W>
struct InputsReadAtRun<W> {
  static constexpr std::size_t inputs_read_at_run = W::inputs_read_at_run;
  static constexpr std::size_t inputs_at_run = W::inputs_read_at_run;
};

inline std::uint64_t round_up(std::uint64_t bytes, std::size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace detail

/// What a Cast layer does on a backend whose conversions are `Halves` (as Float16ViaFloat32's):
/// Float32 to Float16 or back, or a copy when the types agree.
template <class Halves, class Context>
void cast_elements(const ConstTensor& in, const Tensor& out, Context& context) {
  const std::uint64_t n = in.info.num_elements();
  if (in.info.type == out.info.type)
    std::memcpy(out.data, in.data, in.info.num_bytes());
  else if (in.info.type == DataType::Float32)
    Halves::narrow(static_cast<const float*>(in.data), static_cast<Half*>(out.data), n, context);
  else
    Halves::widen(static_cast<const Half*>(in.data), static_cast<float*>(out.data), n, context);
}

/// The Float16 workload of an op whose backend computes it in Float32 with `Float32Workload`.
/// `Halves` converts n elements: `widen(const Half*, float*, n, Context&)` and
/// `narrow(const float*, Half*, n, Context&)`, the latter rounding as float_to_half does.
///
/// Constant Float16 inputs (weights, bias) are widened once when the workload is made; a Float32
/// workload that packs them at load (inputs_read_at_run) gets them only then, and the widened copy
/// is dropped. The other Float16 inputs and the outputs take Float32 buffers in the scratch.
template <class Op, class Float32Workload, class Context, class Halves>
class Float16ViaFloat32 : public detail::InputsReadAtRun<Float32Workload> {
  using Reads = detail::InputsReadAtRun<Float32Workload>;

 public:
  static Status is_supported(const WorkloadInfo<Op>& info) {
    if (info.inputs.size() > detail::max_widened_tensors || info.outputs.size() > detail::max_widened_tensors)
      return Status::error(ErrorCode::Unsupported, "runs ", Op::name, " in Float16 with at most ",
                           detail::max_widened_tensors, " inputs and outputs");
    const Widened widened(info);
    if constexpr (requires { Float32Workload::is_supported(widened.info(info)); })
      return Float32Workload::is_supported(widened.info(info));
    else
      return Status::ok();
  }

  static Expected<Float16ViaFloat32> create(const WorkloadInfo<Op>& info, Context& context) {
    Widened widened(info);
    widened.widen_constants(info, context);
    const WorkloadInfo<Op> float32_info = widened.info(info);
    auto made = [&]() -> Expected<Float32Workload> {
      if constexpr (requires { Float32Workload::create(float32_info, context); })
        return Float32Workload::create(float32_info, context);
      else
        return Float32Workload(float32_info);
    }();
    if (!made) return made.status();
    Float16ViaFloat32 workload(std::move(*made), std::move(widened.constants));
    for (std::size_t i = 0; i < info.inputs.size(); ++i) {
      if (info.inputs[i].type == DataType::Float16 && info.constants[i] == nullptr) {
        workload.widen_input_[i] = true;
        workload.buffer_bytes_ += buffer_bytes(info.inputs[i]);
      }
      if (i >= Reads::inputs_at_run)
        std::vector<float>().swap(workload.constants_[i]);  // packed by the Float32 workload
    }
    for (std::size_t i = 0; i < info.outputs.size(); ++i) {
      if (info.outputs[i].type != DataType::Float16) continue;
      workload.narrow_output_[i] = true;
      workload.buffer_bytes_ += buffer_bytes(info.outputs[i]);
    }
    if constexpr (requires { workload.float32_.scratch(context); }) {
      const ScratchSize inner = workload.float32_.scratch(context);
      workload.inner_bytes_ = detail::round_up(inner.bytes, buffer_alignment);
      workload.inner_alignment_ = inner.alignment;
    }
    return workload;
  }

  /// The Float32 workload's scratch, then a Float32 buffer for each Float16 input that is not a
  /// constant and for each Float16 output.
  ScratchSize scratch(const Context&) const {
    return {inner_bytes_ + buffer_bytes_, std::max(buffer_alignment, inner_alignment_)};
  }

  Status run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
             std::span<std::byte> scratch) const {
    const auto inner_bytes = static_cast<std::size_t>(inner_bytes_);
    std::byte* next = scratch.data() + inner_bytes;
    auto take = [&](const TensorInfo& info) {
      auto* buffer = reinterpret_cast<float*>(next);
      next += buffer_bytes(info);
      return buffer;
    };
    std::array<ConstTensor, detail::max_widened_tensors> inputs{};
    std::array<Tensor, detail::max_widened_tensors> outputs{};
    for (std::size_t i = 0; i < in.size(); ++i) {
      inputs[i] = {detail::widened(in[i].info), in[i].data};
      if (widen_input_[i]) {
        float* buffer = take(in[i].info);
        Halves::widen(static_cast<const Half*>(in[i].data), buffer, in[i].info.num_elements(), context);
        inputs[i].data = buffer;
      } else if (!constants_[i].empty()) {
        inputs[i].data = constants_[i].data();
      }
    }
    for (std::size_t i = 0; i < out.size(); ++i)
      outputs[i] = {detail::widened(out[i].info), narrow_output_[i] ? take(out[i].info) : out[i].data};
    const std::span<const ConstTensor> float32_in(inputs.data(), in.size());
    const std::span<const Tensor> float32_out(outputs.data(), out.size());
    Status status = Status::ok();
    if constexpr (requires { float32_.run(float32_in, float32_out, context, scratch); }) {
      const auto inner = scratch.first(inner_bytes);
      if constexpr (std::same_as<decltype(float32_.run(float32_in, float32_out, context, inner)), Status>)
        status = float32_.run(float32_in, float32_out, context, inner);
      else
        float32_.run(float32_in, float32_out, context, inner);
    } else {
      if constexpr (std::same_as<decltype(float32_.run(float32_in, float32_out, context)), Status>)
        status = float32_.run(float32_in, float32_out, context);
      else
        float32_.run(float32_in, float32_out, context);
    }
    if (!status) return status;
    for (std::size_t i = 0; i < out.size(); ++i)
      if (narrow_output_[i])
        Halves::narrow(static_cast<const float*>(outputs[i].data), static_cast<Half*>(out[i].data),
                       out[i].info.num_elements(), context);
    return Status::ok();
  }

 private:
  static constexpr std::size_t buffer_alignment = 64;
  static std::uint64_t buffer_bytes(const TensorInfo& info) {
    return detail::round_up(info.num_elements() * sizeof(float), buffer_alignment);
  }
  using Constants = std::array<std::vector<float>, detail::max_widened_tensors>;

  /// The layer's infos and constants as Float32, for the Float32 workload.
  struct Widened {
    explicit Widened(const WorkloadInfo<Op>& info) {
      for (std::size_t i = 0; i < info.inputs.size(); ++i) {
        inputs[i] = detail::widened(info.inputs[i]);
        constants_in[i] = info.constants[i];
      }
      for (std::size_t i = 0; i < info.outputs.size(); ++i) outputs[i] = detail::widened(info.outputs[i]);
    }
    void widen_constants(const WorkloadInfo<Op>& info, Context& context) {
      for (std::size_t i = 0; i < info.inputs.size(); ++i) {
        if (info.constants[i] == nullptr || info.inputs[i].type != DataType::Float16) continue;
        constants[i].resize(info.inputs[i].num_elements());
        Halves::widen(static_cast<const Half*>(info.constants[i]), constants[i].data(), constants[i].size(), context);
        constants_in[i] = constants[i].data();
      }
    }
    WorkloadInfo<Op> info(const WorkloadInfo<Op>& original) const {
      return {original.params, std::span<const TensorInfo>(inputs.data(), original.inputs.size()),
              std::span<const TensorInfo>(outputs.data(), original.outputs.size()),
              std::span<const void* const>(constants_in.data(), original.constants.size())};
    }

    std::array<TensorInfo, detail::max_widened_tensors> inputs{}, outputs{};
    std::array<const void*, detail::max_widened_tensors> constants_in{};
    Constants constants;
  };

  Float16ViaFloat32(Float32Workload float32, Constants constants)
      : float32_(std::move(float32)), constants_(std::move(constants)) {}

  Float32Workload float32_;
  Constants constants_;
  std::array<bool, detail::max_widened_tensors> widen_input_{}, narrow_output_{};
  std::uint64_t buffer_bytes_ = 0;
  /// The Float32 workload's scratch, asked for once when the workload is made (the context is the
  /// one it runs with), rounded up to a buffer's alignment: the Float16 buffers start after it.
  std::uint64_t inner_bytes_ = 0;
  std::size_t inner_alignment_ = 1;
};

}  // namespace kiln
