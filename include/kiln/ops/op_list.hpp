// SPDX-License-Identifier: Apache-2.0
// The op registry: every layer type kiln knows, and the concept an op descriptor satisfies.
#pragma once

#include <concepts>
#include <optional>
#include <span>
#include <string_view>

#include "kiln/core/type_list.hpp"
#include "kiln/ops/activation.hpp"
#include "kiln/ops/arg_min_max.hpp"
#include "kiln/ops/attention.hpp"
#include "kiln/ops/batch_mat_mul.hpp"
#include "kiln/ops/batch_normalization.hpp"
#include "kiln/ops/cast.hpp"
#include "kiln/ops/comparison.hpp"
#include "kiln/ops/concat.hpp"
#include "kiln/ops/constant.hpp"
#include "kiln/ops/convolution2d.hpp"
#include "kiln/ops/cumulative_sum.hpp"
#include "kiln/ops/depthwise_convolution2d.hpp"
#include "kiln/ops/elementwise_binary.hpp"
#include "kiln/ops/elementwise_unary.hpp"
#include "kiln/ops/fully_connected.hpp"
#include "kiln/ops/gather.hpp"
#include "kiln/ops/gather_elements.hpp"
#include "kiln/ops/input.hpp"
#include "kiln/ops/layer_normalization.hpp"
#include "kiln/ops/logical_binary.hpp"
#include "kiln/ops/mem_copy.hpp"
#include "kiln/ops/output.hpp"
#include "kiln/ops/pad.hpp"
#include "kiln/ops/pooling2d.hpp"
#include "kiln/ops/quantize.hpp"
#include "kiln/ops/recurrent.hpp"
#include "kiln/ops/reduce.hpp"
#include "kiln/ops/reshape.hpp"
#include "kiln/ops/resize.hpp"
#include "kiln/ops/select.hpp"
#include "kiln/ops/softmax.hpp"
#include "kiln/ops/split.hpp"
#include "kiln/ops/strided_slice.hpp"
#include "kiln/ops/top_k.hpp"
#include "kiln/ops/transpose.hpp"
#include "kiln/ops/transpose_convolution2d.hpp"

namespace kiln {

/// What an op descriptor provides: a name, an arity, a Params struct and shape inference.
template <class Op>
concept OpDescriptor = requires(const typename Op::Params& params, std::span<const TensorInfo> inputs,
                                std::span<TensorInfo> outputs) {
  { Op::name } -> std::convertible_to<std::string_view>;
  { Op::arity } -> std::convertible_to<ops::Arity>;
  { Op::infer(params, inputs, outputs) } -> std::same_as<Status>;
};

namespace ops {

/// Every op, alphabetical. Adding an op adds one line here.
using op_list =
    TypeList<Activation, ArgMinMax, Attention, BatchMatMul, BatchNormalization, Cast, Comparison, Concat, Constant,
             Convolution2d, CumulativeSum, DepthwiseConvolution2d, Dequantize, ElementwiseBinary, ElementwiseUnary,
             FullyConnected, Gather, GatherElements, Input, LayerNormalization, LogicalBinary, MemCopy, Output, Pad,
             Pooling2d, Quantize, Recurrent, Reduce, Requantize, Reshape, Resize, Select, Softmax, Split, StridedSlice,
             TopK, Transpose, TransposeConvolution2d>;

inline constexpr std::size_t op_count = op_list::size;

/// Position of Op in op_list: the index of a layer's descriptor, and of its row in a backend's
/// workload table.
template <class Op>
inline constexpr std::size_t op_index_v = index_of_v<Op, op_list>;

/// The data type that chooses a layer's workload: its first input's, or its first output's when it
/// has no input. A backend offers a workload per op and data type (Workload<Op, Backend, Type>);
/// the workload checks the other tensors' types itself (int8 weights, Signed32 bias, ...).
constexpr DataType layer_data_type(std::span<const TensorInfo> inputs, std::span<const TensorInfo> outputs) {
  if (!inputs.empty()) return inputs[0].type;
  return outputs.empty() ? DataType::Float32 : outputs[0].type;
}

namespace detail {
template <class List>
struct op_facts;
template <class... Ops>
struct op_facts<TypeList<Ops...>> {
  static constexpr std::string_view names[] = {Ops::name...};
  static constexpr Arity arities[] = {Ops::arity...};
};
}  // namespace detail

/// The name and arity of the op at index `op` of op_list.
constexpr std::string_view op_name(std::size_t op) { return detail::op_facts<op_list>::names[op]; }
constexpr Arity op_arity(std::size_t op) { return detail::op_facts<op_list>::arities[op]; }

/// Ops that describe the graph's boundary and data rather than computation: no backend runs them.
template <class Op>
inline constexpr bool is_structural_v =
    std::same_as<Op, Input> || std::same_as<Op, Output> || std::same_as<Op, Constant>;

/// How many outputs a layer of `Op` with `params` has (1 unless the op says otherwise).
template <OpDescriptor Op>
constexpr std::size_t num_outputs(const typename Op::Params& params) {
  if constexpr (requires { Op::num_outputs(params); })
    return Op::num_outputs(params);
  else
    return 1;
}

/// A data type and quantisation the builder gives a layer's output (Network::set_output_type):
/// Arm NN's SetTensorInfo on an output slot, for quantised outputs.
struct OutputType {
  DataType type = DataType::Float32;
  QuantizationInfo quantization;
  friend constexpr bool operator==(const OutputType&, const OutputType&) = default;
};

/// True for ops whose output type is the builder's choice alone (Quantize, Requantize): their
/// infer() finds the declared type and quantisation in its outputs on entry.
template <class Op>
inline constexpr bool output_type_declared_v = requires {
  requires Op::output_type_declared;
};

/// Infers the outputs of an Op layer reading `in`, with the types the builder declared for them
/// (`declared` is empty or holds one entry per output). An op whose output type is declared
/// (output_type_declared_v) needs a declaration for each output; any other op may only have the
/// quantisation of a quantised output declared, which replaces the one it inherits from its input.
template <OpDescriptor Op>
constexpr Status infer_outputs(const typename Op::Params& params, std::span<const TensorInfo> in,
                               std::span<const std::optional<OutputType>> declared, std::span<TensorInfo> out) {
  auto declaration = [&](std::size_t i) { return i < declared.size() ? declared[i] : std::nullopt; };
  if constexpr (output_type_declared_v<Op>) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto d = declaration(i);
      if (!d)
        return kiln::detail::invalid("output ", i, " needs its data type and quantisation declared with ",
                                     "Network::set_output_type: ", Op::name, " converts to the type the user chooses");
      out[i] = TensorInfo{{}, d->type, d->quantization};
    }
    return Op::infer(params, in, out);
  } else {
    if (auto s = Op::infer(params, in, out); !s) return s;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto d = declaration(i);
      if (!d) continue;
      if (d->type != out[i].type)
        return kiln::detail::invalid("output ", i, " is declared ", to_string(d->type), " but ", Op::name, " produces ",
                                     to_string(out[i].type), " from its inputs");
      if (!is_quantized(d->type) && !d->quantization.empty())
        return kiln::detail::invalid("output ", i, " is declared ", to_string(d->type),
                                     " with a quantisation; only quantised types have one");
      out[i].quantization = d->quantization;
    }
    return Status::ok();
  }
}

}  // namespace ops
}  // namespace kiln
