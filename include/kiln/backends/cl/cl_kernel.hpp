// SPDX-License-Identifier: Apache-2.0
// What every ClBackend workload shares: constants on the device, launches, the workload bases.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kiln/backends/cl/cl_context.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"
#include "kiln/backends/workload.hpp"

namespace kiln {

struct ClBackend;

namespace opencl {

inline cl_mem buffer_of(const ConstTensor& t) { return static_cast<cl_mem>(const_cast<void*>(t.data)); }
inline cl_mem buffer_of(const Tensor& t) { return static_cast<cl_mem>(t.data); }

/// Six dimensions, outermost first, padded at the front with 1 (kernels/common.cl, kiln_offset).
inline cl_uint8 dims6(const TensorShape& shape) {
  cl_uint8 dims{};
  for (int d = 0; d < 8; ++d) dims.s[d] = 1;
  for (std::size_t d = 0; d < shape.rank(); ++d) dims.s[6 - shape.rank() + d] = shape[d];
  return dims;
}
/// Element strides for dims6, padded at the front with 0; `strides` holds one per dimension of `rank`.
template <class Strides>
cl_int8 strides6(const Strides& strides, std::size_t rank) {
  cl_int8 out{};
  for (std::size_t d = 0; d < rank; ++d) out.s[6 - rank + d] = static_cast<cl_int>(strides[d]);
  return out;
}

/// The arguments of kernels/data_movement.cl's strided_copy but for the bases: what to walk, how
/// to read and how to write.
struct StridedCopy {
  cl_uint8 dims{};
  cl_int8 x_strides{};
  cl_int8 y_strides{};
};

/// Fails for tensors too large for the kernels' 32-bit element indices.
template <class Op>
Status require_int_indices(const WorkloadInfo<Op>& info) {
  constexpr std::uint64_t limit = std::uint64_t{1} << 31;
  for (const TensorInfo& t : info.inputs)
    if (t.num_elements() >= limit)
      return Status::error(ErrorCode::Unsupported, "indexes tensors with 32-bit integers; ", t.to_string(),
                           " is too large");
  for (const TensorInfo& t : info.outputs)
    if (t.num_elements() >= limit)
      return Status::error(ErrorCode::Unsupported, "indexes tensors with 32-bit integers; ", t.to_string(),
                           " is too large");
  return Status::ok();
}

/// One kernel of a workload. clSetKernelArg is not thread-safe on one kernel object, and several
/// working memories may run a workload at once, so setting the arguments and enqueueing happen
/// under a lock; the wait for the result does not.
class Launch {
 public:
  Launch() = default;
  explicit Launch(cl::Kernel kernel)
      : state_(std::make_shared<State>(kernel, kernel.getInfo<CL_KERNEL_FUNCTION_NAME>())) {}

  /// Enqueues the kernel over `global` work-items (nothing when one of its sizes is 0) with
  /// `args` (cl_mem handles, cl::Buffers and plain values: scalars, cl_uint8...) and the
  /// work-group size the context's tuner chooses.
  template <class... Args>
  Status operator()(Context& context, const cl::NDRange& global, const Args&... args) const {
    for (std::size_t d = 0; d < global.dimensions(); ++d)
      if (global.get()[d] == 0) return Status::ok();
    std::lock_guard lock(state_->mutex);
    cl_uint index = 0;
    cl_int err = CL_SUCCESS;
    ((err = err == CL_SUCCESS ? set(index++, args) : err), ...);
    if (err != CL_SUCCESS) return cl_error(detail::str_cat("clSetKernelArg(", index - 1, ") of ", state_->name), err);
    const cl::NDRange local = local_size(context, global);
    err =
        context.queue().enqueueNDRangeKernel(state_->kernel, cl::NullRange, global, local, nullptr, event_to_record());
    if (err != CL_SUCCESS) return cl_error(detail::str_cat("clEnqueueNDRangeKernel(", state_->name, ')'), err);
    return Status::ok();
  }

 private:
  template <class T>
  cl_int set(cl_uint index, const T& value) const {
    if constexpr (std::same_as<T, cl::Buffer>) {
      const cl_mem mem = value();
      return clSetKernelArg(state_->kernel(), index, sizeof(cl_mem), &mem);
    } else {
      static_assert(std::is_trivially_copyable_v<T>, "kernel arguments are cl_mem, cl::Buffer or plain values");
      return clSetKernelArg(state_->kernel(), index, sizeof(T), &value);
    }
  }
  /// The context's work-group size for `global`, remembered per launch (a workload launches with
  /// one or two global sizes), so that only the first inference asks the context, which allocates.
  /// Called under the lock.
  cl::NDRange local_size(Context& context, const cl::NDRange& global) const {
    std::array<std::size_t, 3> key{1, 1, 1};
    for (std::size_t d = 0; d < global.dimensions(); ++d) key[d] = global.get()[d];
    for (const auto& [known, local] : state_->local_sizes)
      if (known == key) return local;
    return state_->local_sizes.emplace_back(key, context.local_size(state_->kernel, state_->name, global)).second;
  }
  struct State {
    State(cl::Kernel k, std::string n) : kernel(std::move(k)), name(std::move(n)) {}
    cl::Kernel kernel;
    std::string name;
    std::mutex mutex;
    std::vector<std::pair<std::array<std::size_t, 3>, cl::NDRange>> local_sizes;
  };
  std::shared_ptr<State> state_;
};

/// Kernel `name` of kernels/<family>.cl, ready to launch.
inline Expected<Launch> launch_of(Context& context, std::string_view family, std::string_view name,
                                  std::string_view options = {}) {
  auto kernel = context.kernel(family, name, options);
  if (!kernel) return kernel.status();
  return Launch(std::move(*kernel));
}

/// Base of ClBackend's workloads: the parameters, the layer's constant inputs uploaded to the
/// device once at load, the inputs as the kernels see them (a constant's own buffer, or the
/// tensor's sub-buffer), and the kernel.
template <class Op>
class Kernel {
 public:
  explicit Kernel(const WorkloadInfo<Op>& info) : params_(info.params) {}

 protected:
  /// Workload W (derived from this base) with its constants on the device and kernel `name` of
  /// kernels/<family>.cl, built with `options`, in launch_: what most create() functions do.
  template <class W>
  static Expected<W> make(const WorkloadInfo<Op>& info, Context& context, std::string_view family,
                          std::string_view name, std::string_view options = {}) {
    W w(info);
    if (auto s = w.upload_constants(info, context); !s) return s;
    auto launch = launch_of(context, family, name, options);
    if (!launch) return launch.status();
    w.launch_ = std::move(*launch);
    return w;
  }

  Status upload_constants(const WorkloadInfo<Op>& info, Context& context) {
    constants_.resize(info.inputs.size());
    for (std::size_t i = 0; i < info.inputs.size(); ++i) {
      if (info.constants[i] == nullptr) continue;
      auto buffer = context.upload(info.constants[i], info.inputs[i].num_bytes());
      if (!buffer) return buffer.status();
      constants_[i] = std::move(*buffer);
    }
    return Status::ok();
  }
  /// Input i as a kernel argument.
  cl_mem input(std::span<const ConstTensor> in, std::size_t i) const {
    return i < constants_.size() && constants_[i]() != nullptr ? constants_[i]() : buffer_of(in[i]);
  }

  typename Op::Params params_;
  std::vector<cl::Buffer> constants_;
  Launch launch_;
};

/// The data types a float kernel's tensors may hold: Float32, or Float16 read and written as
/// halves (kernels/common.cl's REAL, decision 0024).
constexpr bool is_float_kernel_type(DataType type) { return type == DataType::Float32 || type == DataType::Float16; }

/// Base of the workloads that compute in float, on Float32 tensors or on Float16 ones: one class
/// for both, its program built with KILN_HALF for a Float16 layer.
template <class Op>
struct FloatKernel : Kernel<Op> {
  using Kernel<Op>::Kernel;
  static Status is_supported(const WorkloadInfo<Op>& info) {
    const DataType type = ops::layer_data_type(info.inputs, info.outputs);
    if (auto s = ref::require_type(info, is_float_kernel_type(type) ? type : DataType::Float32); !s) return s;
    return require_int_indices(info);
  }

 protected:
  template <class W>
  static Expected<W> make(const WorkloadInfo<Op>& info, Context& context, std::string_view family,
                          std::string_view name) {
    const bool halves = ops::layer_data_type(info.inputs, info.outputs) == DataType::Float16;
    return Kernel<Op>::template make<W>(info, context, family, name, halves ? "-DKILN_HALF" : "");
  }
};

/// The OpenCL type that moves one element of `type` (kernels/data_movement.cl is built once per size).
inline std::string_view element_option(DataType type) {
  switch (size_of(type)) {
    case 1: return "-DELEMENT=uchar";
    case 2: return "-DELEMENT=ushort";
    default: return "-DELEMENT=uint";
  }
}

/// Base of the workloads that only move elements: every data type, moved by its size.
template <class Op>
struct DataMovementKernel : Kernel<Op> {
  using Kernel<Op>::Kernel;
  static Status is_supported(const WorkloadInfo<Op>& info) { return require_int_indices(info); }
};

/// A fused activation as the kernels take it (kernels/common.cl, kiln_activate).
struct ActivationArgs {
  cl_int function = -1;  // KILN_NO_ACTIVATION
  cl_float a = 0.0f;
  cl_float b = 0.0f;
  explicit ActivationArgs(const std::optional<ops::Activation::Params>& activation) {
    if (activation) {
      function = static_cast<cl_int>(activation->function);
      a = activation->a;
      b = activation->b;
    }
  }
};

/// The global size of a one-dimensional launch over every element of `t`.
inline cl::NDRange elements_of(const TensorInfo& t) { return cl::NDRange(static_cast<std::size_t>(t.num_elements())); }

}  // namespace opencl
}  // namespace kiln
