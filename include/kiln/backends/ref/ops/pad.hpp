// SPDX-License-Identifier: Apache-2.0
// Reference Pad: each output coordinate mapped back into the input, or to the constant; Float32,
// Float16, 8-bit quantised, Signed32 and Boolean elements alike, as bytes.
#pragma once

#include <cstring>

#include "kiln/backends/moved_elements.hpp"
#include "kiln/backends/ref/ref_kernel.hpp"

namespace kiln {

namespace ref {

class PadBytes {
 public:
  explicit PadBytes(const WorkloadInfo<ops::Pad>& info)
      : params_(info.params), fill_(pad_element(info)), element_(size_of(info.outputs[0].type)) {}
  /// The types every backend pads, and Signed32 and Boolean, which RefBackend pads for them (decision 0025).
  static Status is_supported(const WorkloadInfo<ops::Pad>& info) {
    const DataType type = info.inputs[0].type;
    if (type == DataType::Signed32 || type == DataType::Boolean) return Status::ok();
    return check_pad_types(info);
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context&) const {
    const TensorShape& xs = in[0].info.shape;
    const TensorShape& ys = out[0].info.shape;
    const Strides x_strides = strides_of(xs);
    for (std::uint64_t i = 0; i < ys.num_elements(); ++i) {
      const auto coords = unravel(i, ys);
      std::uint64_t source = 0;
      bool constant = false;
      for (std::size_t d = 0; d < ys.rank() && !constant; ++d) {
        const std::int64_t j = ops::Pad::source_index(params_.mode, coords[d], ops::Pad::before_of(params_, d), xs[d]);
        constant = j < 0;
        source += static_cast<std::uint64_t>(j) * x_strides[d];
      }
      const std::byte* from = constant ? fill_.data() : bytes(in[0]) + source * element_;
      std::memcpy(bytes(out[0]) + i * element_, from, element_);
    }
  }

 private:
  ops::Pad::Params params_;
  std::array<std::byte, 4> fill_;
  std::size_t element_;
};

}  // namespace ref

template <DataType T>
struct Workload<ops::Pad, RefBackend, T> : ref::PadBytes {
  using PadBytes::PadBytes;
};

}  // namespace kiln
