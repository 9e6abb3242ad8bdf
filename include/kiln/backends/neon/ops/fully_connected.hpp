// SPDX-License-Identifier: Apache-2.0
// Neon FullyConnected: the packed GEMM (Float32, Float16 or int8) with every leading index of the input as a row of A.
#pragma once

#include "kiln/backends/neon/simd/gemm.hpp"
#include "kiln/backends/neon/simd/int8_gemm.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// FullyConnected as a GEMM on weights packed at load, in elements E (float; Float16 where the
/// target has half-precision arithmetic).
template <class E>
class GemmFullyConnected {
 public:
  static constexpr std::size_t inputs_read_at_run = 1;  // the constants after it are prepared at load

  explicit GemmFullyConnected(const WorkloadInfo<ops::FullyConnected>& info)
      : weights_(static_cast<const E*>(info.constants[1]),
                 info.inputs.size() > 2 ? static_cast<const E*>(info.constants[2]) : nullptr, 1,
                 info.inputs[1].shape[0], info.inputs[1].shape[1]),
        epilogue_(Epilogue::from(info.params.activation)) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const std::size_t k = weights_.k();
    const std::size_t rows = k == 0 ? 0 : in[0].info.num_elements() / k;
    gemm(context, BasicDenseRows<E>{static_cast<const E*>(in[0].data), k}, rows, weights_, static_cast<E*>(out[0].data),
         weights_.n(), epilogue_, {});
  }

 private:
  BasicPackedWeights<E> weights_;
  Epilogue epilogue_;
};

/// Deviation from Ref: weights are packed at load, so they (and the bias) must be constants.
template <>
struct Kernel<ops::FullyConnected, DataType::Float32> : Float32Kernel<ops::FullyConnected>, GemmFullyConnected<float> {
  static Status is_supported(const WorkloadInfo<ops::FullyConnected>& info) {
    return require_constants_of(info, DataType::Float32, inputs_read_at_run);
  }
  explicit Kernel(const WorkloadInfo<ops::FullyConnected>& info) : Float32Kernel(info), GemmFullyConnected(info) {}
};

#if KILN_NEON_HALF_ARITHMETIC
/// Float16 with half-precision arithmetic, accumulating in Float16 (decision 0020).
template <>
struct Kernel<ops::FullyConnected, DataType::Float16> : GemmFullyConnected<Half> {
  static Status is_supported(const WorkloadInfo<ops::FullyConnected>& info) {
    return require_constants_of(info, DataType::Float16, inputs_read_at_run);
  }
  explicit Kernel(const WorkloadInfo<ops::FullyConnected>& info) : GemmFullyConnected(info) {}
};
#endif

template <DataType T>
requires(quantized::is_activation_type(T)) struct Kernel<ops::FullyConnected, T>
    : Int8GemmKernel<ops::FullyConnected, Kernel<ops::FullyConnected, T>> {
  Kernel(const WorkloadInfo<ops::FullyConnected>& info, const quantized::OutputStage& stage)
      : Int8GemmKernel<ops::FullyConnected, Kernel>(info, stage, 1, info.inputs[1].shape[0], info.inputs[1].shape[1]) {}

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
           std::span<std::byte> scratch) const {
    const std::size_t k = this->weights_.k(), n = this->weights_.n();
    const std::size_t rows = k == 0 ? 0 : in[0].info.num_elements() / k;
    int8_gemm(context, Int8Rows{static_cast<const std::uint8_t*>(in[0].data), k}, rows, this->weights_,
              static_cast<std::uint8_t*>(out[0].data), n, scratch);
  }
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
