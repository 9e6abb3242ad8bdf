// SPDX-License-Identifier: Apache-2.0
// Inference allocates nothing. This program replaces the global operator new with one that counts
// (kiln allocates only through it: containers, arenas and constants), and runs MobileNet-v2 224
// 20 times with enqueue and 20 times with execute after a first inference, on each backend.
#include <atomic>
#include <cstdlib>
#include <new>

#include <catch2/catch.hpp>
#include <kiln/kiln.hpp>

#include "example_networks.hpp"

namespace {

std::atomic<bool> counting{false};
std::atomic<std::size_t> allocations{0};

void* allocate(std::size_t size, std::size_t alignment) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  size = size == 0 ? 1 : size;
  if (alignment <= alignof(std::max_align_t)) return std::malloc(size);
  return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
}
void* allocate_or_throw(std::size_t size, std::size_t alignment) {
  void* p = allocate(size, alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t size) { return allocate_or_throw(size, 0); }
void* operator new[](std::size_t size) { return allocate_or_throw(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) {
  return allocate_or_throw(size, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t size, std::align_val_t a) {
  return allocate_or_throw(size, static_cast<std::size_t>(a));
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate(size, 0); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return allocate(size, 0); }
void* operator new(std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(size, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(size, static_cast<std::size_t>(a));
}
// GCC sees std::free reached from the standard operator new's allocations where it inlines library
// code, and warns of a mismatch (-Wmismatched-new-delete); here every new is malloc's, so none is.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

using namespace kiln;

/// 20, or KILN_TEST_INFERENCES (unoptimised sanitizer builds run a few: RefBackend's MobileNet-v2
/// takes seconds an inference there). An inference that allocated would do so every time, so a
/// few show it; more only lengthen the test.
int inferences() {
  const char* given = std::getenv("KILN_TEST_INFERENCES");
  return given != nullptr ? std::atoi(given) : 20;
}

/// What `repeat` allocates, with no Catch2 macro (which allocates itself) inside the window.
template <class F>
std::size_t allocations_during(F&& repeat) {
  allocations = 0;
  counting = true;
  repeat();
  counting = false;
  return allocations.load();
}

struct Counts {
  std::size_t enqueue = 0, execute = 0;
  bool all_ok = true;
};

/// MobileNet-v2 224 loaded twice on R (synchronous and asynchronous), each run once, then
/// `inferences` times while counting; in Float16 when `float16` (reduce_float32_to_float16).
template <class R>
Counts count_allocations(const typename R::Options& backend_options, std::span<const std::string_view> preferences,
                         bool float16 = false) {
  const std::vector<std::string_view> prefer(preferences.begin(), preferences.end());
  auto optimized =
      R::optimize(examples::mobilenet_v2(224), {.backend_preferences = prefer, .reduce_float32_to_float16 = float16});
  REQUIRE(optimized);
  R runtime({}, backend_options);
  auto sync = runtime.load(*optimized);
  auto async = runtime.load(*optimized, {.async_execution = true});
  REQUIRE(sync);
  REQUIRE(async);
  const TensorInfo in_info = *runtime.input_info(*sync, 0), out_info = *runtime.output_info(*sync, 0);
  const std::vector<float> input = examples::WeightGenerator(3).values(in_info.num_elements(), 1.0f);
  std::vector<float> output(out_info.num_elements());
  const InputBinding in[] = {{0, {in_info, input.data()}}};
  const OutputBinding out[] = {{0, {out_info, output.data()}}};
  auto handle = runtime.create_working_mem_handle(*async);
  REQUIRE(handle);
  REQUIRE(runtime.enqueue(*sync, in, out));
  REQUIRE(runtime.execute(**handle, in, out));

  Counts counts;
  const int runs = inferences();
  counts.enqueue = allocations_during([&] {
    for (int i = 0; i < runs; ++i) counts.all_ok = runtime.enqueue(*sync, in, out).is_ok() && counts.all_ok;
  });
  counts.execute = allocations_during([&] {
    for (int i = 0; i < runs; ++i) counts.all_ok = runtime.execute(**handle, in, out).is_ok() && counts.all_ok;
  });
  return counts;
}

}  // namespace

TEST_CASE("RefBackend runs MobileNet-v2 224 without allocating", "[runtime][allocations]") {
  const std::string_view ref[] = {"CpuRef"};
  const Counts counts = count_allocations<Runtime<RefBackend>>({}, ref);
  CHECK(counts.all_ok);
  CHECK(counts.enqueue == 0);
  CHECK(counts.execute == 0);
}

#if KILN_WITH_NEON
TEST_CASE("NeonBackend runs MobileNet-v2 224 without allocating, on 1 and 2 threads", "[runtime][allocations][neon]") {
  for (unsigned threads : {1u, 2u}) {
    INFO(threads << " threads");
    Runtime<NeonBackend, RefBackend>::Options options;
    options.get<NeonBackend>().threads = threads;
    const Counts counts = count_allocations<Runtime<NeonBackend, RefBackend>>(options, {});
    CHECK(counts.all_ok);
    CHECK(counts.enqueue == 0);
    CHECK(counts.execute == 0);
  }
}

TEST_CASE("NeonBackend runs MobileNet-v2 224 in Float16 without allocating", "[runtime][allocations][neon][float16]") {
  Runtime<NeonBackend, RefBackend>::Options options;
  options.get<NeonBackend>().threads = 2;
  const Counts counts = count_allocations<Runtime<NeonBackend, RefBackend>>(options, {}, true);
  CHECK(counts.all_ok);
  CHECK(counts.enqueue == 0);
  CHECK(counts.execute == 0);
}
#endif

#if KILN_WITH_CL
TEST_CASE("ClBackend runs MobileNet-v2 224 without allocating in kiln", "[runtime][allocations][cl]") {
  if (!ClBackend::available()) {
    WARN("no OpenCL device: skipped");
    return;
  }
  const std::string_view cl[] = {"GpuAcc"};
  const Counts counts = count_allocations<Runtime<ClBackend, RefBackend>>({}, cl);
  CHECK(counts.all_ok);
  CHECK(counts.enqueue == 0);
  CHECK(counts.execute == 0);
}
#endif
