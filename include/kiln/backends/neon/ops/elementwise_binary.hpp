// SPDX-License-Identifier: Apache-2.0
// Neon ElementwiseBinary: rows of the innermost dimension, each operand contiguous or broadcast along it
// (Float16 computed in Float32 lanes); int8 Add, Sub and Mul through a table of every output byte.
#pragma once

#include <array>
#include <limits>
#include <vector>

#include "kiln/backends/neon/parallel.hpp"
#include "kiln/backends/neon/simd/vector_ops.hpp"
#include "kiln/backends/quantized_elementwise.hpp"

namespace kiln::neon {
inline namespace KILN_NEON_ISA {

/// Runs segment(pa, a_varies, pb, b_varies, py, begin, end) over every row of the output: elements
/// [begin, end) of a row at py, whose operands are at pa and pb, each contiguous (varies) or one
/// element broadcast along the row. One row is the output's innermost dimension, or all of it when
/// the operands have equal shapes or are scalars. Rows, or chunks of one long row, are split over
/// threads.
template <class T, class Segment>
void for_each_row_segment(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
                          Segment segment) {
  const TensorShape& ys = out[0].info.shape;
  const std::size_t rank = ys.rank();
  const auto* a = static_cast<const T*>(in[0].data);
  const auto* b = static_cast<const T*>(in[1].data);
  auto* y = static_cast<T*>(out[0].data);
  const std::uint64_t total = ys.num_elements();
  if (total == 0) return;
  const ref::Strides sa = ref::broadcast_strides_of(in[0].info.shape, rank);
  const ref::Strides sb = ref::broadcast_strides_of(in[1].info.shape, rank);
  const bool same = in[0].info.shape == in[1].info.shape;
  const std::uint64_t row = same || rank == 0 ? total : ys[rank - 1];
  const bool a_varies = same || (in[0].info.num_elements() != 1 && rank != 0 && sa[rank - 1] != 0);
  const bool b_varies = same || (in[1].info.num_elements() != 1 && rank != 0 && sb[rank - 1] != 0);
  const std::uint64_t rows = total / row;
  auto run_row = [&](std::uint64_t r, std::uint64_t begin, std::uint64_t end) {
    std::uint64_t ia = 0, ib = 0;
    if (!same) {
      std::uint64_t rest = r;
      for (std::size_t d = rank - 1; d-- > 0;) {
        const std::uint64_t coord = rest % ys[d];
        rest /= ys[d];
        ia += coord * sa[d];
        ib += coord * sb[d];
      }
    }
    segment(a + ia, a_varies, b + ib, b_varies, y + r * row, begin, end);
  };
  if (rows == 1) {
    parallel_chunks(context, row, [&](std::size_t begin, std::size_t end) { run_row(0, begin, end); });
    return;
  }
  const std::size_t rows_per_chunk = std::max<std::uint64_t>(1, stream_chunk / row);
  parallel_chunks(
      context, rows,
      [&](std::size_t first, std::size_t last) {
        for (std::size_t r = first; r < last; ++r) run_row(r, 0, row);
      },
      rows_per_chunk, row * 16);
}

/// Rows of elements E (floats, or halves computed in Float32 lanes) through f, a vector at a time;
/// a fused activation runs on each segment right after it is computed, while it is in cache.
template <class E, class F>
void vector_rows(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context,
                 const std::optional<ops::Activation::Params>& activation, F f) {
  for_each_row_segment<E>(
      in, out, context,
      [&](const E* pa, bool a_varies, const E* pb, bool b_varies, E* py, std::uint64_t begin, std::uint64_t end) {
        auto load = [](const E* p, bool varies, std::uint64_t i, std::size_t n) {
          return varies ? load_upto(p + i, n) : Vec(as_float(*p));
        };
        auto step = [&](std::uint64_t i, std::size_t n) {
          store_upto(py + i, f(load(pa, a_varies, i, n), load(pb, b_varies, i, n)), n);
        };
        std::uint64_t i = begin;
        for (; i + lanes <= end; i += lanes) step(i, lanes);  // whole vectors: no tail code
        if (i < end) step(i, end - i);
        apply_activation(activation, py + begin, end - begin);
      });
}

/// The operation of `params` on elements E, a vector at a time.
template <class E>
void elementwise(const ops::ElementwiseBinary::Params& params, std::span<const ConstTensor> in,
                 std::span<const Tensor> out, Context& context) {
  using O = ops::BinaryOperation;
  auto nan_if_either = [](Vec a, Vec b, Vec r) {  // numpy maximum/minimum propagate NaN
    return xsimd::select(xsimd::isnan(a) || xsimd::isnan(b), Vec(std::numeric_limits<float>::quiet_NaN()), r);
  };
  auto with_op = [&](auto f) { vector_rows<E>(in, out, context, params.activation, f); };
  switch (params.operation) {
    case O::Add: return with_op([](Vec a, Vec b) { return a + b; });
    case O::Sub: return with_op([](Vec a, Vec b) { return a - b; });
    case O::Mul: return with_op([](Vec a, Vec b) { return a * b; });
    case O::Div: return with_op([](Vec a, Vec b) { return a / b; });
    case O::Maximum: return with_op([=](Vec a, Vec b) { return nan_if_either(a, b, xsimd::max(a, b)); });
    case O::Minimum: return with_op([=](Vec a, Vec b) { return nan_if_either(a, b, xsimd::min(a, b)); });
    case O::Power: return with_op([](Vec a, Vec b) { return xsimd::pow(a, b); });
    case O::PRelu: return with_op([](Vec a, Vec b) { return xsimd::select(a >= Vec(0.0f), a, a * b); });
    case O::Mod:
    case O::FMod:  // lane by lane: a - trunc(a / b) * b in vectors is not exact, std::fmod is
      return with_op([op = params.operation](Vec a, Vec b) {
        alignas(Vec::arch_type::alignment()) std::array<float, lanes> x, y;
        a.store_aligned(x.data());
        b.store_aligned(y.data());
        for (std::size_t i = 0; i < lanes; ++i) x[i] = ops::remainder(op, x[i], y[i]);
        return Vec::load_aligned(x.data());
      });
  }
}

template <>
struct Kernel<ops::ElementwiseBinary, DataType::Float32> : Float32Kernel<ops::ElementwiseBinary> {
  using Float32Kernel::Float32Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    elementwise<float>(params_, in, out, context);
  }
};

/// Float16: halves read and written in place, each result rounded once (RefBackend's Float32
/// arithmetic), with no Float32 buffers.
template <>
struct Kernel<ops::ElementwiseBinary, DataType::Float16> : Float16Kernel<ops::ElementwiseBinary> {
  using Float16Kernel::Float16Kernel;

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    elementwise<Half>(params_, in, out, context);
  }
};

/// int8 Add, Sub and Mul: an 8-bit output is a function of two 8-bit inputs, so the layer's whole
/// quantized::ElementwiseStage is a 256 x 256 table of output bytes made at load (64 KiB); each
/// element is one lookup, bit-exact with RefBackend by construction.
template <DataType T>
requires(quantized::is_activation_type(T)) struct Kernel<ops::ElementwiseBinary, T> {
  static Status is_supported(const WorkloadInfo<ops::ElementwiseBinary>& info) {
    return quantized::check_elementwise(info);
  }
  static Expected<Kernel> create(const WorkloadInfo<ops::ElementwiseBinary>& info, Context&) {
    auto stage = quantized::ElementwiseStage::make(info);
    if (!stage) return stage.status();
    // Each input's rescaling once per byte value, so that an entry costs one requantization.
    std::array<std::int32_t, 256> rescaled_a, rescaled_b;
    for (int byte = 0; byte < 256; ++byte) {
      rescaled_a[byte] = stage->rescaled_a(integer_of(byte));
      rescaled_b[byte] = stage->rescaled_b(integer_of(byte));
    }
    Kernel kernel;
    kernel.table_.resize(256 * 256);
    // Entry (a, b) holds the output for the input bytes a and b, read as T's integers.
    for (int a = 0; a < 256; ++a)
      for (int b = 0; b < 256; ++b)
        kernel.table_[a * 256 + b] = static_cast<std::uint8_t>(stage->combine(rescaled_a[a], rescaled_b[b]));
    return kernel;
  }

  void run(std::span<const ConstTensor> in, std::span<const Tensor> out, Context& context) const {
    const std::uint8_t* table = table_.data();
    for_each_row_segment<std::uint8_t>(
        in, out, context,
        [table](const std::uint8_t* pa, bool a_varies, const std::uint8_t* pb, bool b_varies, std::uint8_t* py,
                std::uint64_t begin, std::uint64_t end) {
          for (std::uint64_t i = begin; i < end; ++i) py[i] = table[pa[a_varies ? i : 0] * 256 + pb[b_varies ? i : 0]];
        });
  }

 private:
  static constexpr std::int32_t integer_of(int byte) {
    return T == DataType::QAsymmU8 ? byte : static_cast<std::int8_t>(static_cast<std::uint8_t>(byte));
  }
  std::vector<std::uint8_t> table_;
};

}  // namespace KILN_NEON_ISA
}  // namespace kiln::neon
