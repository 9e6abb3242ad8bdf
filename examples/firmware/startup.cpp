// SPDX-License-Identifier: Apache-2.0
// What runs before main on the Cortex-M4F of QEMU's MPS2 board (mps2_an386.ld): the vector table,
// then the reset handler, which lays out memory, enables the FPU and the semihosting console,
// runs main, reports how much of the stack it used, and reports main's status to QEMU.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <malloc.h>  // newlib's memalign

extern "C" {
extern std::uint32_t __data_start__[], __data_end__[], __data_load__[], __bss_start__[], __bss_end__[];
extern std::uint32_t __stack_limit__[], __stack_top__[];
void initialise_monitor_handles();  // newlib's semihosting (librdimon)
void __libc_init_array();
int main();

// newlib's __libc_init_array calls _init and exit's __libc_fini_array calls _fini; with
// -nostartfiles no crti provides them, and kiln has nothing to run there.
void _init() {}
void _fini() {}
// What crtbegin would define: the handle of this program's static destructors (there is no DSO).
void* __dso_handle = &__dso_handle;

// The stack below the reset handler's frame is painted with a pattern; the deepest word main
// changed is how far the stack grew.
constexpr std::uint32_t stack_paint = 0xA5A5A5A5u;
__attribute__((noinline)) static void paint_stack() {
  std::uint32_t* below_frame = static_cast<std::uint32_t*>(__builtin_frame_address(0)) - 64;
  for (std::uint32_t* word = __stack_limit__; word < below_frame; ++word) *word = stack_paint;
}
static std::uint32_t stack_used() {
  const std::uint32_t* word = __stack_limit__;
  while (word < __stack_top__ && *word == stack_paint) ++word;
  return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(__stack_top__) -
                                    reinterpret_cast<std::uintptr_t>(word));
}

[[noreturn]] void reset_handler() {
  std::memcpy(__data_start__, __data_load__, (__data_end__ - __data_start__) * sizeof(std::uint32_t));
  std::memset(__bss_start__, 0, (__bss_end__ - __bss_start__) * sizeof(std::uint32_t));
  // Full access to the FPU's coprocessors 10 and 11 (CPACR), before any floating-point instruction.
  *reinterpret_cast<volatile std::uint32_t*>(0xE000ED88) |= 0xFu << 20;
  asm volatile("dsb\n isb" ::: "memory");
  initialise_monitor_handles();
  __libc_init_array();
  paint_stack();
  const int status = main();
  std::printf("stack: %lu B used of %lu B\n", static_cast<unsigned long>(stack_used()),
              static_cast<unsigned long>((__stack_top__ - __stack_limit__) * sizeof(std::uint32_t)));
  std::exit(status);  // semihosting's exit ends QEMU with main's status
}

[[noreturn]] void fault_handler() { std::abort(); }
}

// The C++ library's error paths throw; with -fno-exceptions they end the program instead. Defining
// them here keeps libstdc++'s exception machinery out of the image, with the emergency pool its
// static constructor would take from the heap.
namespace std {
[[noreturn]] void __throw_bad_alloc() { std::abort(); }
[[noreturn]] void __throw_bad_array_new_length() { std::abort(); }
[[noreturn]] void __throw_bad_function_call() { std::abort(); }
[[noreturn]] void __throw_length_error(const char*) { std::abort(); }
[[noreturn]] void __throw_logic_error(const char*) { std::abort(); }
[[noreturn]] void __throw_out_of_range(const char*) { std::abort(); }
[[noreturn]] void __throw_out_of_range_fmt(const char*, ...) { std::abort(); }
[[noreturn]] void __throw_invalid_argument(const char*) { std::abort(); }
}  // namespace std

// The same for allocation: libstdc++'s operator new throws bad_alloc. These take memory from
// newlib's malloc and end the program when there is none.
void* operator new(std::size_t bytes) {
  if (void* p = std::malloc(bytes)) return p;
  std::abort();
}
void* operator new[](std::size_t bytes) { return operator new(bytes); }
void* operator new(std::size_t bytes, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return memalign(static_cast<std::size_t>(alignment), bytes);
}
void* operator new(std::size_t bytes, std::align_val_t alignment) {
  if (void* p = memalign(static_cast<std::size_t>(alignment), bytes)) return p;
  std::abort();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

extern "C" {

// The first entries of the vector table: the initial stack pointer, reset, NMI, and the faults.
__attribute__((section(".vectors"), used)) void (*const vector_table[])() = {
    reinterpret_cast<void (*)()>(__stack_top__),
    reset_handler,
    fault_handler,
    fault_handler,
    fault_handler,
    fault_handler,
    fault_handler};
}
