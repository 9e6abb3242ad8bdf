// SPDX-License-Identifier: Apache-2.0
// The static path allocates nothing, not even to make its workloads: this program replaces malloc,
// calloc, realloc and the global operator new with versions that abort once the model is about to
// be made, then makes each compiled DS-CNN (examples/firmware/keyword_spotters.hpp: Float32 and
// int8) and runs 1000 inferences, checking the last one against its reference. (The firmware build
// links a _sbrk that ends the program.) For comparison it first measures the heap the dynamic path
// takes for the same network: the peak of live bytes while the Runtime optimizes, loads and runs it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <span>

#include <malloc.h>

#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>
#include <kiln/static/network_of.hpp>

#include "keyword_spotters.hpp"

namespace {
bool forbidden = false;
std::size_t live = 0, peak = 0;  // bytes, as malloc_usable_size counts them
void refuse(const char* what) {
  if (!forbidden) return;
  std::fprintf(stderr, "static_no_heap: %s called after the heap was closed\n", what);
  std::abort();
}
void* counted(void* p) {
  if (p != nullptr) peak = std::max(peak, live += malloc_usable_size(p));
  return p;
}
}  // namespace

// glibc's allocator under its own names, so that these can refuse and otherwise forward to it.
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
void* malloc(std::size_t bytes) {
  refuse("malloc");
  return counted(__libc_malloc(bytes));
}
void* calloc(std::size_t count, std::size_t bytes) {
  refuse("calloc");
  return counted(__libc_calloc(count, bytes));
}
void* realloc(void* p, std::size_t bytes) {
  refuse("realloc");
  if (p != nullptr) live -= malloc_usable_size(p);
  return counted(__libc_realloc(p, bytes));
}
void* aligned_alloc(std::size_t alignment, std::size_t bytes) {
  refuse("aligned_alloc");
  return counted(__libc_memalign(alignment, bytes));
}
void free(void* p) {
  if (p != nullptr) live -= malloc_usable_size(p);
  __libc_free(p);
}
}
void* operator new(std::size_t bytes) {
  refuse("operator new");
  if (void* p = counted(__libc_malloc(bytes))) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t bytes, std::align_val_t alignment) {
  refuse("operator new");
  if (void* p = counted(__libc_memalign(static_cast<std::size_t>(alignment), bytes))) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { free(p); }
void operator delete(void* p, std::size_t) noexcept { free(p); }
void operator delete(void* p, std::align_val_t) noexcept { free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { free(p); }

namespace {

template <class Spotter>
bool runs_without_heap() {
  alignas(64) static std::byte arena[Spotter::arena_bytes];
  static float scores[std::size(Spotter::expected)];
  {
    using Runtime = kiln::Runtime<typename Spotter::Ops, kiln::RefBackend>;  // only the ops it uses
    const std::size_t before = live;
    peak = live;
    Runtime runtime;
    auto optimized = Runtime::optimize(kiln::network_of<Spotter::layers, Spotter::tensors>());
    auto id = optimized ? runtime.load(std::move(*optimized)) : kiln::Expected<kiln::NetworkId>(optimized.status());
    if (!id) return false;
    const kiln::InputBinding in[] = {{0, {*runtime.input_info(*id, 0), Spotter::input}}};
    const kiln::OutputBinding out[] = {{0, {*runtime.output_info(*id, 0), scores}}};
    for (int i = 0; i < 1000; ++i)
      if (!runtime.enqueue(*id, in, out)) return false;
    std::printf("%s, the dynamic Runtime: a peak of %zu bytes of heap to optimize, load and run it 1000 times\n",
                Spotter::name, peak - before);
  }
  forbidden = true;
  {
    typename Spotter::template Model<kiln::RefBackend> model{arena};
    for (int i = 0; i < 1000; ++i)
      if (!model.run(std::span<const float>(Spotter::input), std::span<float>(scores))) return false;
  }
  forbidden = false;
  for (std::size_t c = 0; c < std::size(scores); ++c)
    if (!Spotter::agrees(scores[c], Spotter::expected[c])) {
      std::printf("score %zu is %g; %s's is %g\n", c, scores[c], Spotter::reference, Spotter::expected[c]);
      return false;
    }
  std::printf("%s, compiled: 1000 inferences, no allocation; scores match %s's\n", Spotter::name, Spotter::reference);
  return true;
}

}  // namespace

int main() { return runs_without_heap<Float32Spotter>() && runs_without_heap<Int8Spotter>() ? 0 : 1; }
