// SPDX-License-Identifier: Apache-2.0
// ClBackend's per-runtime state: the device, context and queue, the program cache, and device memory.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "kiln/backends/backend.hpp"
#include "kiln/backends/cl/kernel_sources.hpp"
#include "kiln/backends/cl/opencl.hpp"
#include "kiln/memory/device_arena.hpp"

namespace kiln::opencl {

/// ClBackend's per-runtime settings (`BackendOptions<...>::get<ClBackend>()`).
struct Options {
  /// Which OpenCL device runs the kernels; empty means the environment variable KILN_CL_DEVICE, and
  /// when that is unset too, the first GPU or else the first device of any type. "gpu", "cpu" or
  /// "accelerator" pick the first device of that type; "P:D" device D of platform P; any other text
  /// the first device whose name contains it; "none" no device at all.
  std::string device;
  /// A folder holding common.cl and the kernel families' .cl files, built instead of the copies
  /// embedded at build time (kernel development without rebuilding); empty means the environment
  /// variable KILN_CL_KERNEL_DIR, and when that is unset too, the embedded sources.
  std::string kernel_dir;
  /// Added to the options of every program build (e.g. "-cl-fast-relaxed-math"); empty means the
  /// environment variable KILN_CL_BUILD_OPTIONS, and when that is unset too, none.
  std::string build_options;
  /// A folder where built programs are kept as device binaries, keyed by their source, build
  /// options, device and driver, so that a later process loads them instead of compiling; empty
  /// means the environment variable KILN_CL_CACHE_DIR, and when that is unset too, no cache.
  std::string program_cache_dir;
  /// A file of work-group sizes tuned earlier for each (kernel, global size), read when the device
  /// opens; empty means the environment variable KILN_CL_TUNING_FILE, and when that is unset too,
  /// the driver chooses every size.
  std::string tuning_file;
  /// Measure the work-group sizes the tuning file lacks: each such launch first tries the
  /// candidate sizes once and keeps the fastest (Arm NN's CLTuner), and the file is rewritten with
  /// the additions when the context ends (or at save_tuning()).
  bool tune = false;
};

/// What `device` names, once the environment is consulted.
inline std::string device_spec(const Options& options) {
  if (!options.device.empty()) return options.device;
  const char* env = std::getenv("KILN_CL_DEVICE");
  return env ? env : "";
}

/// 64-bit FNV-1a of some strings, each followed by a zero byte: the program cache's key.
inline std::uint64_t fnv1a(std::initializer_list<std::string_view> parts) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (std::string_view part : parts) {
    for (char c : part) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

/// Every device of every platform, with the platform index, or why there are none.
inline Expected<std::vector<std::pair<std::size_t, cl::Device>>> all_devices() {
  std::vector<cl::Platform> platforms;
  if (cl_int err = cl::Platform::get(&platforms); err != CL_SUCCESS || platforms.empty())
    return Status::error(ErrorCode::Unsupported, "no OpenCL platform is installed (clGetPlatformIDs: ",
                         error_name(err == CL_SUCCESS ? CL_DEVICE_NOT_FOUND : err),
                         "); on Debian, install an ICD such as pocl-opencl-icd or a GPU vendor's");
  std::vector<std::pair<std::size_t, cl::Device>> devices;
  for (std::size_t p = 0; p < platforms.size(); ++p) {
    std::vector<cl::Device> found;
    if (platforms[p].getDevices(CL_DEVICE_TYPE_ALL, &found) != CL_SUCCESS) continue;
    for (cl::Device& d : found) devices.emplace_back(p, std::move(d));
  }
  if (devices.empty())
    return Status::error(ErrorCode::Unsupported, "the installed OpenCL platforms (", platforms.size(),
                         ") have no device");
  return devices;
}

/// The device `spec` names (see Options::device), or a message listing the devices there are.
inline Expected<cl::Device> select_device(std::string_view spec) {
  if (spec == "none") return Status::error(ErrorCode::Unsupported, "OpenCL is switched off (device \"none\")");
  auto devices = all_devices();
  if (!devices) return devices.status();
  auto type_of = [](const cl::Device& d) { return d.getInfo<CL_DEVICE_TYPE>(); };
  auto first_of_type = [&](cl_device_type type) -> const cl::Device* {
    for (const auto& [p, d] : *devices)
      if (type_of(d) & type) return &d;
    return nullptr;
  };
  const cl::Device* chosen = nullptr;
  if (spec.empty()) {
    chosen = first_of_type(CL_DEVICE_TYPE_GPU);
    if (!chosen) chosen = &devices->front().second;
  } else if (spec == "gpu" || spec == "cpu" || spec == "accelerator") {
    chosen = first_of_type(spec == "gpu"   ? CL_DEVICE_TYPE_GPU
                           : spec == "cpu" ? CL_DEVICE_TYPE_CPU
                                           : CL_DEVICE_TYPE_ACCELERATOR);
  } else if (const auto colon = spec.find(':'); colon != std::string_view::npos && colon > 0 &&
                                                spec.find_first_not_of("0123456789:") == std::string_view::npos) {
    const auto platform = std::stoul(std::string(spec.substr(0, colon)));
    const auto index = std::stoul("0" + std::string(spec.substr(colon + 1)));
    std::size_t seen = 0;
    for (const auto& [p, d] : *devices)
      if (p == platform && seen++ == index) chosen = &d;
  } else {
    for (const auto& [p, d] : *devices)
      if (!chosen && d.getInfo<CL_DEVICE_NAME>().find(spec) != std::string::npos) chosen = &d;
  }
  if (chosen) return *chosen;
  std::string known;
  std::vector<std::size_t> per_platform;
  for (const auto& [p, d] : *devices) {
    per_platform.resize(std::max(per_platform.size(), p + 1));
    known +=
        detail::str_cat(known.empty() ? "" : ", ", p, ':', per_platform[p]++, " \"", d.getInfo<CL_DEVICE_NAME>(), '"');
  }
  return Status::error(ErrorCode::NotFound, "no OpenCL device matches \"", spec, "\"; there are ", known);
}

/// The events of the commands this thread enqueues while a profiled layer runs (Context::begin_device_timing).
inline thread_local std::shared_ptr<std::vector<cl::Event>> recorded_events;

/// Where an enqueue on this thread leaves its event: a new slot while a profiled layer runs, else nowhere.
inline cl::Event* event_to_record() {
  if (!recorded_events) return nullptr;
  return &recorded_events->emplace_back();
}

/// The same for the C API's enqueue calls: the handle the command's event is written to, or nullptr.
inline cl_event* recorded_event() {
  cl::Event* event = event_to_record();
  return event ? &(*event)() : nullptr;
}

/// ClBackend's per-runtime state. The device is opened at the first load of a network that uses
/// it; programs are built once per (kernel family, build options) and kept; contexts are cheap to
/// move (the state is shared).
class Context {
 public:
  void configure(const Options& options) { state_->options = options; }

  /// Opens the device, context and queue on first use; later calls return the first call's result.
  Status ready() {
    std::call_once(state_->opened, [&] { state_->open_status = open(); });
    return state_->open_status;
  }

  const cl::Device& device() const { return state_->device; }
  const cl::Context& cl_context() const { return state_->context; }
  const cl::CommandQueue& queue() const { return state_->queue; }
  /// CL_DEVICE_NAME and CL_DRIVER_VERSION of the open device.
  std::string device_description() const {
    return detail::str_cat(state_->device.getInfo<CL_DEVICE_NAME>(), " (", state_->device.getInfo<CL_DEVICE_VERSION>(),
                           ", driver ", state_->device.getInfo<CL_DRIVER_VERSION>(), ')');
  }

  /// Kernel `name` of family `family` (kernels/<family>.cl), its program built with `options` on
  /// first request and cached. A failed build returns the compiler's log.
  Expected<cl::Kernel> kernel(std::string_view family, std::string_view name, std::string_view options = {}) {
    if (auto status = ready(); !status) return status;
    auto program = this->program(family, options);
    if (!program) return program.status();
    cl_int err = CL_SUCCESS;
    cl::Kernel kernel(*program, std::string(name).c_str(), &err);
    if (err != CL_SUCCESS)
      return cl_error(detail::str_cat("clCreateKernel(\"", name, "\") of kernels/", family, ".cl"), err);
    return kernel;
  }

  /// How many programs this context compiled from source (found neither in memory nor on disk).
  std::size_t programs_built() const {
    std::lock_guard lock(state_->programs_mutex);
    return state_->programs_built;
  }
  /// How many programs it loaded as binaries from the on-disk cache (Options::program_cache_dir).
  std::size_t programs_loaded() const {
    std::lock_guard lock(state_->programs_mutex);
    return state_->programs_loaded;
  }

  /// A read-only device copy of `bytes` bytes of host data (weights and other constants, at load).
  Expected<cl::Buffer> upload(const void* data, std::size_t bytes) {
    if (auto status = ready(); !status) return status;
    // OpenCL has no empty buffers: an empty constant gets a small one that no kernel reads.
    cl_int err = CL_SUCCESS;
    cl::Buffer buffer = bytes == 0 ? cl::Buffer(state_->context, CL_MEM_READ_ONLY, 4, nullptr, &err)
                                   : cl::Buffer(state_->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                                                const_cast<void*>(data), &err);
    if (err != CL_SUCCESS) return cl_error(detail::str_cat("clCreateBuffer(", bytes, " bytes of constants)"), err);
    return buffer;
  }

  // Work-group sizes.

  /// The local size to launch `kernel` (called `name`) over `global` with: the tuned one, one
  /// measured now when tuning (the kernel's arguments must be set), or the driver's choice.
  cl::NDRange local_size(const cl::Kernel& kernel, const std::string& name, const cl::NDRange& global) {
    const std::string key = tuning_key(name, global);
    {
      std::lock_guard lock(state_->tuning_mutex);
      if (auto it = state_->tuned.find(key); it != state_->tuned.end())
        return as_range(it->second, global.dimensions());
      if (!state_->options.tune) return cl::NullRange;
    }
    const WorkGroup best = fastest_work_group(kernel, global);
    std::lock_guard lock(state_->tuning_mutex);
    state_->tuned.emplace(key, best);
    state_->tuning_changed = true;
    return as_range(best, global.dimensions());
  }
  /// How many (kernel, global size) pairs have a tuned work-group size.
  std::size_t tuned_sizes() const {
    std::lock_guard lock(state_->tuning_mutex);
    return state_->tuned.size();
  }
  /// Writes the tuned sizes to the tuning file (also done when a tuning context ends).
  Status save_tuning() const { return state_->save_tuning(); }

  // DeviceMemoryContext: what the runtime needs to plan and allocate ClBackend's tensors.

  /// Sub-buffer origins must be multiples of CL_DEVICE_MEM_BASE_ADDR_ALIGN (given in bits).
  std::size_t arena_alignment() {
    if (!ready()) return 1;
    return std::max<std::size_t>(1, state_->device.getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8);
  }

  /// One device buffer for a working memory's tensors; each tensor is a sub-buffer of it.
  Expected<DeviceArena> allocate_arena(std::uint64_t bytes) {
    if (auto status = ready(); !status) return status;
    auto arena = std::make_shared<Arena>();
    if (bytes != 0) {
      cl_int err = CL_SUCCESS;
      arena->buffer = cl::Buffer(state_->context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
      if (err != CL_SUCCESS) return cl_error(detail::str_cat("clCreateBuffer(", bytes, "-byte arena)"), err);
    }
    return DeviceArena(arena, [](void* state, std::uint64_t offset, std::uint64_t size) -> Expected<void*> {
      auto& a = *static_cast<Arena*>(state);
      if (size == 0) return static_cast<void*>(nullptr);
      const cl_buffer_region region{offset, size};
      cl_int err = CL_SUCCESS;
      cl::Buffer view = a.buffer.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
      if (err != CL_SUCCESS)
        return cl_error(detail::str_cat("clCreateSubBuffer(offset ", offset, ", ", size, " bytes)"), err);
      a.views.push_back(std::move(view));
      return static_cast<void*>(a.views.back()());
    });
  }

  // DeviceTimingContext: profiled layers report what the device measured.

  void begin_device_timing() { recorded_events = std::make_shared<std::vector<cl::Event>>(); }
  std::function<std::optional<DeviceSpan>()> end_device_timing() {
    return [events = std::exchange(recorded_events, nullptr)]() -> std::optional<DeviceSpan> {
      cl_ulong queued = 0, start = 0, end = 0;
      for (std::size_t i = 0; i < events->size(); ++i) {
        cl_ulong q = 0, s = 0, e = 0;
        const cl::Event& event = (*events)[i];
        if (event.getProfilingInfo(CL_PROFILING_COMMAND_QUEUED, &q) != CL_SUCCESS ||
            event.getProfilingInfo(CL_PROFILING_COMMAND_START, &s) != CL_SUCCESS ||
            event.getProfilingInfo(CL_PROFILING_COMMAND_END, &e) != CL_SUCCESS)
          return std::nullopt;  // not finished, or not profiled
        if (i == 0) queued = q, start = s;
        start = std::min(start, s);
        end = std::max(end, e);
      }
      if (events->empty()) return std::nullopt;
      return DeviceSpan{static_cast<double>(start - std::min(queued, start)) / 1e3,
                        static_cast<double>(end - start) / 1e3};
    };
  }

  /// The user's input buffer as a device buffer over the same memory (CL_MEM_USE_HOST_PTR), which
  /// the kernels read in place where the device shares host memory (a CPU device, integrated GPUs)
  /// and the driver copies on its own where it does not.
  Expected<DeviceImport> import_host(const void* host, std::uint64_t bytes) {
    cl_int err = CL_SUCCESS;
    auto buffer = std::make_shared<cl::Buffer>(state_->context, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes,
                                               const_cast<void*>(host), &err);
    if (err != CL_SUCCESS)
      return cl_error(detail::str_cat("clCreateBuffer(CL_MEM_USE_HOST_PTR, ", bytes, " bytes)"), err);
    return DeviceImport{(*buffer)(), buffer};
  }

  /// Waits until the device has run everything enqueued on the queue.
  Status finish() {
    const cl_int err = clFinish(state_->queue());
    return err == CL_SUCCESS ? Status::ok() : cl_error("clFinish", err);
  }

  /// Blocking read of a device tensor (the debug callback's view of it).
  Status read(const void* handle, void* host, std::uint64_t bytes) {
    if (bytes == 0) return Status::ok();
    const cl_int err = clEnqueueReadBuffer(state_->queue(), static_cast<cl_mem>(const_cast<void*>(handle)), CL_TRUE, 0,
                                           bytes, host, 0, nullptr, nullptr);
    return err == CL_SUCCESS ? Status::ok() : cl_error("clEnqueueReadBuffer", err);
  }

 private:
  struct Arena {
    cl::Buffer buffer;
    std::vector<cl::Buffer> views;
  };
  /// A work-group size; 0 in the first entry means the driver's choice (NullRange).
  using WorkGroup = std::array<std::size_t, 3>;

  static std::string tuning_key(const std::string& name, const cl::NDRange& global) {
    std::string key = name;
    for (std::size_t d = 0; d < 3; ++d) key += detail::str_cat(' ', d < global.dimensions() ? global.get()[d] : 1);
    return key;
  }
  static cl::NDRange as_range(const WorkGroup& size, std::size_t dimensions) {
    if (size[0] == 0) return cl::NullRange;
    if (dimensions == 1) return cl::NDRange(size[0]);
    if (dimensions == 2) return cl::NDRange(size[0], size[1]);
    return cl::NDRange(size[0], size[1], size[2]);
  }

  /// Times `kernel` over `global` with the driver's choice and with every candidate size that
  /// divides the global size (as OpenCL 1.2 requires), twice each, and returns the fastest.
  WorkGroup fastest_work_group(const cl::Kernel& kernel, const cl::NDRange& global) {
    std::size_t limit = 0;
    kernel.getWorkGroupInfo(state_->device, CL_KERNEL_WORK_GROUP_SIZE, &limit);
    std::vector<WorkGroup> candidates{{0, 1, 1}};
    const std::size_t dims = global.dimensions();
    for (std::size_t x : {1, 2, 4, 8, 16, 32, 64, 128, 256})
      for (std::size_t y : {1, 2, 4, 8, 16}) {
        if (dims == 1 && y != 1) continue;
        const WorkGroup size{x, dims > 1 ? y : 1, 1};
        if (x * size[1] < 4 || x * size[1] > limit || global.get()[0] % x != 0 ||
            (dims > 1 && global.get()[1] % y != 0))
          continue;
        candidates.push_back(size);
      }
    WorkGroup best = candidates.front();
    double best_time = std::numeric_limits<double>::infinity();
    for (const WorkGroup& candidate : candidates)
      for (int repeat = 0; repeat < 2; ++repeat) {
        cl::Event event;
        if (state_->queue.enqueueNDRangeKernel(kernel, cl::NullRange, global, as_range(candidate, dims), nullptr,
                                               &event) != CL_SUCCESS ||
            event.wait() != CL_SUCCESS)
          break;
        cl_ulong start = 0, end = 0;
        event.getProfilingInfo(CL_PROFILING_COMMAND_START, &start);
        event.getProfilingInfo(CL_PROFILING_COMMAND_END, &end);
        if (static_cast<double>(end - start) < best_time) {
          best_time = static_cast<double>(end - start);
          best = candidate;
        }
      }
    return best;
  }

  /// Reads the tuning file, when there is one: "kernel g0 g1 g2 l0 l1 l2" per line.
  Status load_tuning() {
    const std::string path = option_or_env(state_->options.tuning_file, "KILN_CL_TUNING_FILE");
    state_->tuning_path = path;
    if (path.empty()) return Status::ok();
    std::ifstream file(path);
    if (!file) {
      if (state_->options.tune) return Status::ok();  // tuning creates it
      return Status::error(ErrorCode::NotFound, "cannot read the OpenCL tuning file ", path);
    }
    std::string line;
    for (std::size_t number = 1; std::getline(file, line); ++number) {
      std::istringstream fields(line);
      std::string name;
      std::array<std::size_t, 3> global{};
      WorkGroup local{};
      if (line.empty()) continue;
      if (!(fields >> name >> global[0] >> global[1] >> global[2] >> local[0] >> local[1] >> local[2]))
        return Status::error(ErrorCode::InvalidArgument, "line ", number, " of the OpenCL tuning file ", path,
                             " is not \"kernel g0 g1 g2 l0 l1 l2\": ", line);
      state_->tuned.emplace(detail::str_cat(name, ' ', global[0], ' ', global[1], ' ', global[2]), local);
    }
    return Status::ok();
  }

  struct State {
    Options options;
    std::once_flag opened;
    Status open_status;
    cl::Device device;
    cl::Context context;
    cl::CommandQueue queue;
    mutable std::mutex programs_mutex;
    std::map<std::string, cl::Program, std::less<>> programs;
    std::size_t programs_built = 0;
    std::size_t programs_loaded = 0;
    mutable std::mutex tuning_mutex;
    std::map<std::string, WorkGroup, std::less<>> tuned;
    std::string tuning_path;
    bool tuning_changed = false;

    Status save_tuning() const {
      std::lock_guard lock(tuning_mutex);
      if (tuning_path.empty()) return Status::error(ErrorCode::InvalidArgument, "no OpenCL tuning file is set");
      std::ofstream file(tuning_path, std::ios::trunc);
      for (const auto& [key, local] : tuned)
        file << key << ' ' << local[0] << ' ' << local[1] << ' ' << local[2] << '\n';
      if (!file) return Status::error(ErrorCode::InvalidArgument, "cannot write the OpenCL tuning file ", tuning_path);
      return Status::ok();
    }
    ~State() {
      if (options.tune && tuning_changed) (void)save_tuning();
    }
  };

  Status open() {
    auto device = select_device(device_spec(state_->options));
    if (!device) return device.status();
    state_->device = *device;
    cl_int err = CL_SUCCESS;
    state_->context = cl::Context(state_->device, nullptr, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) return cl_error("clCreateContext", err);
    // Profiling costs little next to a kernel launch, and lets any network loaded with profiling
    // report device times without a second queue.
    state_->queue = cl::CommandQueue(state_->context, state_->device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) return cl_error("clCreateCommandQueue", err);
    return load_tuning();
  }

  std::string kernel_dir() const { return option_or_env(state_->options.kernel_dir, "KILN_CL_KERNEL_DIR"); }
  std::string cache_dir() const { return option_or_env(state_->options.program_cache_dir, "KILN_CL_CACHE_DIR"); }
  static std::string option_or_env(const std::string& option, const char* variable) {
    if (!option.empty()) return option;
    const char* env = std::getenv(variable);
    return env ? env : "";
  }

  /// Where the binary of a program is cached: the key covers everything that changes the binary.
  std::string cache_file(std::string_view family, std::string_view source, std::string_view options) const {
    const cl::Device& d = state_->device;
    const std::uint64_t key = fnv1a({source, options, d.getInfo<CL_DEVICE_NAME>(), d.getInfo<CL_DEVICE_VERSION>(),
                                     d.getInfo<CL_DRIVER_VERSION>(),
                                     cl::Platform(d.getInfo<CL_DEVICE_PLATFORM>()).getInfo<CL_PLATFORM_VERSION>()});
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(key));
    return detail::str_cat(cache_dir(), '/', family, '-', hex, ".bin");
  }

  /// The cached binary of a program, built; nothing when there is none or it does not load.
  std::optional<cl::Program> load_cached(const std::string& path, std::string_view options) const {
    std::ifstream file(path, std::ios::binary);
    if (!file) return std::nullopt;
    const std::vector<unsigned char> binary((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (binary.empty()) return std::nullopt;
    cl_int err = CL_SUCCESS;
    cl::Program program(state_->context, {state_->device}, cl::Program::Binaries{binary}, nullptr, &err);
    if (err != CL_SUCCESS ||
        program.build(std::vector<cl::Device>{state_->device}, std::string(options).c_str()) != CL_SUCCESS)
      return std::nullopt;
    return program;
  }

  /// Writes a built program's binary next to the others; a cache that cannot be written is no error.
  static void store_cached(const std::string& path, const cl::Program& program) {
    std::vector<std::vector<unsigned char>> binaries;
    if (program.getInfo(CL_PROGRAM_BINARIES, &binaries) != CL_SUCCESS || binaries.size() != 1 || binaries[0].empty())
      return;
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
    // Written aside and renamed, so that a process reading the cache never sees half a file. The
    // aside name is the writer's own: a thread id alone repeats across processes (two test
    // programs sharing a cache would write one file at once), so the time and the address of a
    // local (another in each process, by address-space randomisation) join it.
    const int local = 0;
    const std::size_t writer = std::hash<std::thread::id>{}(std::this_thread::get_id()) ^
                               static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(&local)) ^
                               static_cast<std::size_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    const std::string partial = detail::str_cat(path, '.', writer, ".part");
    {
      std::ofstream file(partial, std::ios::binary);
      file.write(reinterpret_cast<const char*>(binaries[0].data()), static_cast<std::streamsize>(binaries[0].size()));
      if (!file) return;
    }
    std::filesystem::rename(partial, path, ignored);
  }

  /// The text of kernels/<family>.cl: read from the kernel folder when one is set, else embedded.
  Expected<std::string> family_source(std::string_view family) const {
    if (const std::string dir = kernel_dir(); !dir.empty()) {
      const std::string path = detail::str_cat(dir, '/', family, ".cl");
      std::ifstream file(path);
      if (!file) return Status::error(ErrorCode::NotFound, "cannot read OpenCL kernel source ", path);
      std::ostringstream text;
      text << file.rdbuf();
      return text.str();
    }
    for (const KernelSource& source : embedded_kernel_sources)
      if (source.family == family) return std::string(source.text);
    return Status::error(ErrorCode::NotFound, "no embedded OpenCL kernel family '", family, "'");
  }

  Expected<cl::Program> program(std::string_view family, std::string_view options) {
    const std::string key = detail::str_cat(family, '\n', options);
    std::lock_guard lock(state_->programs_mutex);
    if (auto it = state_->programs.find(key); it != state_->programs.end()) return it->second;
    auto common = family_source("common");
    if (!common) return common.status();
    auto own = family_source(family);
    if (!own) return own.status();
    // #line keeps the compiler's messages pointing at the right file and line.
    const std::string source =
        detail::str_cat("#line 1 \"common.cl\"\n", *common, "\n#line 1 \"", family, ".cl\"\n", *own);
    const std::string build_options = detail::str_cat(
        "-cl-std=CL1.2 ", options, ' ', option_or_env(state_->options.build_options, "KILN_CL_BUILD_OPTIONS"));
    const std::string cached = cache_dir().empty() ? std::string() : cache_file(family, source, build_options);
    if (!cached.empty())
      if (std::optional<cl::Program> program = load_cached(cached, build_options)) {
        ++state_->programs_loaded;
        state_->programs.emplace(key, *program);
        return *program;
      }
    cl_int err = CL_SUCCESS;
    cl::Program program(state_->context, source, false, &err);
    if (err != CL_SUCCESS) return cl_error(detail::str_cat("clCreateProgramWithSource(kernels/", family, ".cl)"), err);
    err = program.build(std::vector<cl::Device>{state_->device}, build_options.c_str());
    if (err != CL_SUCCESS) {
      std::string log;
      program.getBuildInfo(state_->device, CL_PROGRAM_BUILD_LOG, &log);
      return Status::error(ErrorCode::DeviceError, "building OpenCL program kernels/", family, ".cl (options \"",
                           build_options, "\") failed: ", error_name(err), "; build log:\n", log);
    }
    ++state_->programs_built;
    if (!cached.empty()) store_cached(cached, program);
    state_->programs.emplace(key, program);
    return program;
  }

  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace kiln::opencl
