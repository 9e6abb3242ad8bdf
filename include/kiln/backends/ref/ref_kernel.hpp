// SPDX-License-Identifier: Apache-2.0
// What every reference workload shares: its context, its bases, and index arithmetic.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "kiln/backends/workload.hpp"

namespace kiln {

struct RefBackend;

namespace ref {

/// RefBackend keeps no per-runtime state.
struct Context {};

using Strides = std::array<std::uint64_t, TensorShape::max_rank>;

/// Row-major element strides of a shape.
inline Strides strides_of(const TensorShape& shape) {
  Strides strides{};
  std::uint64_t stride = 1;
  for (std::size_t d = shape.rank(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

/// Strides of `shape` seen through numpy broadcasting to a shape of rank `rank`: 0 where the
/// dimension is broadcast (size 1 or missing).
inline Strides broadcast_strides_of(const TensorShape& shape, std::size_t rank) {
  const Strides own = strides_of(shape);
  Strides strides{};
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    const std::size_t d = rank - shape.rank() + i;
    strides[d] = shape[i] == 1 ? 0 : own[i];
  }
  return strides;
}

/// Coordinates of element `index` of a row-major tensor of `shape`.
inline std::array<std::uint32_t, TensorShape::max_rank> unravel(std::uint64_t index, const TensorShape& shape) {
  std::array<std::uint32_t, TensorShape::max_rank> coords{};
  for (std::size_t d = shape.rank(); d-- > 0;) {
    coords[d] = static_cast<std::uint32_t>(index % shape[d]);
    index /= shape[d];
  }
  return coords;
}

/// f(i, offsets) for each element i of a tensor of shape `ys` that the N tensors `in` broadcast to
/// (numpy): offsets[k] is the element of in[k] it reads.
template <std::size_t N, class F>
void for_each_broadcast(std::span<const ConstTensor> in, const TensorShape& ys, F&& f) {
  std::array<Strides, N> strides;
  for (std::size_t k = 0; k < N; ++k) strides[k] = broadcast_strides_of(in[k].info.shape, ys.rank());
  for (std::uint64_t i = 0; i < ys.num_elements(); ++i) {
    const auto coords = unravel(i, ys);
    std::array<std::uint64_t, N> offsets{};
    for (std::size_t k = 0; k < N; ++k)
      for (std::size_t d = 0; d < ys.rank(); ++d) offsets[k] += coords[d] * strides[k][d];
    f(i, offsets);
  }
}

/// Fails unless every tensor of the layer is of `type` (weights and bias too), naming the first that is not.
template <class Op>
Status require_type(const WorkloadInfo<Op>& info, DataType type) {
  for (std::size_t i = 0; i < info.inputs.size(); ++i)
    if (info.inputs[i].type != type)
      return Status::error(ErrorCode::Unsupported, "runs ", Op::name, " on ", to_string(type), " tensors only; input ",
                           i, " is ", to_string(info.inputs[i].type));
  for (std::size_t i = 0; i < info.outputs.size(); ++i)
    if (info.outputs[i].type != type)
      return Status::error(ErrorCode::Unsupported, "runs ", Op::name, " on ", to_string(type), " tensors only; output ",
                           i, " is ", to_string(info.outputs[i].type));
  return Status::ok();
}
template <class Op>
Status require_float32(const WorkloadInfo<Op>& info) {
  return require_type(info, DataType::Float32);
}

/// Base of the Float32 workloads of RefBackend: keeps the parameters and refuses a layer with a
/// tensor of another type.
template <class Op>
class Float32Kernel {
 public:
  explicit Float32Kernel(const WorkloadInfo<Op>& info) : params_(info.params) {}
  static Status is_supported(const WorkloadInfo<Op>& info) { return require_float32(info); }

 protected:
  typename Op::Params params_;
};

/// Base of the Signed32 workloads of the layers with weights (ONNX ConvInteger and MatMulInteger,
/// whose operands the importer centres on their zero points): keeps the parameters, refuses a
/// layer with a tensor of another type or a fused activation, and stores each int32 sum, which
/// accumulates in uint32 so that it wraps around on overflow as ONNX Runtime's int32 sums do.
template <class Op>
class Signed32Kernel {
 public:
  explicit Signed32Kernel(const WorkloadInfo<Op>& info) : params_(info.params) {}
  static Status is_supported(const WorkloadInfo<Op>& info) {
    if (auto s = require_type(info, DataType::Signed32); !s) return s;
    if constexpr (requires { info.params.activation; })
      if (info.params.activation)
        return Status::error(ErrorCode::Unsupported, "applies no activation to Signed32 ", Op::name, " outputs");
    return Status::ok();
  }

 protected:
  /// The store of the reference loops: sum is (the bits of) element i.
  static auto store_to(const Tensor& out) {
    return [y = static_cast<std::int32_t*>(out.data)](std::uint64_t i, std::uint32_t sum, std::uint32_t) {
      y[i] = static_cast<std::int32_t>(sum);
    };
  }

  typename Op::Params params_;
};

/// Base of the reference workloads that only move elements: every data type, copied as bytes.
template <class Op>
class DataMovementKernel {
 public:
  explicit DataMovementKernel(const WorkloadInfo<Op>& info) : params_(info.params) {}

 protected:
  typename Op::Params params_;
};

inline const std::byte* bytes(const ConstTensor& t) { return static_cast<const std::byte*>(t.data); }
inline std::byte* bytes(const Tensor& t) { return static_cast<std::byte*>(t.data); }
inline const float* floats(const ConstTensor& t) { return static_cast<const float*>(t.data); }
inline float* floats(const Tensor& t) { return static_cast<float*>(t.data); }

}  // namespace ref
}  // namespace kiln
