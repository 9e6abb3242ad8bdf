// SPDX-License-Identifier: Apache-2.0
// ClBackend on this machine's OpenCL device (PoCL on the CPU in CI) against CLBlast measured in the
// same run: GEMM (SGEMM), convolutions (CLBlast's convgemm), whole networks (NeonBackend), and
// start-up with and without the on-disk program cache.
// Prints a table and writes CSV: case, variant, kiln_value, anchor, anchor_value, unit, ratio
// (ratio > 1: kiln is better).
#include <clblast.h>

#include <unistd.h>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "bench_harness.hpp"
#include "example_networks.hpp"

namespace {

using namespace kiln::bench;
using kiln::ClBackend;

kiln::opencl::Context& device() {
  static kiln::opencl::Context context = [] {
    kiln::opencl::Context c;
    if (auto s = c.ready(); !s) {
      std::printf("no OpenCL device: %s\n", s.message().c_str());
      std::exit(1);
    }
    return c;
  }();
  return context;
}

cl::Buffer device_buffer(const std::vector<float>& values) {
  cl_int err = CL_SUCCESS;
  cl::Buffer buffer(device().cl_context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, values.size() * sizeof(float),
                    const_cast<float*>(values.data()), &err);
  if (err != CL_SUCCESS) std::exit(1);
  return buffer;
}
std::vector<float> read_back(const cl::Buffer& buffer, std::size_t n) {
  std::vector<float> values(n);
  device().queue().enqueueReadBuffer(buffer, CL_TRUE, 0, n * sizeof(float), values.data());
  return values;
}
double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max<double>(d, std::abs(a[i] - b[i]));
  return d;
}

/// One kiln workload run on device buffers (no host copies): made as the runtime makes it at load.
template <class Op>
struct DeviceLayer {
  kiln::Workload<Op, ClBackend, kiln::DataType::Float32> workload;
  std::vector<cl::Buffer> buffers;  // inputs, then the output
  std::vector<kiln::ConstTensor> inputs;
  std::vector<kiln::Tensor> outputs;
  void run() const {
    if (auto s = workload.run(inputs, outputs, device()); !s) std::printf("%s\n", s.message().c_str());
  }
};
template <class Op>
DeviceLayer<Op> device_layer(const typename Op::Params& params, const std::vector<kiln::TensorInfo>& infos,
                             const std::vector<std::vector<float>>& values, const std::vector<bool>& constant) {
  std::vector<kiln::TensorInfo> out(1);
  if (auto s = Op::infer(params, infos, out); !s) std::exit(1);
  std::vector<const void*> constants;
  for (std::size_t i = 0; i < infos.size(); ++i) constants.push_back(constant[i] ? values[i].data() : nullptr);
  const kiln::WorkloadInfo<Op> info{params, infos, out, constants};
  auto workload = kiln::Workload<Op, ClBackend, kiln::DataType::Float32>::create(info, device());
  if (!workload) {
    std::printf("%s\n", workload.status().message().c_str());
    std::exit(1);
  }
  DeviceLayer<Op> layer{std::move(*workload), {}, {}, {}};
  for (std::size_t i = 0; i < infos.size(); ++i) layer.buffers.push_back(device_buffer(values[i]));
  layer.buffers.push_back(device_buffer(std::vector<float>(out[0].num_elements())));
  for (std::size_t i = 0; i < infos.size(); ++i) layer.inputs.push_back({infos[i], layer.buffers[i]()});
  layer.outputs.push_back({out[0], layer.buffers.back()()});
  return layer;
}

void bench_gemm() {
  struct Shape {
    std::uint32_t m, n, k;
  };
  for (Shape s : {Shape{64, 3136, 576}, Shape{256, 196, 2304}, Shape{512, 512, 512}, Shape{1000, 1, 1280},
                  Shape{128, 12544, 147}}) {
    const double flop = 2.0 * s.m * s.n * s.k;
    // kiln: FullyConnected with constant weights [n, k] over m rows, i.e. the gemm kernel on weights
    // transposed at load. CLBlast: SGEMM of the same row-major a [m, k] and b [k, n].
    const auto a = random_floats(std::size_t{s.m} * s.k, 1), w = random_floats(std::size_t{s.n} * s.k, 2);
    std::vector<float> b(std::size_t{s.k} * s.n);
    for (std::uint32_t j = 0; j < s.n; ++j)
      for (std::uint32_t p = 0; p < s.k; ++p) b[std::size_t{p} * s.n + j] = w[std::size_t{j} * s.k + p];
    auto fc = device_layer<kiln::ops::FullyConnected>({}, {{{s.m, s.k}}, {{s.n, s.k}}}, {a, w}, {false, true});
    const Timing kiln_t = measure([&] {
      fc.run();
      device().queue().finish();
    });
    cl::Buffer a_buffer = device_buffer(a), b_buffer = device_buffer(b);
    cl::Buffer c_buffer = device_buffer(std::vector<float>(std::size_t{s.m} * s.n));
    cl_command_queue queue = device().queue()();
    const Timing clblast_t = measure([&] {
      const auto status =
          clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, s.m, s.n,
                               s.k, 1.0f, a_buffer(), 0, s.k, b_buffer(), 0, s.n, 0.0f, c_buffer(), 0, s.n, &queue);
      if (status != clblast::StatusCode::kSuccess) std::printf("CLBlast SGEMM failed: %d\n", static_cast<int>(status));
      device().queue().finish();
    });
    const std::size_t n = std::size_t{s.m} * s.n;
    const std::vector<float> kiln_c = read_back(fc.buffers.back(), n), clblast_c = read_back(c_buffer, n);
    std::printf("# gemm %ux%ux%u: max |kiln - CLBlast| = %.3g, max |CLBlast| = %.3g\n", s.m, s.n, s.k,
                max_difference(kiln_c, clblast_c), max_difference(clblast_c, std::vector<float>(n)));
    add({"cl gemm " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k), "device buffers",
         flop / kiln_t.median / 1e9, "clblast sgemm", flop / clblast_t.median / 1e9, "GFLOP/s", true});
  }
}

void bench_convolutions() {
  struct Conv {
    const char* name;
    std::uint32_t size, in, out, k, stride;
  };
  for (const Conv& c :
       {Conv{"cl conv 3x3 56x56x64->64 s1", 56, 64, 64, 3, 1}, Conv{"cl conv 3x3 224x224x3->32 s2", 224, 3, 32, 3, 2},
        Conv{"cl conv 1x1 28x28x128->256", 28, 128, 256, 1, 1}}) {
    const std::uint32_t pad = c.k / 2, o = (c.size + 2 * pad - c.k) / c.stride + 1;
    const double flop = 2.0 * o * o * c.out * c.k * c.k * c.in;
    const auto x = random_floats(std::size_t{c.size} * c.size * c.in, 1);
    const auto w = random_floats(std::size_t{c.out} * c.k * c.k * c.in, 4);
    auto conv = device_layer<kiln::ops::Convolution2d>(
        {.padding = {pad, pad, pad, pad}, .stride = {c.stride, c.stride}},
        {{{1, c.size, c.size, c.in}}, {{c.out, c.k, c.k, c.in}}}, {x, w}, {false, true});
    const Timing kiln_t = measure([&] {
      conv.run();
      device().queue().finish();
    });
    // CLBlast's convgemm works on CHW images and OIHW kernels: the same work in its own layouts.
    cl::Buffer image = device_buffer(x), kernel = device_buffer(w);
    cl::Buffer result = device_buffer(std::vector<float>(std::size_t{o} * o * c.out));
    cl_command_queue queue = device().queue()();
    const Timing clblast_t = measure([&] {
      const auto status =
          clblast::Convgemm<float>(clblast::KernelMode::kCrossCorrelation, c.in, c.size, c.size, c.k, c.k, pad, pad,
                                   c.stride, c.stride, 1, 1, c.out, 1, image(), 0, kernel(), 0, result(), 0, &queue);
      if (status != clblast::StatusCode::kSuccess)
        std::printf("CLBlast convgemm failed: %d\n", static_cast<int>(status));
      device().queue().finish();
    });
    add({c.name, "device buffers", flop / kiln_t.median / 1e9, "clblast convgemm", flop / clblast_t.median / 1e9,
         "GFLOP/s", true});
  }
}

void bench_networks() {
  struct Net {
    const char* name;
    kiln::Network (*make)();
  };
  for (const Net& n : {Net{"small_cnn", [] { return kiln::examples::small_cnn(); }},
                       Net{"mobilenet_v2 224", [] { return kiln::examples::mobilenet_v2(); }}}) {
    AlignedFloats in_cl, out_cl, in_ref, out_ref;
    auto cl = load_network<ClBackend, kiln::RefBackend>(n.make(), 0, in_cl, out_cl);
    auto ref = load_network<kiln::RefBackend>(n.make(), 0, in_ref, out_ref);
    const Timing cl_t = measure(cl.infer, 5);
    ref.infer();
    std::printf("# %s: max |Cl - Ref| over the output = %.3g\n", n.name,
                max_difference({out_cl.data.get(), out_cl.data.get() + out_cl.size},
                               {out_ref.data.get(), out_ref.data.get() + out_ref.size}));
#if KILN_WITH_NEON
    AlignedFloats in_neon, out_neon;
    auto neon = load_network<kiln::NeonBackend, kiln::RefBackend>(n.make(), 0, in_neon, out_neon);
    const Timing neon_t = measure(neon.infer, 5);
    add({n.name, "latency median", cl_t.median * 1e3, "kiln NeonBackend", neon_t.median * 1e3, "ms", false});
#else
    add({n.name, "latency median", cl_t.median * 1e3, "kiln RefBackend", measure(ref.infer, 1).median * 1e3, "ms",
         false});
#endif
  }
}

/// Process start to first inference, as a second start sees it: a fresh Runtime loading
/// MobileNet-v2 and running it once, with an empty program cache folder and with a filled one.
void bench_startup() {
  const auto dir = std::filesystem::temp_directory_path() / ("kiln_bench_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto first_inference_ms = [&](const std::string& cache) {
    const auto t0 = Clock::now();
    kiln::BackendOptions<ClBackend, kiln::RefBackend> options;
    options.get<ClBackend>().program_cache_dir = cache;
    AlignedFloats input, output;
    auto loaded = load_network<ClBackend, kiln::RefBackend>(kiln::examples::mobilenet_v2(), 0, input, output, options);
    loaded.infer();
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  const double without = first_inference_ms("");
  const double cold = first_inference_ms(dir.string());
  const double warm = first_inference_ms(dir.string());
  add({"startup mobilenet_v2 224", "program cache hit", warm, "no program cache", without, "ms", false});
  add({"startup mobilenet_v2 224", "program cache hit", warm, "cache cold (filling)", cold, "ms", false});
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  // PoCL keeps its own compiled-kernel cache; off, so that start-up measures kiln's cache alone.
  ::setenv("POCL_KERNEL_CACHE", "0", 0);
  // bench_cl [CSV] [SECTION...]: sections gemm, conv, networks, startup (default: all).
  const char* csv_path = argc > 1 ? argv[1] : "bench_cl.csv";
  const std::vector<std::string_view> sections(argv + std::min(argc, 2), argv + argc);
  auto wanted = [&](std::string_view s) {
    return sections.empty() || std::ranges::find(sections, s) != sections.end();
  };
  std::printf("ClBackend on %s\n", device().device_description().c_str());
  std::printf("%-34s %-26s %12s %-18s %12s %-8s %7s\n", "case", "variant", "kiln", "anchor", "anchor_value", "unit",
              "ratio");
  if (wanted("gemm")) bench_gemm();
  if (wanted("conv")) bench_convolutions();
  if (wanted("networks")) bench_networks();
  if (wanted("startup")) bench_startup();
  return write_csv(csv_path, "") ? 0 : 1;
}
