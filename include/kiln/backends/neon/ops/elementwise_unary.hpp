// SPDX-License-Identifier: Apache-2.0
// Neon ElementwiseUnary: xsimd's vector functions, streamed a vector at a time over thread chunks.
#pragma once

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

template <>
struct Kernel<ops::ElementwiseUnary, DataType::Float32> : Float32Kernel<ops::ElementwiseUnary> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    using U = ops::UnaryOperation;
    const float* x = floats(in[0]);
    float* y = floats(out[0]);
    auto stream = [&](auto f) {
      parallel_chunks(context, in[0].info.num_elements(),
                      [&](std::size_t begin, std::size_t end) { map(x + begin, y + begin, end - begin, f); });
    };
    switch (params_.operation) {
      case U::Abs: return stream([](Vec v) { return xsimd::abs(v); });
      case U::Neg: return stream([](Vec v) { return -v; });
      case U::Exp: return stream([](Vec v) { return xsimd::exp(v); });
      case U::Log: return stream([](Vec v) { return xsimd::log(v); });
      case U::Sqrt: return stream([](Vec v) { return xsimd::sqrt(v); });
      // Exact division, not the approximate rsqrt/rcp instructions: results stay within an ulp or two of Ref.
      case U::Rsqrt: return stream([](Vec v) { return Vec(1.0f) / xsimd::sqrt(v); });
      case U::Reciprocal: return stream([](Vec v) { return Vec(1.0f) / v; });
      case U::Erf: return stream([](Vec v) { return xsimd::erf(v); });
      case U::Sin: return stream([](Vec v) { return xsimd::sin(v); });
      case U::Cos: return stream([](Vec v) { return xsimd::cos(v); });
      case U::Tan: return stream([](Vec v) { return xsimd::tan(v); });
      case U::Asin: return stream([](Vec v) { return xsimd::asin(v); });
      case U::Acos: return stream([](Vec v) { return xsimd::acos(v); });
      case U::Atan: return stream([](Vec v) { return xsimd::atan(v); });
      case U::Sinh: return stream([](Vec v) { return xsimd::sinh(v); });
      case U::Cosh: return stream([](Vec v) { return xsimd::cosh(v); });
      case U::Asinh: return stream([](Vec v) { return xsimd::asinh(v); });
      case U::Acosh: return stream([](Vec v) { return xsimd::acosh(v); });
      case U::Atanh: return stream([](Vec v) { return xsimd::atanh(v); });
      case U::Sign:  // 0, -0 and NaN stay themselves, as in Ref
        return stream(
            [](Vec v) { return xsimd::select(v > Vec(0.0f), Vec(1.0f), xsimd::select(v < Vec(0.0f), Vec(-1.0f), v)); });
      case U::Floor: return stream([](Vec v) { return xsimd::floor(v); });
      case U::Ceil: return stream([](Vec v) { return xsimd::ceil(v); });
      case U::Round: return stream([](Vec v) { return xsimd::nearbyint(v); });
    }
  }
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
