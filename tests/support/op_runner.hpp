// SPDX-License-Identifier: Apache-2.0
// Runs a single layer through the whole kiln pipeline (builder, optimizer, runtime) for op tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>
#include <kiln/kiln.hpp>

namespace kiln::test {

namespace detail {
/// The backends of a TypeList for which Keep<B>::value holds, as a std::tuple.
template <template <class> class Keep, class List>
struct tuple_of;
template <template <class> class Keep, class... Bs>
struct tuple_of<Keep, TypeList<Bs...>> {
  using type = decltype(std::tuple_cat(std::conditional_t<Keep<Bs>::value, std::tuple<Bs>, std::tuple<>>{}...));
};
template <class B>
struct is_host_backend : std::bool_constant<has_host_memory_v<B>> {};
template <class B>
struct is_accelerated_host_backend : std::bool_constant<has_host_memory_v<B> && !std::same_as<B, RefBackend>> {};
}  // namespace detail

/// The backends every op test runs on; each is compared with the independent reference data.
/// The accelerated ones are also compared with RefBackend on random data of awkward shapes.
/// test_ops_cl compiles the op tests again with KILN_TEST_CL set, with ClBackend under test.
#if KILN_TEST_CL
using tested_backends = std::tuple<ClBackend>;
using accelerated_backends = std::tuple<ClBackend>;
#else
using tested_backends = typename detail::tuple_of<detail::is_host_backend, enabled_backends>::type;
using accelerated_backends = typename detail::tuple_of<detail::is_accelerated_host_backend, enabled_backends>::type;
#endif

/// A tensor with owned data, as test inputs and outputs.
struct TestTensor {
  TensorInfo info;
  std::vector<std::byte> bytes;
  bool constant = false;  ///< feed it through a Constant layer instead of an Input

  static TestTensor f32(TensorShape shape, const std::vector<float>& values) {
    return make(TensorInfo{shape, DataType::Float32, {}}, values.data(), values.size() * sizeof(float));
  }
  static TestTensor i32(TensorShape shape, const std::vector<std::int32_t>& values) {
    return make(TensorInfo{shape, DataType::Signed32, {}}, values.data(), values.size() * sizeof(std::int32_t));
  }
  /// A Boolean tensor: each value non-zero is true (stored as 1).
  static TestTensor boolean(TensorShape shape, const std::vector<int>& values) {
    std::vector<std::uint8_t> bytes;
    for (int v : values) bytes.push_back(v != 0 ? 1 : 0);
    return make(TensorInfo{shape, DataType::Boolean, {}}, bytes.data(), bytes.size());
  }
  /// An 8-bit quantised tensor (QAsymmU8, QAsymmS8 or QSymmS8) holding `values`.
  static TestTensor q8(TensorShape shape, DataType type, QuantizationInfo quantization,
                       const std::vector<std::int32_t>& values) {
    std::vector<std::uint8_t> bytes;
    for (std::int32_t v : values) bytes.push_back(static_cast<std::uint8_t>(v));
    return make(TensorInfo{shape, type, std::move(quantization)}, bytes.data(), bytes.size());
  }
  static TestTensor make(TensorInfo info, const void* data, std::size_t size) {
    TestTensor t{std::move(info), std::vector<std::byte>(size)};
    if (size != 0) std::memcpy(t.bytes.data(), data, size);
    return t;
  }
  TestTensor as_constant() const {
    TestTensor t = *this;
    t.constant = true;
    return t;
  }
  /// The same values as Signed32 (fixture files store every tensor as floats).
  TestTensor to_i32() const {
    std::vector<std::int32_t> ints;
    for (float v : floats()) ints.push_back(static_cast<std::int32_t>(v));
    return i32(info.shape, ints);
  }
  /// The elements of an 8-bit quantised, Signed32 or Boolean tensor.
  std::vector<std::int32_t> integers() const {
    std::vector<std::int32_t> v;
    for (std::uint64_t i = 0; i < info.num_elements(); ++i) {
      if (info.type == DataType::Signed32) {
        std::int32_t x;
        std::memcpy(&x, bytes.data() + 4 * i, 4);
        v.push_back(x);
      } else {
        const auto byte = std::to_integer<std::uint8_t>(bytes[i]);
        v.push_back(info.type == DataType::QAsymmU8 ? byte : static_cast<std::int8_t>(byte));
      }
    }
    return v;
  }
  /// The elements of a Float32 tensor, or of a Float16 one widened.
  std::vector<float> floats() const {
    if (info.type == DataType::Float16) {
      std::vector<Half> halves(bytes.size() / sizeof(Half));
      if (!halves.empty()) std::memcpy(halves.data(), bytes.data(), bytes.size());
      std::vector<float> v;
      for (Half h : halves) v.push_back(half_to_float(h));
      return v;
    }
    std::vector<float> v(bytes.size() / sizeof(float));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
  /// A Float32 tensor's elements rounded to Float16 (float_to_half); any other tensor as it is.
  TestTensor to_float16() const {
    if (info.type != DataType::Float32) return *this;
    std::vector<Half> halves;
    for (float v : floats()) halves.push_back(float_to_half(v));
    TestTensor t =
        make(TensorInfo{info.shape, DataType::Float16, info.quantization}, halves.data(), halves.size() * sizeof(Half));
    t.constant = constant;
    return t;
  }
};

/// Builds the network Input(s)/Constant(s) -> Op -> Output(s), runs it once on Backend (with
/// RefBackend behind it for any other backend; a Runtime with OpSet<Op>, so only Op's workloads
/// are compiled) and returns the outputs, or the first error. `threads` goes to backends that take
/// a thread count (0: their default); `workload_owner`, when given, receives the id of the backend
/// whose workload ran the op (Backend's own, or one it inherits). `output_types` declares the
/// outputs' types (Network::set_output_type), one per output or none; `arithmetic` is the
/// network's (int8 rules).
template <class Op, class Backend = RefBackend>
Expected<std::vector<TestTensor>> run_op(const typename Op::Params& params, const std::vector<TestTensor>& inputs,
                                         unsigned threads = 0, std::string_view* workload_owner = nullptr,
                                         const std::vector<ops::OutputType>& output_types = {},
                                         QuantizedArithmetic arithmetic = QuantizedArithmetic::Kiln) {
  Network net;
  net.set_arithmetic(arithmetic);
  const LayerId layer = net.add_layer<Op>(params, inputs.size(), "op");
  std::vector<InputBinding> feeds;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    OutputSlot slot = inputs[i].constant
                          ? net.add_constant<std::byte>(inputs[i].info, inputs[i].bytes, "constant" + std::to_string(i))
                          : net.add_input(static_cast<BindingId>(i), inputs[i].info, "input" + std::to_string(i));
    if (auto s = net.connect(slot, layer, i); !s) return s;
    if (!inputs[i].constant) feeds.push_back({static_cast<BindingId>(i), {inputs[i].info, inputs[i].bytes.data()}});
  }
  const std::size_t outputs = ops::num_outputs<Op>(params);
  for (std::size_t i = 0; i < outputs; ++i)
    net.add_output(static_cast<BindingId>(i), net.output(layer, static_cast<std::uint32_t>(i)),
                   "output" + std::to_string(i));
  for (std::size_t i = 0; i < output_types.size(); ++i)
    if (auto s = net.set_output_type(net.output(layer, static_cast<std::uint32_t>(i)), output_types[i].type,
                                     output_types[i].quantization);
        !s)
      return s;

  auto run = [&]<class... Bs>(std::type_identity<Runtime<Bs...>>) -> Expected<std::vector<TestTensor>> {
    auto optimized = Runtime<Bs...>::optimize(std::move(net), {{Backend::id}});
    if (!optimized) return optimized.status();
    if (workload_owner) *workload_owner = optimized->assignment(layer).workload->backend;
    typename Runtime<Bs...>::Options backend_options;
    if constexpr (requires { backend_options.template get<Backend>().threads; })
      backend_options.template get<Backend>().threads = threads;
    // Split even the tests' small layers over the threads, so that the split is what is tested.
    if constexpr (requires { backend_options.template get<Backend>().min_parallel_work; })
      backend_options.template get<Backend>().min_parallel_work = 0;
    Runtime<Bs...> runtime({}, backend_options);
    auto id = runtime.load(*optimized);
    if (!id) return id.status();
    std::vector<TestTensor> results;
    std::vector<OutputBinding> sinks;
    for (std::size_t i = 0; i < outputs; ++i) {
      auto info = runtime.output_info(*id, static_cast<BindingId>(i));
      if (!info) return info.status();
      results.push_back({*info, std::vector<std::byte>(info->num_bytes())});
    }
    for (std::size_t i = 0; i < outputs; ++i)
      sinks.push_back({static_cast<BindingId>(i), {results[i].info, results[i].bytes.data()}});
    if (auto status = runtime.enqueue(*id, feeds, sinks); !status) return status;
    return results;
  };
  if constexpr (std::same_as<Backend, RefBackend>)
    return run(std::type_identity<Runtime<OpSet<Op>, RefBackend>>{});
  else
    return run(std::type_identity<Runtime<OpSet<Op>, Backend, RefBackend>>{});
}

/// Checks `actual` against `expected` element by element: |a - e| <= atol + rtol * |e|, NaNs equal.
/// On failure reports the shape, the first bad index and the largest errors.
/// Quantised, Signed32 and Boolean tensors must match exactly: same type, quantisation and integers.
/// `extra`, when given, widens the tolerance of each element by its own amount.
inline void check_close(const TestTensor& actual, const TestTensor& expected, double rtol, double atol,
                        std::span<const float> extra = {}) {
  INFO("shape " << expected.info.shape.to_string() << ", got " << actual.info.shape.to_string());
  REQUIRE(actual.info.shape == expected.info.shape);
  if (is_quantized(expected.info.type) || expected.info.type == DataType::Signed32 ||
      expected.info.type == DataType::Boolean) {
    REQUIRE(actual.info == expected.info);
    const auto a = actual.integers(), e = expected.integers();
    std::size_t bad = 0, first_bad = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != e[i] && bad++ == 0) first_bad = i;
    INFO(bad << " elements differ; first at " << first_bad << ": got " << (bad ? a[first_bad] : 0) << ", expected "
             << (bad ? e[first_bad] : 0));
    CHECK(bad == 0);
    return;
  }
  const auto a = actual.floats(), e = expected.floats();
  REQUIRE(a.size() == e.size());
  std::size_t bad = 0, first_bad = 0;
  double max_abs = 0.0, max_rel = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == e[i] || (std::isnan(e[i]) && std::isnan(a[i]))) continue;
    const double diff = std::fabs(double(a[i]) - double(e[i]));
    max_abs = std::max(max_abs, diff);
    if (e[i] != 0.0f) max_rel = std::max(max_rel, diff / std::fabs(double(e[i])));
    if (!(diff <= atol + rtol * std::fabs(double(e[i])) + (extra.empty() ? 0.0 : double(extra[i])))) {
      if (bad++ == 0) first_bad = i;
    }
  }
  INFO("max abs error " << max_abs << ", max rel error " << max_rel << "; first bad index " << first_bad
                        << (bad ? " (got " + std::to_string(a[first_bad]) + ", expected " +
                                      std::to_string(e[first_bad]) + ")"
                                : std::string()));
  CHECK(bad == 0);
}

/// The type of each expected output, declared for the op's outputs (quantised outputs need it).
inline std::vector<ops::OutputType> declared_types(const std::vector<TestTensor>& expected) {
  std::vector<ops::OutputType> types;
  for (const TestTensor& t : expected) types.push_back({t.info.type, t.info.quantization});
  return types;
}

/// Runs an op and checks its outputs against expected tensors, whose types it declares; `extra`
/// widens the tolerance of a single output element by element (check_close).
template <class Op, class Backend = RefBackend>
void check_op(const typename Op::Params& params, const std::vector<TestTensor>& inputs,
              const std::vector<TestTensor>& expected, double rtol = 1e-5, double atol = 1e-6,
              std::span<const float> extra = {}) {
  REQUIRE((extra.empty() || expected.size() == 1));
  auto outputs = run_op<Op, Backend>(params, inputs, 0, nullptr, declared_types(expected));
  INFO("backend " << Backend::id);
  if (!outputs) FAIL(outputs.status().message());
  REQUIRE(outputs->size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("output " << i);
    check_close((*outputs)[i], expected[i], rtol, atol, extra);
  }
}

/// Deterministic values in [low, high) for comparisons between backends.
inline TestTensor random_f32(TensorShape shape, std::uint32_t seed, float low = -1.0f, float high = 1.0f) {
  std::vector<float> values(shape.num_elements());
  std::uint32_t state = seed * 2654435761u + 1u;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;  // Numerical Recipes LCG: the same data on every platform
    v = low + (high - low) * static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
  }
  return TestTensor::f32(shape, values);
}

/// Deterministic 8-bit values over the whole range of `type` (QAsymmU8, QAsymmS8, QSymmS8).
inline TestTensor random_q8(TensorShape shape, DataType type, QuantizationInfo quantization, std::uint32_t seed) {
  const QuantizedRange range = quantized_range(type);
  std::vector<std::int32_t> values(shape.num_elements());
  std::uint32_t state = seed * 2654435761u + 7u;
  for (std::int32_t& v : values) {
    state = state * 1664525u + 1013904223u;
    v = range.lo + static_cast<std::int32_t>((state >> 8) % static_cast<std::uint32_t>(range.hi - range.lo + 1));
  }
  return TestTensor::q8(shape, type, std::move(quantization), values);
}

/// Whether Backend has a workload of its own for Op in `type` (compiled from the headers or taken
/// from a library): the Float16 cases below compare only the backends that claim the type.
template <class Op, class Backend>
bool has_own_workload(DataType type) {
  for (const WorkloadEntry& entry : kiln::detail::own_entries<Backend, OpSet<Op>>(ops::op_index_v<Op>))
    if (entry.data_type == type) return true;
  return false;
}

/// Whether Backend leaves an Op layer of TensorFlow Lite's arithmetic to RefBackend by design:
/// NeonBackend's int8 averages (its pooling kernels requantize sums; TensorFlow Lite divides).
template <class Op, class Backend>
bool runs_on_ref_in_tflite(const typename Op::Params& params, QuantizedArithmetic arithmetic) {
#if KILN_WITH_NEON
  if constexpr (std::same_as<Op, ops::Pooling2d> && std::same_as<Backend, NeonBackend>)
    return arithmetic == QuantizedArithmetic::TfLite && params.kind == ops::PoolingKind::Average;
#endif
  (void)params;
  (void)arithmetic;
  return false;
}

template <class Op, class Backend>
void check_against_ref(const typename Op::Params& params, const std::vector<TestTensor>& inputs, double rtol = 1e-5,
                       double atol = 1e-5, const std::vector<ops::OutputType>& output_types = {});

/// Whether Backend's Float16 kernel of Op sums its products in Float16 (NeonBackend's convolution,
/// depthwise convolution and fully connected with armv8.2-a's half-precision arithmetic, decision
/// 0020), rather than in Float32 with one rounding at the end.
template <class Op, class Backend>
bool accumulates_in_float16() {
#if KILN_WITH_NEON
  if constexpr (std::same_as<Backend, NeonBackend> &&
                (std::same_as<Op, ops::Convolution2d> || std::same_as<Op, ops::DepthwiseConvolution2d> ||
                 std::same_as<Op, ops::FullyConnected>))
    return neon::float16_arithmetic();
#endif
  return false;
}

/// What summing K products in Float16 may add to each output's error: (K + 1) 2^-11 times the sum
/// of the products' magnitudes (the bound of a chain of K fused multiply-adds and the bias),
/// twice over for fused activations steeper than 1 (HardSwish's 1.5), plus K + 1 steps of
/// 2^-24 for products below Float16's normal range. RefBackend computes the magnitudes: the op on
/// the inputs' absolute values (Float32 or Float16) in Float32, without its activation. Input 1 is
/// the weights: [N, ...] with K values per output channel, or a depthwise [1, H, W, C] with K = H W.
template <class Op>
std::vector<float> float16_accumulation_bound(const typename Op::Params& params,
                                              const std::vector<TestTensor>& inputs) {
  typename Op::Params plain = params;
  if constexpr (requires { plain.activation.reset(); }) plain.activation.reset();
  std::vector<TestTensor> magnitudes;
  for (const TestTensor& t : inputs) {
    std::vector<float> values = t.floats();
    for (float& v : values) v = std::fabs(v);
    magnitudes.push_back(TestTensor::f32(t.info.shape, values));
    magnitudes.back().constant = t.constant;
  }
  auto sums = run_op<Op, RefBackend>(plain, magnitudes);
  REQUIRE(sums);
  const TensorShape& ws = inputs[1].info.shape;
  const double k = std::same_as<Op, ops::DepthwiseConvolution2d> ? double(ws[1]) * ws[2]
                                                                 : double(inputs[1].info.num_elements()) / ws[0];
  std::vector<float> bound;
  for (float sum : (*sums)[0].floats()) bound.push_back(float(2.0 * (k + 1) * (0x1p-11 * sum + 0x1p-24)));
  return bound;
}

/// The Float32 case of check_against_ref again in Float16, when Backend runs Op in Float16 itself:
/// every Float32 input rounded to Float16. RefBackend's Float16 result is its Float32 result on the
/// same halves, rounded (decision 0019), so Backend's may differ from it by the Float32 tolerance
/// and by one Float16 rounding step (2^-10 relative, 2^-24 absolute below the normal range), and
/// where Backend sums products in Float16, by float16_accumulation_bound.
template <class Op, class Backend>
void check_float16_against_ref(const typename Op::Params& params, const std::vector<TestTensor>& inputs, double rtol,
                               double atol) {
  if (!has_own_workload<Op, Backend>(DataType::Float16)) return;
  std::vector<TestTensor> halves;
  for (const TestTensor& t : inputs) halves.push_back(t.to_float16());
  auto expected = run_op<Op, RefBackend>(params, halves);
  if (!expected) FAIL("RefBackend in Float16: " << expected.status().message());
  std::string_view owner;
  auto one_thread = run_op<Op, Backend>(params, halves, 1, &owner);
  // A backend without a fallback (ClBackend) whose Float16 workload refuses this case fails it.
  if (!one_thread && one_thread.status().code() == ErrorCode::Unsupported) return;
  auto three_threads = run_op<Op, Backend>(params, halves, 3);
  INFO("backend " << Backend::id << " in Float16");
  if (!one_thread) FAIL(one_thread.status().message());
  if (!three_threads) FAIL(three_threads.status().message());
  if (owner != Backend::id) return;  // its Float16 workload refused this case (test_float16 pins the ones it must run)
  REQUIRE(one_thread->size() == expected->size());
  std::vector<float> accumulation;
  if (accumulates_in_float16<Op, Backend>()) accumulation = float16_accumulation_bound<Op>(params, inputs);
  for (std::size_t i = 0; i < expected->size(); ++i) {
    INFO("output " << i);
    CHECK((*one_thread)[i].info.type == (*expected)[i].info.type);
    const bool same_bytes_for_1_and_3_threads = (*one_thread)[i].bytes == (*three_threads)[i].bytes;
    CHECK(same_bytes_for_1_and_3_threads);
    check_close((*one_thread)[i], (*expected)[i], rtol + 1.0 / 1024, atol + 0x1p-24, accumulation);
  }
}

/// Runs an op on Backend with one thread and with three, and on RefBackend: the outputs must be
/// bit-identical across thread counts and within tolerance of RefBackend's. A Float32 case runs
/// in Float16 too (check_float16_against_ref).
template <class Op, class Backend>
void check_against_ref(const typename Op::Params& params, const std::vector<TestTensor>& inputs, double rtol,
                       double atol, const std::vector<ops::OutputType>& output_types) {
  // An int8 case runs in both arithmetics (decisions 0014 and 0023).
  const bool quantized_case =
      std::ranges::any_of(output_types, [](const ops::OutputType& t) { return is_quantized(t.type); });
  for (QuantizedArithmetic arithmetic : {QuantizedArithmetic::Kiln, QuantizedArithmetic::TfLite}) {
    if (arithmetic == QuantizedArithmetic::TfLite && !quantized_case) break;
    INFO("arithmetic " << to_string(arithmetic));
    auto expected = run_op<Op, RefBackend>(params, inputs, 0, nullptr, output_types, arithmetic);
    if (!expected) FAIL(expected.status().message());
    std::string_view owner;
    auto one_thread = run_op<Op, Backend>(params, inputs, 1, &owner, output_types, arithmetic);
    auto three_threads = run_op<Op, Backend>(params, inputs, 3, nullptr, output_types, arithmetic);
    INFO("backend " << Backend::id);
    if (!one_thread) FAIL(one_thread.status().message());
    if (!three_threads) FAIL(three_threads.status().message());
    // Backend's own kernel ran, not the Ref workload it inherits (NeonBackend leaves TensorFlow
    // Lite's int8 averages to it).
    if (!runs_on_ref_in_tflite<Op, Backend>(params, arithmetic)) REQUIRE(owner == Backend::id);
    REQUIRE(one_thread->size() == expected->size());
    for (std::size_t i = 0; i < expected->size(); ++i) {
      INFO("output " << i);
      const bool same_bytes_for_1_and_3_threads =
          (*one_thread)[i].bytes == (*three_threads)[i].bytes;  // not the vectors: TAP lines
      CHECK(same_bytes_for_1_and_3_threads);
      check_close((*one_thread)[i], (*expected)[i], rtol, atol);
    }
  }
  const bool float32_case = output_types.empty() && std::ranges::any_of(inputs, [](const TestTensor& t) {
                              return t.info.type == DataType::Float32;
                            });
  if (float32_case) check_float16_against_ref<Op, Backend>(params, inputs, rtol, atol);
}

}  // namespace kiln::test
