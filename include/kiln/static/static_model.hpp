// SPDX-License-Identifier: Apache-2.0
// StaticModel: a network compiled into the program by `kiln compile` (docs/firmware.md): its
// layers, tensors and memory plan are constants, its weights are read in place, its workloads are
// chosen by the compiler and called directly, and it runs in an arena the caller gives it, with no
// heap.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kiln/backends/backend.hpp"
#include "kiln/backends/workload.hpp"
#include "kiln/core/tensor.hpp"
#include "kiln/detail/str_cat.hpp"
#include "kiln/memory/memory_plan.hpp"

namespace kiln {

/// How the integers of a compiled network's quantised tensor map to reals: one scale inline, or
/// one per slice of `axis` in the header's constants.
struct StaticQuantization {
  float scale = 0.0f;  ///< per tensor; 0 when per axis or not quantised
  std::int32_t zero_point = 0;
  std::span<const float> axis_scales{};
  std::int32_t axis = -1;  ///< none
};

/// A tensor of a compiled network: an intermediate tensor at `offset` in the arena, or a constant
/// whose values are at `data` (the header's weights, in flash on a microcontroller).
struct StaticTensor {
  DataType type = DataType::Float32;
  TensorShape shape;
  std::uint64_t offset = 0;
  const void* data = nullptr;
  // A flag, not `data != nullptr`: GCC's sanitizers make a global's address unknown to constant
  // evaluation, and the plan's check runs there.
  bool constant = false;
  StaticQuantization quantization{};

  constexpr bool is_constant() const noexcept { return constant; }
  constexpr std::uint64_t num_bytes() const noexcept { return shape.num_elements() * size_of(type); }
  /// Its TensorInfo, which borrows its scales from this tensor (in the header's table, so for the
  /// program's lifetime): made without the heap.
  TensorInfo info() const {
    const StaticQuantization& q = quantization;
    if (q.scale == 0.0f && q.axis_scales.empty()) return TensorInfo{shape, type, {}};
    const std::span<const float> scales = q.axis_scales.empty() ? std::span(&q.scale, 1) : q.axis_scales;
    return TensorInfo{shape, type,
                      QuantizationInfo{Scales::borrowed(scales), q.zero_point,
                                       q.axis < 0 ? std::nullopt : std::optional<std::uint32_t>(q.axis)}};
  }
};
constexpr StaticTensor in_arena(DataType type, TensorShape shape, std::uint64_t offset,
                                StaticQuantization quantization = {}) {
  return {type, shape, offset, nullptr, false, quantization};
}
constexpr StaticTensor in_flash(DataType type, TensorShape shape, const void* data,
                                StaticQuantization quantization = {}) {
  return {type, shape, 0, data, true, quantization};
}

/// Part of the arena a layer's workload has for itself: its scratch, for while it runs, or what it
/// keeps from load on (KeptMemory). Planned with the tensors.
struct StaticRegion {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

/// A step that copies the caller's buffer for input `binding` into tensor `tensor`.
struct StaticInput {
  BindingId binding = 0;
  std::uint16_t tensor = 0;
};
/// A step that copies tensor `tensor` into the caller's buffer for output `binding`.
struct StaticOutput {
  BindingId binding = 0;
  std::uint16_t tensor = 0;
};
/// A layer of op Op whose data type (ops::layer_data_type) is Type, reading and writing tensors
/// by their index in the network's tensor table.
template <class Op, DataType Type, std::size_t Inputs, std::size_t Outputs>
struct StaticLayer {
  using op = Op;
  static constexpr DataType type = Type;
  const char* name = "";
  typename Op::Params params;
  std::array<std::uint16_t, Inputs> inputs;
  std::array<std::uint16_t, Outputs> outputs;
  StaticRegion scratch{};
  StaticRegion kept{};
  /// The int8 rules of the network it came from (Network::arithmetic).
  QuantizedArithmetic arithmetic = QuantizedArithmetic::Kiln;
};

namespace detail {

template <class T>
inline constexpr bool is_static_layer_v = false;
template <class Op, DataType Type, std::size_t I, std::size_t O>
inline constexpr bool is_static_layer_v<StaticLayer<Op, Type, I, O>> = true;

/// The first backend of B's fallback chain that has its own workload for Op in Type (void when none).
template <class Op, DataType Type, class B>
struct static_workload_owner {
  using type = typename std::conditional_t<has_own_workload_v<Op, B, Type>, std::type_identity<B>,
                                           static_workload_owner<Op, Type, typename B::fallback>>::type;
};
template <class Op, DataType Type>
struct static_workload_owner<Op, Type, void> {
  using type = void;
};

/// Calls f(step, layer) for every layer of a compiled network's tuple, in order.
template <class Layers, class F>
constexpr void for_each_step(const Layers& layers, F&& f) {
  [&]<std::size_t... S>(std::index_sequence<S...>) {
    (f(std::integral_constant<std::size_t, S>{}, std::get<S>(layers)), ...);
  }
  (std::make_index_sequence<std::tuple_size_v<Layers>>{});
}

/// The tensors a step reads and writes.
template <class L>
constexpr std::span<const std::uint16_t> step_reads(const L& layer) {
  if constexpr (std::same_as<L, StaticInput>)
    return {};
  else if constexpr (std::same_as<L, StaticOutput>)
    return {&layer.tensor, 1};
  else
    return layer.inputs;
}
template <class L>
constexpr std::span<const std::uint16_t> step_writes(const L& layer) {
  if constexpr (std::same_as<L, StaticInput>)
    return {&layer.tensor, 1};
  else if constexpr (std::same_as<L, StaticOutput>)
    return {};
  else
    return layer.outputs;
}

/// The buffers of a compiled network's arena, with the lifetimes its steps give them (as
/// arena_tensors does for the dynamic path: from the step that writes a tensor to the last that
/// reads it; scratch for its step alone; what a workload keeps for all steps), and the offsets its
/// header gave them.
template <std::size_t Tensors, std::size_t Steps>
struct StaticBuffers {
  std::array<BufferRequest, Tensors + 2 * Steps> requests{};  // tensors, scratch, kept
  std::array<std::uint64_t, Tensors + 2 * Steps> offsets{};
  std::array<std::uint64_t, Tensors + 2 * Steps> alignments{};
  std::size_t count = 0;

  constexpr void add(BufferRequest request, std::uint64_t offset, std::uint64_t alignment) {
    requests[count] = request;
    offsets[count] = offset;
    alignments[count++] = alignment;
  }
};

/// Why a compiled network's memory plan is unsound, or an empty string: every arena tensor is
/// written before it is read and lies inside the arena at an offset aligned to `alignment` (what a
/// workload keeps, to KeptMemory::alignment), and no
/// two buffers alive at the same step share a byte. The compiler evaluates it for every StaticModel.
template <const auto& Layers, const auto& Tensors>
constexpr const char* static_plan_error(std::uint64_t arena_bytes, std::uint64_t alignment) {
  using LayerTuple = std::remove_cvref_t<decltype(Layers)>;
  constexpr std::size_t num_tensors = std::size(Tensors), num_steps = std::tuple_size_v<LayerTuple>;
  std::array<std::uint32_t, num_tensors> first{}, last{};
  std::array<bool, num_tensors> written{};
  const char* error = nullptr;
  StaticBuffers<num_tensors, num_steps> buffers;
  for_each_step(Layers, [&](auto step, const auto& layer) {
    for (std::uint16_t t : step_reads(layer)) {
      if (t >= num_tensors)
        error = "a step reads a tensor the table does not have";
      else if (!Tensors[t].is_constant() && !written[t])
        error = "a step reads an arena tensor no earlier step wrote";
      else
        last[t] = step;
    }
    for (std::uint16_t t : step_writes(layer)) {
      if (t >= num_tensors || Tensors[t].is_constant()) {
        error = "a step writes a constant or a tensor the table does not have";
      } else if (written[t]) {
        error = "two steps write the same tensor";
      } else {
        written[t] = true;
        first[t] = last[t] = step;
      }
    }
    if constexpr (is_static_layer_v<std::remove_cvref_t<decltype(layer)>>) {
      if (layer.scratch.bytes != 0)
        buffers.add({layer.scratch.bytes, std::uint32_t(step), std::uint32_t(step)}, layer.scratch.offset, alignment);
      if (layer.kept.bytes != 0)
        buffers.add({layer.kept.bytes, 0, std::uint32_t(num_steps)}, layer.kept.offset, KeptMemory::alignment);
    }
  });
  if (error) return error;
  for (std::size_t t = 0; t < num_tensors; ++t)
    if (written[t]) buffers.add({Tensors[t].num_bytes(), first[t], last[t]}, Tensors[t].offset, alignment);
  for (std::size_t i = 0; i < buffers.count; ++i) {
    const BufferRequest& a = buffers.requests[i];
    if (buffers.offsets[i] % buffers.alignments[i] != 0) return "a buffer is not aligned to the backend's alignment";
    if (buffers.offsets[i] + a.size > arena_bytes) return "a buffer ends past the arena";
    for (std::size_t j = 0; j < i; ++j) {
      const BufferRequest& b = buffers.requests[j];
      const bool disjoint =
          buffers.offsets[i] + a.size <= buffers.offsets[j] || buffers.offsets[j] + b.size <= buffers.offsets[i];
      if (lifetimes_overlap(a, b) && a.size != 0 && b.size != 0 && !disjoint)
        return "two buffers alive at the same step share memory";
    }
  }
  return "";
}

/// What one step of StaticModel M keeps and does: a copy in or out for StaticInput and
/// StaticOutput; a layer's workload and the views it runs on for StaticLayer.
template <class M, class L>
struct StaticStep;

}  // namespace detail

/// A network compiled by `kiln compile` (docs/firmware.md), run by Backend's workloads (each layer by
/// the first backend of Backend's fallback chain that has a workload for its op and data type).
/// `Layers` is the header's tuple of steps in execution order, `Tensors` its tensor table, and
/// `ArenaBytes` the size of the arena its memory plan needs.
///
/// \code
/// alignas(64) static std::byte arena[kws::arena_bytes];
/// kws::Model<kiln::RefBackend> model{arena};   // makes the workloads: no allocation
/// kiln::Status s = model.run(std::span<const float>(features), std::span<float>(scores));
/// \endcode
///
/// The memory plan is checked by the compiler. The model does not allocate, provided the
/// workloads it makes do not (RefBackend's Float32 workloads do not); it is neither copied nor
/// moved, since its workloads may keep views of it.
template <class Backend, const auto& Layers, const auto& Tensors, std::uint64_t ArenaBytes>
class StaticModel {
  using LayerTuple = std::remove_cvref_t<decltype(Layers)>;
  static constexpr std::size_t num_tensors = std::size(Tensors);
  static constexpr std::size_t num_steps = std::tuple_size_v<LayerTuple>;
  using Context = typename Backend::context;

  static constexpr const char* plan_error = detail::static_plan_error<Layers, Tensors>(ArenaBytes, Backend::alignment);
  static_assert(plan_error[0] == '\0',
                "kiln: this compiled network's memory plan is unsound (see static_plan_error); was its header edited? "
                "Write it again with kiln compile");
  static_assert(has_host_memory_v<Backend>,
                "kiln: a compiled network runs on a backend whose tensors are in host memory");
  static_assert(!workloads_compiled_v<Backend>,
                "kiln: a compiled network calls its workloads directly, so it takes them from the headers: build it "
                "without KILN_COMPILED_LIBRARY");

  template <class M, class L>
  friend struct detail::StaticStep;

 public:
  using backend = Backend;
  static constexpr std::uint64_t arena_bytes = ArenaBytes;
  static constexpr std::size_t arena_alignment = Backend::alignment;

  /// Makes every layer's workload with tensors in `arena` (at least arena_bytes, aligned to
  /// arena_alignment). A failure is kept: status() and run() return it.
  explicit StaticModel(std::span<std::byte> arena) {
    for (std::size_t t = 0; t < num_tensors; ++t) infos_[t] = Tensors[t].info();
    if (arena.size() < ArenaBytes)
      status_ = Status::error(ErrorCode::InvalidArgument, "the arena has ", arena.size(), " bytes; the network needs ",
                              ArenaBytes);
    else if (reinterpret_cast<std::uintptr_t>(arena.data()) % arena_alignment != 0)
      status_ = Status::error(ErrorCode::InvalidArgument, "the arena must be aligned to ", arena_alignment, " bytes");
    if (!status_) return;
    for (std::size_t t = 0; t < num_tensors; ++t)
      data_[t] = Tensors[t].is_constant() ? const_cast<void*>(Tensors[t].data) : arena.data() + Tensors[t].offset;
    detail::for_each_step(Layers, [&](auto step, const auto& layer) {
      if (status_) status_ = std::get<step>(steps_).make(layer, *this, arena);
    });
  }
  StaticModel(const StaticModel&) = delete;
  StaticModel& operator=(const StaticModel&) = delete;

  /// Ok, or why the model cannot run (its arena, or a layer the backend refused).
  const Status& status() const noexcept { return status_; }

  /// One inference: `inputs` and `outputs` are the caller's buffers by binding, in any order, each
  /// of its binding's type and shape (input_info / output_info).
  Status run(std::span<const InputBinding> inputs, std::span<const OutputBinding> outputs) {
    if (!status_) return status_;
    Status result = Status::ok();
    detail::for_each_step(Layers, [&](auto step, const auto& layer) {
      if (result) result = std::get<step>(steps_).run(layer, *this, inputs, outputs);
    });
    return result;
  }
  /// One inference of a network with one input and one output, from and into typed buffers.
  template <class In, class Out>
  Status run(std::span<const In> input, std::span<Out> output) {
    static_assert(count_of<StaticInput>() == 1 && count_of<StaticOutput>() == 1,
                  "kiln: run(input, output) is for a network with one input and one output; pass bindings");
    if (!status_) return status_;
    const InputBinding in{first_binding<StaticInput>(), {input_info(first_binding<StaticInput>()), input.data()}};
    const OutputBinding out{first_binding<StaticOutput>(), {output_info(first_binding<StaticOutput>()), output.data()}};
    if (!holds<In>(in.tensor.info.type) || !holds<Out>(out.tensor.info.type))
      return Status::error(ErrorCode::InvalidArgument, "the network takes ", to_string(in.tensor.info.type),
                           " and gives ", to_string(out.tensor.info.type), "; the buffers hold other elements");
    if (input.size_bytes() != in.tensor.info.num_bytes() || output.size_bytes() != out.tensor.info.num_bytes())
      return Status::error(ErrorCode::InvalidArgument, "the input buffer has ", input.size_bytes(),
                           " bytes and the output ", output.size_bytes(), "; the network takes ",
                           in.tensor.info.num_bytes(), " and gives ", out.tensor.info.num_bytes());
    return run(std::span(&in, 1), std::span(&out, 1));
  }

  /// The type and shape of input or output `binding` (a scalar Float32 info when there is none).
  const TensorInfo& input_info(BindingId binding) const { return info_of<StaticInput>(binding); }
  const TensorInfo& output_info(BindingId binding) const { return info_of<StaticOutput>(binding); }

 private:
  /// Whether a buffer of T holds elements of `type`.
  template <class T>
  static constexpr bool holds(DataType type) {
    using E = std::remove_const_t<T>;
    if constexpr (std::same_as<E, float>)
      return type == DataType::Float32;
    else if constexpr (std::same_as<E, std::int32_t>)
      return type == DataType::Signed32;
    else if constexpr (std::same_as<E, std::uint8_t>)
      return type == DataType::QAsymmU8;
    else if constexpr (std::same_as<E, std::int8_t>)
      return type == DataType::QAsymmS8 || type == DataType::QSymmS8;
    else if constexpr (std::same_as<E, bool>)
      return type == DataType::Boolean;
    else
      return sizeof(E) == size_of(type) && !std::is_arithmetic_v<E>;  // Half, or a user's element type
  }
  static constexpr const StaticTensor& tensor(std::size_t t) { return Tensors[t]; }
  template <class Kind>
  static constexpr std::size_t count_of() {
    std::size_t n = 0;
    detail::for_each_step(
        Layers, [&](auto, const auto& layer) { n += std::same_as<std::remove_cvref_t<decltype(layer)>, Kind>; });
    return n;
  }
  template <class Kind>
  static constexpr BindingId first_binding() {
    BindingId found = 0;
    detail::for_each_step(Layers, [&](auto, const auto& layer) {
      if constexpr (std::same_as<std::remove_cvref_t<decltype(layer)>, Kind>) found = layer.binding;
    });
    return found;
  }
  template <class Kind>
  const TensorInfo& info_of(BindingId binding) const {
    const TensorInfo* found = &none_;
    detail::for_each_step(Layers, [&](auto, const auto& layer) {
      if constexpr (std::same_as<std::remove_cvref_t<decltype(layer)>, Kind>)
        if (layer.binding == binding) found = &infos_[layer.tensor];
    });
    return *found;
  }

  /// Where a step finds the caller's buffer for its binding, or why it cannot.
  template <class Binding>
  Status find(std::span<const Binding> given, BindingId binding, std::uint16_t tensor, const void*& data) const {
    const std::string_view what = std::same_as<Binding, InputBinding> ? "input" : "output";
    for (const Binding& b : given)
      if (b.id == binding) {
        const TensorInfo& info = infos_[tensor];
        if (b.tensor.info.type != info.type || b.tensor.info.shape != info.shape)
          return Status::error(ErrorCode::InvalidArgument, what, " binding ", binding, " expects ", info.to_string(),
                               " but the buffer is ", b.tensor.info.to_string());
        if (b.tensor.data == nullptr && info.num_bytes() != 0)
          return Status::error(ErrorCode::InvalidArgument, what, " binding ", binding, " has a null data pointer");
        data = b.tensor.data;
        return Status::ok();
      }
    return Status::error(ErrorCode::InvalidArgument, what, " binding ", binding, " is missing");
  }

  template <std::size_t... S>
  static auto step_states(std::index_sequence<S...>)
      -> std::tuple<detail::StaticStep<StaticModel, std::remove_cvref_t<std::tuple_element_t<S, LayerTuple>>>...>;

  Context context_;
  Status status_ = Status::ok();
  std::array<TensorInfo, num_tensors> infos_{};
  std::array<void*, num_tensors> data_{};
  decltype(step_states(std::make_index_sequence<num_steps>{})) steps_{};
  TensorInfo none_{};
};

namespace detail {

template <class M, class L>
struct StaticStep {
  static_assert(std::same_as<L, StaticInput> || std::same_as<L, StaticOutput>);
  Status make(const L&, const M&, std::span<std::byte>) { return Status::ok(); }
  Status run(const L& step, M& model, std::span<const InputBinding> inputs,
             std::span<const OutputBinding> outputs) const {
    const void* user = nullptr;
    const std::uint64_t bytes = model.infos_[step.tensor].num_bytes();
    if constexpr (std::same_as<L, StaticInput>) {
      if (auto s = model.find(inputs, step.binding, step.tensor, user); !s) return s;
      if (bytes != 0) std::memcpy(model.data_[step.tensor], user, bytes);
    } else {
      if (auto s = model.find(outputs, step.binding, step.tensor, user); !s) return s;
      if (bytes != 0) std::memcpy(const_cast<void*>(user), model.data_[step.tensor], bytes);
    }
    return Status::ok();
  }
};

template <class M, class Op, DataType Type, std::size_t Inputs, std::size_t Outputs>
struct StaticStep<M, StaticLayer<Op, Type, Inputs, Outputs>> {
  using Owner = typename static_workload_owner<Op, Type, typename M::backend>::type;
  static_assert(!std::is_void_v<Owner>,
                "kiln: no backend of the compiled network's backend or its fallbacks has a workload for one of its "
                "layers' op in its data type");
  using W = typename own_workloads<Owner>::template type<Op, Type>;
  using Layer = StaticLayer<Op, Type, Inputs, Outputs>;

  std::optional<made_workload_t<W, Op, typename Owner::context>> workload;
  std::array<ConstTensor, Inputs> in{};
  std::array<Tensor, Outputs> out{};
  std::span<std::byte> scratch;

  Status make(const Layer& layer, M& model, std::span<std::byte> arena) {
    std::array<TensorInfo, Inputs> input_infos{};
    std::array<TensorInfo, Outputs> output_infos{};
    std::array<const void*, Inputs> constants{};
    for (std::size_t i = 0; i < Inputs; ++i) {
      input_infos[i] = model.infos_[layer.inputs[i]];
      in[i] = {input_infos[i], model.data_[layer.inputs[i]]};
      constants[i] = M::tensor(layer.inputs[i]).data;
    }
    for (std::size_t o = 0; o < Outputs; ++o) {
      output_infos[o] = model.infos_[layer.outputs[o]];
      out[o] = {output_infos[o], model.data_[layer.outputs[o]]};
    }
    KeptMemory kept(arena.subspan(layer.kept.offset, layer.kept.bytes));
    const WorkloadInfo<Op> info{layer.params, input_infos, output_infos, constants, &kept, layer.arithmetic};
    auto& context = static_cast<typename Owner::context&>(model.context_);
    auto refuse = [&](const Status& s) { return s.with_context(str_cat("layer '", layer.name, "'")); };
    if constexpr (requires { W::is_supported(info); })
      if (Status s = W::is_supported(info); !s) return refuse(s);
    auto made = make_workload<W>(info, context);
    if (!made) return refuse(made.status());
    workload.emplace(std::move(*made));
    if constexpr (requires { workload->scratch(context); }) {
      const ScratchSize needed = workload->scratch(context);
      if (needed.bytes > layer.scratch.bytes)
        return refuse(Status::error(ErrorCode::Unsupported, "its workload on ", Owner::id, " needs ", needed.bytes,
                                    " bytes of scratch; the header planned ", layer.scratch.bytes,
                                    " (run kiln compile for this backend)"));
      scratch = arena.subspan(layer.scratch.offset, layer.scratch.bytes);
    }
    return Status::ok();
  }

  Status run(const Layer& layer, M& model, std::span<const InputBinding>, std::span<const OutputBinding>) const {
    Status status = run_workload(*workload, in, out, static_cast<typename Owner::context&>(model.context_), scratch);
    return status ? status : status.with_context(str_cat("layer '", layer.name, "'"));
  }
};

}  // namespace detail
}  // namespace kiln
