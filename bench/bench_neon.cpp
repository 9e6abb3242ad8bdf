// SPDX-License-Identifier: Apache-2.0
// NeonBackend against the machine's limits and other libraries, measured in the same run: FMA peak,
// memory bandwidth, GEMM (Eigen, oneDNN), convolutions (oneDNN), other layers (RefBackend, bandwidth),
// whole networks (RefBackend, threads, XNNPACK, Arm NN).
// Prints a table and writes CSV: case, variant, kiln_value, anchor, anchor_value, unit, ratio
// (ratio > 1: kiln is better).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <kiln/kiln.hpp>

#include "bench_harness.hpp"
#include "example_networks.hpp"
#if KILN_BENCH_ARMNN
#include <armnn/ArmNN.hpp>
#endif
#if KILN_BENCH_XNNPACK
#include <pthreadpool.h>
#include <xnnpack.h>
#endif
#if KILN_BENCH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
extern "C" void omp_set_num_threads(int);
#endif

namespace {

using namespace kiln::bench;

// ---- physical limits -----------------------------------------------------------------------------

/// FMA throughput of one core with `Chains` independent accumulators of Arch's vectors, GFLOP/s.
template <class Arch, int Chains>
double fma_gflops() {
  using V = xsimd::batch<float, Arch>;
  constexpr long iterations = 2'000'000;
  V acc[Chains];
  for (int c = 0; c < Chains; ++c) acc[c] = V(1.0f + c * 1e-3f);
  const V a(0.999999f), b(1e-7f);
  // Accumulators are copied into locals and the chain loop unrolled, so they live in registers.
  const Timing t = measure(
      [&] {
        V local[Chains];
        for (int c = 0; c < Chains; ++c) local[c] = acc[c];
        for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 32
          for (int c = 0; c < Chains; ++c) local[c] = xsimd::fma(local[c], a, b);
        }
        for (int c = 0; c < Chains; ++c) acc[c] = local[c];
      },
      3);
  float sink = 0;
  for (int c = 0; c < Chains; ++c) sink += xsimd::hadd(acc[c]);
  if (sink == 12345.0f) std::puts("");
  return 2.0 * V::size * Chains * iterations / t.min / 1e9;
}

struct FmaPeak {
  double gflops = 0;
  std::string how;  ///< the vector width and accumulator count that reached it
};

/// One core's FMA peak: the best over every FMA vector width this build can run and over several
/// accumulator counts. A core needs ports x latency independent chains to keep every FMA port busy
/// (2 x 4 on most x86 cores, 4 x 4 on some Arm cores); more chains than registers spill, and
/// some CPUs run narrower vectors at a higher clock, so no single width and count is right everywhere.
FmaPeak fma_peak() {
  FmaPeak best;
  auto try_arch = [&]<class Arch>(Arch) {
    if (!Arch::available()) return;
    constexpr bool wide_register_file = xsimd::batch<float, Arch>::size == 16 || std::is_same_v<Arch, xsimd::neon64>;
    auto try_chains = [&]<int... Chains>(std::integer_sequence<int, Chains...>) {
      auto consider = [&](double gflops, int chains) {
        if (gflops > best.gflops)
          best = {gflops, std::string(Arch::name()) + ", " + std::to_string(chains) + " chains"};
      };
      (consider(fma_gflops<Arch, Chains>(), Chains), ...);
    };
    if constexpr (wide_register_file)
      try_chains(std::integer_sequence<int, 8, 12, 16, 20, 24, 28>{});
    else
      try_chains(std::integer_sequence<int, 8, 10, 12, 14>{});
  };
#if XSIMD_WITH_AVX512F
  try_arch(xsimd::avx512f{});
#endif
#if XSIMD_WITH_FMA3_AVX2
  try_arch(xsimd::fma3<xsimd::avx2>{});
#endif
#if XSIMD_WITH_FMA3_SSE
  try_arch(xsimd::fma3<xsimd::sse4_2>{});
#endif
#if XSIMD_WITH_NEON64
  try_arch(xsimd::neon64{});
#elif XSIMD_WITH_NEON
  try_arch(xsimd::neon{});
#endif
  if (best.gflops == 0) try_arch(xsimd::default_arch{});  // no FMA instructions: multiply and add
  return best;
}

double memory_bandwidth_gbs() {
  const std::size_t n = 64u << 20;  // 256 MiB per array: far beyond every cache
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  const Timing t = measure(
      [&] { kiln::neon::map(x.data(), y.data(), n, [](kiln::neon::Vec v) { return v * kiln::neon::Vec(1.0001f); }); },
      5);
  return 2.0 * n * sizeof(float) / t.min / 1e9;  // one read and one write stream
}

// ---- GEMM ------------------------------------------------------------------------------------------

/// GEMM rows against the peak, Eigen and oneDNN. False when any of them beats the measured FMA
/// peak, which then is no peak at all.
bool bench_gemm(double peak) {
  bool peak_holds = true;
  auto check_peak = [&](const std::string& name, std::string_view who, double gflops) {
    if (gflops <= peak) return;
    std::printf("error: %s by %.*s reaches %.4g GFLOP/s, above the measured FMA peak %.4g\n", name.c_str(),
                static_cast<int>(who.size()), who.data(), gflops, peak);
    peak_holds = false;
  };
  struct Shape {
    long m, n, k;
  };
  for (Shape s : {Shape{64, 3136, 576}, Shape{256, 196, 2304}, Shape{512, 512, 512}, Shape{1000, 1, 1280},
                  Shape{128, 12544, 147}}) {
    const auto a = random_floats(s.m * s.k, 1), b = random_floats(s.k * s.n, 2);
    std::vector<float> c(s.m * s.n);
    const double flop = 2.0 * s.m * s.n * s.k;
    // kiln multiplies activations (rows) by packed weights (columns): a matrix-vector product is
    // best run as one row against m columns, which is the same product transposed.
    const bool transposed = s.n == 1;
    const long rows_ = transposed ? s.n : s.m, cols = transposed ? s.m : s.n;
    std::vector<float> weights(cols * s.k);  // [cols, k], the layout FullyConnected keeps
    for (long j = 0; j < cols; ++j)
      for (long p = 0; p < s.k; ++p) weights[j * s.k + p] = transposed ? a[j * s.k + p] : b[p * s.n + j];
    const std::vector<float>& lhs = transposed ? b : a;
    kiln::neon::Context context;
    context.configure({.threads = 1});
    const kiln::neon::PackedWeights packed(weights.data(), nullptr, 1, cols, s.k);
    const Timing kiln_t = measure([&] {
      kiln::neon::gemm(context, kiln::neon::DenseRows{lhs.data(), static_cast<std::size_t>(s.k)}, rows_, packed,
                       c.data(), cols, {}, {});
    });
    const double kiln_gflops = flop / kiln_t.median / 1e9;
    const std::string name = "gemm " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    const std::string variant = transposed ? "1 thread, as 1 row" : "1 thread";
    add({name, variant, kiln_gflops, "fma_peak", peak, "GFLOP/s", true});
    check_peak(name, "kiln", kiln_gflops);

    using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Eigen::Map<const Matrix> ea(a.data(), s.m, s.k), eb(b.data(), s.k, s.n);
    Matrix ec(s.m, s.n);
    const Timing eigen_t = measure([&] { ec.noalias() = ea * eb; });
    add({name, variant, kiln_gflops, "eigen", flop / eigen_t.median / 1e9, "GFLOP/s", true});
    check_peak(name, "eigen", flop / eigen_t.median / 1e9);
#if KILN_BENCH_ONEDNN
    const Timing dnnl_t =
        measure([&] { dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n, 0.0f, c.data(), s.n); });
    add({name, variant, kiln_gflops, "onednn", flop / dnnl_t.median / 1e9, "GFLOP/s", true});
    check_peak(name, "onednn", flop / dnnl_t.median / 1e9);
#endif
  }
  return peak_holds;
}

// ---- convolutions and networks through the runtime ---------------------------------------------

kiln::Network conv_network(std::uint32_t size, std::uint32_t in, std::uint32_t out, std::uint32_t k,
                           std::uint32_t stride, bool depthwise) {
  kiln::Network net;
  const std::uint32_t pad = k / 2;
  auto x = net.add_input(0, {{1, size, size, in}}, "x");
  auto b = net.add_constant<float>({{out}}, random_floats(out, 3), "b");
  kiln::OutputSlot y;
  if (depthwise) {
    auto w = net.add_constant<float>({{1, k, k, in}}, random_floats(k * k * in, 4), "w");
    y = net.add<kiln::ops::DepthwiseConvolution2d>({.padding = {pad, pad, pad, pad}, .stride = {stride, stride}},
                                                   {x, w, b});
  } else {
    auto w = net.add_constant<float>({{out, k, k, in}}, random_floats(out * k * k * in, 4), "w");
    y = net.add<kiln::ops::Convolution2d>({.padding = {pad, pad, pad, pad}, .stride = {stride, stride}}, {x, w, b});
  }
  net.add_output(0, y, "y");
  return net;
}

#if KILN_BENCH_ONEDNN
double onednn_conv_seconds(std::uint32_t size, std::uint32_t in, std::uint32_t out, std::uint32_t k,
                           std::uint32_t stride, bool depthwise) {
  using namespace dnnl;
  using tag = memory::format_tag;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  const memory::dim pad = k / 2, o = (size + 2 * pad - k) / stride + 1;
  const memory::dims src_dims{1, in, size, size}, dst_dims{1, out, o, o}, bias_dims{out};
  const memory::dims w_dims = depthwise ? memory::dims{in, 1, 1, k, k} : memory::dims{out, in, k, k};
  auto md = [](const memory::dims& d, tag t) { return memory::desc(d, memory::data_type::f32, t); };
  // Source and destination are NHWC as in kiln; weights in whatever layout oneDNN prefers (packed once).
  auto desc = convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                        md(src_dims, tag::nhwc), md(w_dims, tag::any), md(bias_dims, tag::x),
                                        md(dst_dims, tag::nhwc), {stride, stride}, {pad, pad}, {pad, pad});
  convolution_forward::primitive_desc pd(desc, eng);
  auto src = random_floats(size * size * in, 1), bias = random_floats(out, 3);
  auto user_w = random_floats(depthwise ? k * k * in : out * k * k * in, 4);
  memory src_m(pd.src_desc(), eng, src.data()), bias_m(pd.bias_desc(), eng, bias.data()), dst_m(pd.dst_desc(), eng);
  memory user_w_m(md(w_dims, depthwise ? tag::goihw : tag::oihw), eng, user_w.data()), w_m(pd.weights_desc(), eng);
  reorder(user_w_m, w_m).execute(s, user_w_m, w_m);
  convolution_forward conv(pd);
  const Timing t = measure([&] {
    conv.execute(s, {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, w_m}, {DNNL_ARG_BIAS, bias_m}, {DNNL_ARG_DST, dst_m}});
    s.wait();
  });
  return t.median;
}
#endif

void bench_convolutions() {
  struct Conv {
    const char* name;
    std::uint32_t size, in, out, k, stride;
    bool depthwise;
  };
  for (const Conv& c : {Conv{"conv 3x3 56x56x64->64 s1", 56, 64, 64, 3, 1, false},
                        Conv{"conv 3x3 224x224x3->32 s2", 224, 3, 32, 3, 2, false},
                        Conv{"conv 1x1 28x28x128->256", 28, 128, 256, 1, 1, false},
                        Conv{"depthwise 3x3 112x112x32 s1", 112, 32, 32, 3, 1, true},
                        Conv{"depthwise 3x3 56x56x144 s2", 56, 144, 144, 3, 2, true},
                        // The last stages of MnasNet and EfficientNet: few rows to split over threads.
                        Conv{"depthwise 3x3 14x14x480 s1", 14, 480, 480, 3, 1, true},
                        Conv{"depthwise 5x5 7x7x1152 s1", 7, 1152, 1152, 5, 1, true}}) {
    AlignedFloats input, output, input2, output2, ref_input, ref_output;
    auto kiln_run = load_network<kiln::NeonBackend>(conv_network(c.size, c.in, c.out, c.k, c.stride, c.depthwise), 1,
                                                    input, output);
    const double kiln_ms = measure(kiln_run.infer).median * 1e3;
    auto two_threads = load_network<kiln::NeonBackend>(conv_network(c.size, c.in, c.out, c.k, c.stride, c.depthwise), 2,
                                                       input2, output2);
    add({c.name, "2 threads", measure(two_threads.infer).median * 1e3, "kiln 1 thread", kiln_ms, "ms", false});
    auto ref_run = load_network<kiln::RefBackend>(conv_network(c.size, c.in, c.out, c.k, c.stride, c.depthwise), 1,
                                                  ref_input, ref_output);
    add({c.name, "1 thread", kiln_ms, "kiln RefBackend", measure(ref_run.infer, 3).median * 1e3, "ms", false});
#if KILN_BENCH_ONEDNN
    add({c.name, "1 thread", kiln_ms, "onednn",
         onednn_conv_seconds(c.size, c.in, c.out, c.k, c.stride, c.depthwise) * 1e3, "ms", false});
#endif
  }
}

// ---- int8 ----------------------------------------------------------------------------------------

/// One core's int8 multiply-add peak through the dot-product instruction kiln's int8 kernels use
/// (kiln::neon::Int8Dot: vpdpbusd with AVX512-VNNI, else vpmaddwd), GOP/s (a multiply and an add
/// are two operations): the best over several counts of independent accumulators.
double int8_peak_gops() {
  using Dot = kiln::neon::Int8Dot;
  double best = 0;
  auto try_chains = [&]<int Chains>() {
    constexpr long iterations = 2'000'000;
    const std::int32_t ones = 0x01010101;
    const auto a = Dot::broadcast(&ones);
    const auto b = Dot::load_b(std::vector<std::int32_t>(Dot::lanes, ones).data());
    std::vector<std::int32_t> zeros(Dot::lanes, 0);
    const kiln::neon::Int8OutputStages sink_stage(-128, 127, 0, Dot::lanes);
    std::vector<std::uint8_t> sink(Dot::lanes);
    const Timing t = measure(
        [&] {
          typename Dot::Acc acc[Chains];
          for (int c = 0; c < Chains; ++c) acc[c] = Dot::load(zeros.data());
          for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 32
            for (int c = 0; c < Chains; ++c) acc[c] = Dot::madd(acc[c], a, b);
          }
          for (int c = 0; c < Chains; ++c) Dot::store(acc[c], sink_stage.from(0), 0, sink.data(), Dot::lanes);
        },
        3);
    best = std::max(best, 2.0 * Dot::lanes * Dot::depth * Chains * iterations / t.min / 1e9);
  };
  try_chains.operator()<8>();
  try_chains.operator()<12>();
  try_chains.operator()<16>();
  try_chains.operator()<24>();
  return best;
}

/// n pseudo-random bytes spread over an 8-bit type's range: activations (T = std::uint8_t, around
/// 128) or weights (std::int8_t, around 0), the same for kiln and its anchors.
template <class T>
std::vector<T> random_bytes(std::size_t n, unsigned seed) {
  const auto real = random_floats(n, seed);
  std::vector<T> bytes(n);
  const float centre = std::is_signed_v<T> ? 0.0f : 128.0f;
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<T>(centre + 127 * real[i]);
  return bytes;
}

/// Seconds (median) of NeonBackend's int8 kernel for one Op layer in QAsymmU8 on one thread, run
/// directly: random activations, weights and bias (quantised per output channel), an output scale
/// that keeps most outputs unsaturated.
template <class Op>
double int8_kernel_seconds(const typename Op::Params& params, const kiln::TensorShape& x_shape,
                           const kiln::TensorShape& w_shape, const kiln::TensorShape& y_shape, std::uint32_t channels,
                           std::uint32_t reduction) {
  using namespace kiln;
  const auto x = random_bytes<std::uint8_t>(x_shape.num_elements(), 3);
  const auto w = random_bytes<std::int8_t>(w_shape.num_elements(), 4);
  std::vector<std::uint8_t> y(y_shape.num_elements());
  std::vector<std::int32_t> bias(channels);
  for (std::uint32_t c = 0; c < channels; ++c) bias[c] = static_cast<std::int32_t>(c * 37 % 2001) - 1000;
  const std::uint32_t channel_axis = quantized::channel_axis_v<Op>;
  const std::vector<float> w_scales(channels, 0.004f);
  const auto y_scale = static_cast<float>(0.02 * 0.004 * 64 * 64 * std::sqrt(double(reduction)) / 40);
  const TensorInfo infos[] = {{x_shape, DataType::QAsymmU8, {{0.02f}, 128, {}}},
                              {w_shape, DataType::QSymmS8, {w_scales, 0, channel_axis}},
                              {{{channels}}, DataType::Signed32, {}},
                              {y_shape, DataType::QAsymmU8, {{y_scale}, 128, {}}}};
  const void* constants[] = {nullptr, w.data(), bias.data()};
  const WorkloadInfo<Op> info{params, std::span(infos, 3), std::span(infos + 3, 1), constants};
  neon::Context context;
  context.configure({.threads = 1});
  using Kernel = neon::Kernel<Op, DataType::QAsymmU8>;
  if (auto supported = Kernel::is_supported(info); !supported) {
    std::printf("error: int8 %s: %s\n", std::string(Op::name).c_str(), supported.message().c_str());
    std::exit(1);
  }
  auto kernel = Kernel::create(info, context);
  const ConstTensor in[] = {{infos[0], x.data()}};
  const Tensor out[] = {{infos[3], y.data()}};
  if constexpr (requires { kernel->scratch(context); }) {
    std::vector<std::byte> scratch(kernel->scratch(context).bytes);
    return measure([&] { kernel->run(in, out, context, scratch); }).median;
  } else {
    return measure([&] { kernel->run(in, out, context); }).median;
  }
}

/// int8 GEMM rows (kiln's int8 FullyConnected kernel: rows of u8 activations times packed s8
/// weights, requantized to u8) against the int8 peak and oneDNN's u8 x s8 -> s32 GEMM.
void bench_int8_gemm(double peak) {
  struct Shape {
    std::uint32_t m, n, k;
    const char* name;
  };
  for (Shape s : {Shape{512, 512, 512, "int8 gemm 512x512x512"},
                  Shape{3136, 64, 576, "int8 gemm 64x3136x576"}}) {  // a 3x3 conv, 64 channels, 56x56
    const double seconds =
        int8_kernel_seconds<kiln::ops::FullyConnected>({}, {{s.m, s.k}}, {{s.n, s.k}}, {{s.m, s.n}}, s.n, s.k);
    const double ops = 2.0 * s.m * s.n * s.k, kiln_gops = ops / seconds / 1e9;
    add({s.name, "1 thread", kiln_gops, "int8_peak", peak, "GOP/s", true});
#if KILN_BENCH_ONEDNN
    const auto a = random_bytes<std::uint8_t>(std::size_t{s.m} * s.k, 3);
    const auto b = random_bytes<std::int8_t>(std::size_t{s.n} * s.k, 4);
    std::vector<std::int32_t> c(std::size_t{s.m} * s.n);
    const std::int32_t c_offset = 0;
    // C = A [m x k] x B [k x n], B being the [n, k] weights transposed ('T').
    const Timing dnnl_t = measure([&] {
      dnnl_gemm_u8s8s32('N', 'T', 'F', s.m, s.n, s.k, 1.0f, a.data(), s.k, 128, b.data(), s.k, 0, 0.0f, c.data(), s.n,
                        &c_offset);
    });
    add({s.name, "1 thread", kiln_gops, "onednn u8s8s32", ops / dnnl_t.median / 1e9, "GOP/s", true});
#endif
  }
}

/// MobileNet-v2's residual Add at 56x56x24 in uint8 (two inputs of different scales; the kernel
/// alone), against kiln's Float32 Add of the same shape (an input plus a constant).
void bench_int8_residual_add() {
  using namespace kiln;
  const TensorShape shape{1, 56, 56, 24};
  const auto a = random_bytes<std::uint8_t>(shape.num_elements(), 3);
  const auto b = random_bytes<std::uint8_t>(shape.num_elements(), 4);
  std::vector<std::uint8_t> y(shape.num_elements());
  const TensorInfo infos[] = {{shape, DataType::QAsymmU8, {{0.043f}, 121, {}}},
                              {shape, DataType::QAsymmU8, {{0.027f}, 130, {}}},
                              {shape, DataType::QAsymmU8, {{0.051f}, 126, {}}}};
  const ops::ElementwiseBinary::Params params{ops::BinaryOperation::Add};
  const void* constants[] = {nullptr, nullptr};
  const WorkloadInfo<ops::ElementwiseBinary> info{params, std::span(infos, 2), std::span(infos + 2, 1), constants};
  neon::Context context;
  context.configure({.threads = 1});
  auto kernel = neon::Kernel<ops::ElementwiseBinary, DataType::QAsymmU8>::create(info, context);
  if (!kernel) {
    std::printf("error: int8 Add: %s\n", kernel.status().message().c_str());
    std::exit(1);
  }
  const ConstTensor in[] = {{infos[0], a.data()}, {infos[1], b.data()}};
  const Tensor out[] = {{infos[2], y.data()}};
  const double int8_seconds = measure([&] { kernel->run(in, out, context); }).median;

  Network net;
  auto x = net.add_input(0, {shape}, "x");
  auto c = net.add_constant<float>({shape}, random_floats(shape.num_elements(), 5), "c");
  net.add_output(0, net.add<ops::ElementwiseBinary>({ops::BinaryOperation::Add}, {x, c}), "y");
  AlignedFloats input, output;
  auto f32 = load_network<NeonBackend>(std::move(net), 1, input, output);
  add({"int8 add 56x56x24 (residual)", "1 thread", int8_seconds * 1e3, "kiln Float32", measure(f32.infer).median * 1e3,
       "ms", false});
}

/// MobileNet-shaped layers in int8 (the kernel alone) against kiln's own Float32 layer of the
/// same shape on NeonBackend (through the runtime; one layer, so that is the kernel too).
void bench_int8_layers() {
  using namespace kiln;
  struct Conv {
    const char* name;
    std::uint32_t size, in, out, k, stride;
    bool depthwise;
  };
  for (const Conv& c : {Conv{"int8 conv 3x3 56x56x64->64 s1", 56, 64, 64, 3, 1, false},
                        Conv{"int8 conv 3x3 224x224x3->32 s2", 224, 3, 32, 3, 2, false},
                        Conv{"int8 conv 1x1 28x28x128->256", 28, 128, 256, 1, 1, false},
                        Conv{"int8 depthwise 3x3 112x112x32 s1", 112, 32, 32, 3, 1, true},
                        Conv{"int8 depthwise 3x3 56x56x144 s2", 56, 144, 144, 3, 2, true},
                        // MobileNet-v2's first expansion (K = 16: the output stage outweighs the
                        // products) and the stride-2 depthwise after it, where ONNX Runtime is faster.
                        Conv{"int8 conv 1x1 112x112x16->96", 112, 16, 96, 1, 1, false},
                        Conv{"int8 depthwise 3x3 112x112x96 s2", 112, 96, 96, 3, 2, true}}) {
    const std::uint32_t pad = c.k / 2, o = (c.size + 2 * pad - c.k) / c.stride + 1;
    const TensorShape x{1, c.size, c.size, c.in}, y{1, o, o, c.out};
    const ops::Padding2d padding{pad, pad, pad, pad};
    const ops::Size2d stride{c.stride, c.stride};
    const double int8_seconds =
        c.depthwise ? int8_kernel_seconds<ops::DepthwiseConvolution2d>({.padding = padding, .stride = stride}, x,
                                                                       {{1, c.k, c.k, c.in}}, y, c.in, c.k * c.k)
                    : int8_kernel_seconds<ops::Convolution2d>({.padding = padding, .stride = stride}, x,
                                                              {{c.out, c.k, c.k, c.in}}, y, c.out, c.k * c.k * c.in);
    AlignedFloats input, output;
    auto f32 =
        load_network<NeonBackend>(conv_network(c.size, c.in, c.out, c.k, c.stride, c.depthwise), 1, input, output);
    add({c.name, "1 thread", int8_seconds * 1e3, "kiln Float32", measure(f32.infer).median * 1e3, "ms", false});
  }
  bench_int8_residual_add();
}

/// Data movement, reductions, resizing and run-time matrix products: one layer each, timed on Neon
/// (1 thread) against RefBackend, and for the copies as effective bandwidth (bytes read + written
/// per second) against the machine's measured bandwidth.
void bench_other_layers(double bandwidth) {
  using namespace kiln;
  struct Layer {
    const char* name;
    TensorShape input;
    std::function<OutputSlot(Network&, OutputSlot)> add;
    double floats_moved;  // read + written, for the layers that only move data (0: the others)
  };
  const std::vector<Layer> layers = {
      {"transpose NHWC->NCHW 1x56x56x64",
       {{1, 56, 56, 64}},
       [](Network& n, OutputSlot x) {
         return n.add<ops::Transpose>({{0, 3, 1, 2}}, {x});
       },
       2.0 * 56 * 56 * 64},
      {"pad 1x56x56x64 +1 (reflect)",
       {{1, 56, 56, 64}},
       [](Network& n, OutputSlot x) {
         return n.add<ops::Pad>({{0, 1, 1, 0}, {0, 1, 1, 0}, ops::PadMode::Reflect}, {x});
       },
       (56.0 * 56 + 58 * 58) * 64},
      {"slice 1x56x56x64 [:, ::2, ::2, :32]",
       {{1, 56, 56, 64}},
       [](Network& n, OutputSlot x) {
         return n.add<ops::StridedSlice>({{0, 0, 0, 0}, {1, 56, 56, 32}, {1, 2, 2, 1}}, {x});
       },
       2.0 * 28 * 28 * 32},
      {"split 1x56x56x64 in 2 along C",
       {{1, 56, 56, 64}},
       [](Network& n, OutputSlot x) {
         return n.add<ops::Split>({3, {32, 32}}, {x});
       },
       2.0 * 56 * 56 * 64},
      {"reduce mean HW 1x28x28x256",
       {{1, 28, 28, 256}},
       [](Network& n, OutputSlot x) {
         return n.add<ops::Reduce>({ops::ReduceOperation::Mean, {1, 2}, true}, {x});
       },
       0},
      {"reduce max C 1x56x56x64",
       {{1, 56, 56, 64}},
       [](Network& n, OutputSlot x) {
         return n.add<ops::Reduce>({ops::ReduceOperation::Max, {3}, true}, {x});
       },
       0},
      {"resize bilinear 28x28x64->56x56",
       {{1, 28, 28, 64}},
       [](Network& n, OutputSlot x) {
         return n.add<ops::Resize>({ops::ResizeMethod::Bilinear, 56, 56, ops::CoordinateTransform::HalfPixel}, {x});
       },
       0},
      {"batch matmul 4x128x64 * 64x128",
       {{4, 128, 64}},
       [](Network& n, OutputSlot x) {
         auto b = n.add_constant<float>({{64, 128}}, random_floats(64 * 128, 5), "b");
         return n.add<ops::BatchMatMul>({}, {x, b});
       },
       0},
  };
  for (const Layer& l : layers) {
    auto network = [&] {
      Network net;
      net.add_output(0, l.add(net, net.add_input(0, {l.input}, "x")), "y");
      return net;
    };
    AlignedFloats input, output, ref_input, ref_output;
    auto kiln_run = load_network<NeonBackend>(network(), 1, input, output);
    const double kiln_ms = measure(kiln_run.infer).median * 1e3;
    auto ref_run = load_network<RefBackend>(network(), 1, ref_input, ref_output);
    add({l.name, "1 thread", kiln_ms, "kiln RefBackend", measure(ref_run.infer, 3).median * 1e3, "ms", false});
    if (l.floats_moved > 0)
      add({l.name, "1 thread", l.floats_moved * sizeof(float) / (kiln_ms * 1e-3) / 1e9, "memory bandwidth", bandwidth,
           "GB/s", true});
  }
}

#if KILN_BENCH_XNNPACK
/// The same network, with the same weights (read from kiln's optimized network, fused activations
/// included), built with XNNPACK's operator API: create (packs weights) once, setup, run.
class XnnpackNetwork {
 public:
  XnnpackNetwork(const kiln::Network& net, const float* input, unsigned threads) {
    if (threads > 1) pool_ = pthreadpool_create(threads);
    std::map<kiln::LayerId, const float*> data;
    auto constant = [&](const kiln::Layer& layer, std::size_t i) -> const float* {
      if (i >= layer.inputs.size()) return nullptr;
      return reinterpret_cast<const float*>(
          net.layer(layer.inputs[i]->layer).params_if<kiln::ops::Constant>()->data.data());
    };
    auto bounds = [](const std::optional<kiln::ops::Activation::Params>& a) {
      const kiln::neon::Epilogue e = kiln::neon::Epilogue::from(a);
      if (e.activation) std::exit((std::puts("xnnpack anchor: unsupported fused activation"), 1));
      return std::pair{e.min, e.max};
    };
    const auto t0 = Clock::now();
    for (kiln::LayerId id : net.execution_order()) {
      const kiln::Layer& layer = net.layer(id);
      const float* x = layer.inputs.empty() ? nullptr : data[layer.inputs[0]->layer];
      const kiln::TensorShape xs = layer.inputs.empty() ? kiln::TensorShape{} : net.tensor_info(*layer.inputs[0]).shape;
      xnn_operator_t op = nullptr;
      float* y = nullptr;
      if (layer.is<kiln::ops::Input>()) {
        data[id] = input;
        continue;
      }
      if (layer.is<kiln::ops::Constant>()) continue;
      if (layer.is<kiln::ops::Output>()) {
        output_ = x;
        continue;
      }
      if (layer.is<kiln::ops::Reshape>()) {
        data[id] = x;
        continue;
      }
      buffers_.emplace_back();
      buffers_.back().resize(layer.outputs[0].num_elements());
      y = buffers_.back().data.get();
      data[id] = y;
      if (const auto* p = layer.params_if<kiln::ops::Convolution2d>()) {
        const kiln::TensorShape ws = net.tensor_info(*layer.inputs[1]).shape;
        const auto [lo, hi] = bounds(p->activation);
        check(xnn_create_convolution2d_nhwc_f32(p->padding.top, p->padding.right, p->padding.bottom, p->padding.left,
                                                ws[1], ws[2], p->stride.height, p->stride.width, p->dilation.height,
                                                p->dilation.width, p->groups, ws[3], ws[0] / p->groups, xs[3], ws[0],
                                                constant(layer, 1), constant(layer, 2), lo, hi, 0, &op));
        check(xnn_setup_convolution2d_nhwc_f32(op, xs[0], xs[1], xs[2], x, y, pool_));
      } else if (const auto* p = layer.params_if<kiln::ops::DepthwiseConvolution2d>()) {
        const kiln::TensorShape ws = net.tensor_info(*layer.inputs[1]).shape;
        const auto [lo, hi] = bounds(p->activation);
        check(xnn_create_convolution2d_nhwc_f32(
            p->padding.top, p->padding.right, p->padding.bottom, p->padding.left, ws[1], ws[2], p->stride.height,
            p->stride.width, p->dilation.height, p->dilation.width, xs[3], 1, ws[3] / xs[3], xs[3], ws[3],
            constant(layer, 1), constant(layer, 2), lo, hi, XNN_FLAG_DEPTHWISE_CONVOLUTION, &op));
        check(xnn_setup_convolution2d_nhwc_f32(op, xs[0], xs[1], xs[2], x, y, pool_));
      } else if (const auto* p = layer.params_if<kiln::ops::Pooling2d>();
                 p && p->global && p->kind == kiln::ops::PoolingKind::Average) {
        check(xnn_create_global_average_pooling_nwc_f32(xs[3], xs[3], xs[3], -INFINITY, INFINITY, 0, &op));
        check(xnn_setup_global_average_pooling_nwc_f32(op, xs[0], std::size_t{xs[1]} * xs[2], x, y, pool_));
      } else if (const auto* p = layer.params_if<kiln::ops::FullyConnected>()) {
        const kiln::TensorShape ws = net.tensor_info(*layer.inputs[1]).shape;
        const auto [lo, hi] = bounds(p->activation);
        check(xnn_create_fully_connected_nc_f32(ws[1], ws[0], ws[1], ws[0], constant(layer, 1), constant(layer, 2), lo,
                                                hi, 0, &op));
        check(xnn_setup_fully_connected_nc_f32(op, xs.num_elements() / ws[1], x, y, pool_));
      } else if (layer.is<kiln::ops::Softmax>()) {
        const std::size_t c = xs.dim_from_end(0);
        check(xnn_create_softmax_nc_f32(c, c, c, 0, &op));
        check(xnn_setup_softmax_nc_f32(op, xs.num_elements() / c, x, y, pool_));
      } else {
        std::printf("xnnpack anchor: layer %s is not mapped\n", layer.name.c_str());
        std::exit(1);
      }
      operators_.push_back(op);
    }
    create_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  }
  ~XnnpackNetwork() {
    for (xnn_operator_t op : operators_) xnn_delete_operator(op);
    if (pool_) pthreadpool_destroy(pool_);
  }
  void run() const {
    for (xnn_operator_t op : operators_) check(xnn_run_operator(op, pool_));
  }
  double create_ms() const { return create_ms_; }
  const float* output() const { return output_; }

 private:
  static void check(xnn_status status) {
    if (status != xnn_status_success)
      std::exit((std::printf("xnnpack anchor: error %d\n", static_cast<int>(status)), 1));
  }
  pthreadpool_t pool_ = nullptr;
  std::vector<xnn_operator_t> operators_;
  std::vector<AlignedFloats> buffers_;
  const float* output_ = nullptr;
  double create_ms_ = 0;
};
#endif

#if KILN_BENCH_ARMNN
/// The same network with the same weights on Arm NN's CpuRef backend, the reference that kiln's
/// RefBackend is measured against.
class ArmnnNetwork {
 public:
  ArmnnNetwork(const kiln::Network& net, const float* input, float* output) : runtime_(armnn::IRuntime::Create({})) {
    using namespace armnn;
    INetworkPtr network = INetwork::Create();
    std::map<kiln::LayerId, IConnectableLayer*> produced;
    std::vector<std::vector<float>> keep;  // weights stay alive until the network is optimized
    auto info = [](const kiln::TensorShape& s) {
      std::vector<unsigned> dims(s.rank());
      for (std::size_t i = 0; i < s.rank(); ++i) dims[i] = s[i];
      return TensorInfo(TensorShape(static_cast<unsigned>(dims.size()), dims.data()), DataType::Float32);
    };
    auto constant = [&](const kiln::Layer& layer, std::size_t i, const kiln::TensorShape& shape) {
      const auto& bytes = net.layer(layer.inputs[i]->layer).params_if<kiln::ops::Constant>()->data;
      keep.emplace_back(reinterpret_cast<const float*>(bytes.data()),
                        reinterpret_cast<const float*>(bytes.data()) + shape.num_elements());
      return ConstTensor(info(shape), keep.back().data());
    };
    for (kiln::LayerId id : net.execution_order()) {
      const kiln::Layer& layer = net.layer(id);
      IConnectableLayer* added = nullptr;
      std::optional<kiln::ops::Activation::Params> fused;
      const kiln::TensorShape xs = layer.inputs.empty() ? kiln::TensorShape{} : net.tensor_info(*layer.inputs[0]).shape;
      if (layer.is<kiln::ops::Constant>()) continue;
      if (layer.is<kiln::ops::Input>()) {
        added = network->AddInputLayer(0);
      } else if (layer.is<kiln::ops::Output>()) {
        produced[layer.inputs[0]->layer]->GetOutputSlot(0).Connect(network->AddOutputLayer(0)->GetInputSlot(0));
        continue;
      } else if (const auto* p = layer.params_if<kiln::ops::Convolution2d>()) {
        Convolution2dDescriptor d;
        d.m_PadLeft = p->padding.left, d.m_PadRight = p->padding.right, d.m_PadTop = p->padding.top,
        d.m_PadBottom = p->padding.bottom;
        d.m_StrideX = p->stride.width, d.m_StrideY = p->stride.height, d.m_BiasEnabled = true,
        d.m_DataLayout = DataLayout::NHWC;
        const kiln::TensorShape ws = net.tensor_info(*layer.inputs[1]).shape;
        added = network->AddConvolution2dLayer(d, constant(layer, 1, ws),
                                               Optional<ConstTensor>(constant(layer, 2, {ws[0]})), layer.name.c_str());
        fused = p->activation;
      } else if (const auto* p = layer.params_if<kiln::ops::DepthwiseConvolution2d>()) {
        DepthwiseConvolution2dDescriptor d;
        d.m_PadLeft = p->padding.left, d.m_PadRight = p->padding.right, d.m_PadTop = p->padding.top,
        d.m_PadBottom = p->padding.bottom;
        d.m_StrideX = p->stride.width, d.m_StrideY = p->stride.height, d.m_BiasEnabled = true,
        d.m_DataLayout = DataLayout::NHWC;
        const kiln::TensorShape ws =
            net.tensor_info(*layer.inputs[1]).shape;  // [1, KH, KW, C]; Arm NN wants [1, C, KH, KW]
        const ConstTensor hwc = constant(layer, 1, ws);
        std::vector<float> chw(ws.num_elements());
        for (std::uint32_t t = 0; t < ws[1] * ws[2]; ++t)
          for (std::uint32_t c = 0; c < ws[3]; ++c)
            chw[c * ws[1] * ws[2] + t] = static_cast<const float*>(hwc.GetMemoryArea())[t * ws[3] + c];
        keep.push_back(std::move(chw));
        added = network->AddDepthwiseConvolution2dLayer(
            d, ConstTensor(info({1, ws[3], ws[1], ws[2]}), keep.back().data()),
            Optional<ConstTensor>(constant(layer, 2, {ws[3]})), layer.name.c_str());
        fused = p->activation;
      } else if (const auto* p = layer.params_if<kiln::ops::Pooling2d>(); p && p->global) {
        Pooling2dDescriptor d;
        d.m_PoolType = PoolingAlgorithm::Average, d.m_PoolWidth = xs[2], d.m_PoolHeight = xs[1], d.m_StrideX = 1,
        d.m_StrideY = 1;
        d.m_PaddingMethod = PaddingMethod::Exclude, d.m_DataLayout = DataLayout::NHWC;
        added = network->AddPooling2dLayer(d, layer.name.c_str());
      } else if (layer.is<kiln::ops::Reshape>()) {
        ReshapeDescriptor d;
        d.m_TargetShape = info(layer.outputs[0].shape).GetShape();
        added = network->AddReshapeLayer(d, layer.name.c_str());
      } else if (const auto* p = layer.params_if<kiln::ops::FullyConnected>()) {
        FullyConnectedDescriptor d;
        d.m_BiasEnabled = true, d.m_TransposeWeightMatrix = true;
        const kiln::TensorShape ws = net.tensor_info(*layer.inputs[1]).shape;
        added = network->AddFullyConnectedLayer(d, constant(layer, 1, ws),
                                                Optional<ConstTensor>(constant(layer, 2, {ws[0]})), layer.name.c_str());
        fused = p->activation;
      } else if (layer.is<kiln::ops::Softmax>()) {
        added = network->AddSoftmaxLayer(SoftmaxDescriptor{}, layer.name.c_str());
      } else {
        std::printf("armnn anchor: layer %s is not mapped\n", layer.name.c_str());
        std::exit(1);
      }
      if (!layer.inputs.empty()) produced[layer.inputs[0]->layer]->GetOutputSlot(0).Connect(added->GetInputSlot(0));
      added->GetOutputSlot(0).SetTensorInfo(info(layer.outputs[0].shape));
      if (fused) {
        if (fused->function != kiln::ops::ActivationFunction::BoundedReLU)
          std::exit((std::puts("armnn anchor: activation"), 1));
        ActivationDescriptor a;
        a.m_Function = ActivationFunction::BoundedReLu, a.m_A = fused->a, a.m_B = fused->b;
        IConnectableLayer* activation = network->AddActivationLayer(a);
        added->GetOutputSlot(0).Connect(activation->GetInputSlot(0));
        activation->GetOutputSlot(0).SetTensorInfo(info(layer.outputs[0].shape));
        added = activation;
      }
      produced[id] = added;
    }
    const auto t0 = Clock::now();
    IOptimizedNetworkPtr optimized = Optimize(*network, {Compute::CpuRef}, runtime_->GetDeviceSpec());
    if (runtime_->LoadNetwork(id_, std::move(optimized)) != Status::Success)
      std::exit((std::puts("armnn anchor: load failed"), 1));
    load_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    inputs_ = {{0, ConstTensor(runtime_->GetInputTensorInfo(id_, 0), input)}};
    outputs_ = {{0, Tensor(runtime_->GetOutputTensorInfo(id_, 0), output)}};
  }
  void run() const { runtime_->EnqueueWorkload(id_, inputs_, outputs_); }
  double load_ms() const { return load_ms_; }

 private:
  armnn::IRuntimePtr runtime_;
  armnn::NetworkId id_ = 0;
  armnn::InputTensors inputs_;
  armnn::OutputTensors outputs_;
  double load_ms_ = 0;
};
#endif

/// A thread that spins until it is destroyed.
class BusyThread {
 public:
  BusyThread()
      : thread_([this] {
          while (!stop_.load(std::memory_order_relaxed)) {}
        }) {}
  ~BusyThread() {
    stop_ = true;
    thread_.join();
  }
  BusyThread(const BusyThread&) = delete;
  BusyThread& operator=(const BusyThread&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

void bench_networks() {
  struct Net {
    const char* name;
    kiln::Network (*make)();
  };
  for (const Net& n :
       {Net{"mlp", [] { return kiln::examples::mlp(); }}, Net{"small_cnn", [] { return kiln::examples::small_cnn(); }},
        Net{"mobilenet_v1_like 224", [] { return kiln::examples::mobilenet_v1_like(); }},
        Net{"mobilenet_v2 224", [] { return kiln::examples::mobilenet_v2(); }}}) {
    AlignedFloats in_ref, out_ref, in1, out1, in2, out2;
    auto ref = load_network<kiln::RefBackend>(n.make(), 1, in_ref, out_ref);
    auto one = load_network<kiln::NeonBackend, kiln::RefBackend>(n.make(), 1, in1, out1);
    auto two = load_network<kiln::NeonBackend, kiln::RefBackend>(n.make(), 2, in2, out2);
    const Timing ref_t = measure(ref.infer, 3), one_t = measure(one.infer, 15), two_t = measure(two.infer, 15);
    double max_error = 0;
    for (std::size_t i = 0; i < out_ref.size; ++i)
      max_error = std::max<double>(max_error, std::abs(out_ref[i] - out1[i]));
    std::printf("# %s: max |Neon - Ref| over the output = %.3g\n", n.name, max_error);
    add({n.name, "latency median, 1 thread", one_t.median * 1e3, "kiln RefBackend", ref_t.median * 1e3, "ms", false});
    add({n.name, "latency min, 1 thread", one_t.min * 1e3, "kiln RefBackend", ref_t.min * 1e3, "ms", false});
    add({n.name, "latency median, 2 threads", two_t.median * 1e3, "kiln 1 thread", one_t.median * 1e3, "ms", false});
    {
      // Another thread keeping a core busy, as on a shared machine: a second kiln thread must not
      // make the network wait for a worker that is not running. The mean shows the stalls a median
      // hides.
      const BusyThread busy;
      const Timing one_busy = measure(one.infer, 15), two_busy = measure(two.infer, 15);
      add({n.name, "latency mean, 2 threads, a core busy", two_busy.mean * 1e3, "kiln 1 thread, a core busy",
           one_busy.mean * 1e3, "ms", false});
    }
    add({n.name, "load", one.load_ms, "kiln RefBackend", ref.load_ms, "ms", false});
#if KILN_BENCH_XNNPACK
    if (std::string_view(n.name).starts_with("mobilenet_v1")) {
      auto optimized = kiln::optimize<kiln::NeonBackend, kiln::RefBackend>(n.make());
      const XnnpackNetwork xnn1(optimized->network(), in1.data.get(), 1), xnn2(optimized->network(), in1.data.get(), 2);
      const Timing x1 = measure([&] { xnn1.run(); }, 15), x2 = measure([&] { xnn2.run(); }, 15);
      double max_diff = 0;
      for (std::size_t i = 0; i < out1.size; ++i)
        max_diff = std::max<double>(max_diff, std::abs(out1[i] - xnn1.output()[i]));
      std::printf("# %s: max |kiln - XNNPACK| over the output = %.3g\n", n.name, max_diff);
      add({n.name, "latency median, 1 thread", one_t.median * 1e3, "xnnpack", x1.median * 1e3, "ms", false});
      add({n.name, "latency median, 2 threads", two_t.median * 1e3, "xnnpack 2 threads", x2.median * 1e3, "ms", false});
      add({n.name, "load", one.load_ms, "xnnpack create", xnn1.create_ms(), "ms", false});
    }
#endif
#if KILN_BENCH_ARMNN
    if (std::string_view(n.name).starts_with("mobilenet_v1")) {
      auto optimized = kiln::optimize<kiln::RefBackend>(n.make());
      AlignedFloats armnn_out;
      armnn_out.resize(out_ref.size);
      const ArmnnNetwork armnn(optimized->network(), in_ref.data.get(), armnn_out.data.get());
      const Timing a = measure([&] { armnn.run(); }, 1);
      double max_diff = 0;
      for (std::size_t i = 0; i < out_ref.size; ++i)
        max_diff = std::max<double>(max_diff, std::abs(out_ref[i] - armnn_out[i]));
      std::printf("# %s: max |kiln RefBackend - Arm NN CpuRef| over the output = %.3g\n", n.name, max_diff);
      add({n.name, "RefBackend latency median", ref_t.median * 1e3, "armnn CpuRef", a.median * 1e3, "ms", false});
      add({n.name, "RefBackend load", ref.load_ms, "armnn CpuRef", armnn.load_ms(), "ms", false});
    }
#endif
  }
}

/// Self-attention of `heads` heads over `tokens` tokens of `depth` features, x [heads, tokens, depth]
/// as query, key and value: MatMul(x, x^T) * scale -> Softmax -> MatMul(weights, x), which the
/// optimizer fuses into one Attention layer unless told not to (decision 0027).
kiln::Network attention_network(std::uint32_t heads, std::uint32_t tokens, std::uint32_t depth) {
  kiln::Network net;
  auto x = net.add_input(0, {{heads, tokens, depth}}, "x");
  auto keys = net.add<kiln::ops::Transpose>({{0, 2, 1}}, {x}, "keys");
  auto scores = net.add<kiln::ops::BatchMatMul>({}, {x, keys}, "scores");
  auto scale = net.add_constant<float>({{1}}, std::vector<float>{1.0f / std::sqrt(float(depth))}, "scale");
  auto scaled = net.add<kiln::ops::ElementwiseBinary>({kiln::ops::BinaryOperation::Mul}, {scores, scale}, "scaled");
  auto weights = net.add<kiln::ops::Softmax>({-1}, {scaled}, "weights");
  net.add_output(0, net.add<kiln::ops::BatchMatMul>({}, {weights, x}, "attended"), "y");
  return net;
}

/// The fused Attention layer against the layers it replaces (BatchMatMul, Mul, Softmax, BatchMatMul)
/// on NeonBackend, 1 thread: latency and the working memory the plan needs.
void bench_attention() {
  struct Shape {
    std::uint32_t heads, tokens, depth;
  };
  for (const Shape s : {Shape{2, 32, 32}, Shape{4, 128, 64}, Shape{4, 512, 64}, Shape{2, 2048, 64}}) {
    const std::string name =
        "attention " + std::to_string(s.heads) + "x" + std::to_string(s.tokens) + "x" + std::to_string(s.depth);
    AlignedFloats in_fused, out_fused, in_layers, out_layers;
    auto fused = load_network<kiln::NeonBackend, kiln::RefBackend>(attention_network(s.heads, s.tokens, s.depth), 1,
                                                                   in_fused, out_fused);
    auto layers = load_network<kiln::NeonBackend, kiln::RefBackend>(
        attention_network(s.heads, s.tokens, s.depth), 1, in_layers, out_layers, {}, {.fuse_attention = false});
    fused.infer();
    layers.infer();
    double max_error = 0;
    for (std::size_t i = 0; i < out_fused.size; ++i)
      max_error = std::max<double>(max_error, std::abs(out_fused[i] - out_layers[i]));
    std::printf("# %s: max |fused - layers| over the output = %.3g\n", name.c_str(), max_error);
    const Timing f = measure(fused.infer, 15), l = measure(layers.infer, 15);
    add({name, "latency median, 1 thread", f.median * 1e3, "kiln unfused layers", l.median * 1e3, "ms", false});
    add({name, "working memory", double(fused.arena_bytes) / 1024, "kiln unfused layers",
         double(layers.arena_bytes) / 1024, "KiB", false});
  }
}

}  // namespace

int main(int argc, char** argv) {
#if KILN_BENCH_XNNPACK
  if (xnn_initialize(nullptr) != xnn_status_success) return 1;
#endif
#if KILN_BENCH_ARMNN
  armnn::ConfigureLogging(false, false, armnn::LogSeverity::Warning);
#endif
#if KILN_BENCH_ONEDNN
  omp_set_num_threads(1);  // every anchor single-threaded, like kiln's 1-thread figures
#endif
  // bench_neon [CSV] [SECTION...]: sections gemm, int8, conv, layers, attention, networks (default: all).
  const char* csv_path = argc > 1 ? argv[1] : "bench_neon.csv";
  const std::vector<std::string_view> sections(argv + std::min(argc, 2), argv + argc);
  auto wanted = [&](std::string_view s) {
    return sections.empty() || std::ranges::find(sections, s) != sections.end();
  };
  std::printf("NeonBackend: %zu floats per vector (%s)\n", kiln::neon::lanes,
              std::string(kiln::neon::isa_name()).c_str());
  std::printf("%-34s %-26s %12s %-18s %12s %-8s %7s\n", "case", "variant", "kiln", "anchor", "anchor_value", "unit",
              "ratio");
  const FmaPeak fma = fma_peak();
  const double peak = fma.gflops;
  const double bandwidth = memory_bandwidth_gbs();
  std::printf("%-34s %-26s %12.4g  (%s)\n%-34s %-26s %12.4g\n", "fma peak GFLOP/s", "1 thread", peak, fma.how.c_str(),
              "memory bandwidth GB/s", "1 thread, read+write", bandwidth);
  if (wanted("gemm") && !bench_gemm(peak)) return 1;
  if (wanted("int8")) {
    const double int8_peak = int8_peak_gops();
    std::printf("%-34s %-26s %12.4g  (%s)\n", "int8 peak GOP/s", "1 thread", int8_peak,
                std::string(kiln::neon::Int8Dot::name).c_str());
    bench_int8_gemm(int8_peak);
    bench_int8_layers();
  }
  if (wanted("conv")) bench_convolutions();
  if (wanted("layers")) bench_other_layers(bandwidth);
  if (wanted("attention")) bench_attention();
  if (wanted("networks")) bench_networks();
  char limits[160];
  std::snprintf(limits, sizeof limits, "fma_peak,1 thread,%g,,,GFLOP/s,\nmemory_bandwidth,1 thread,%g,,,GB/s,\n", peak,
                bandwidth);
  return write_csv(csv_path, limits) ? 0 : 1;
}
