// SPDX-License-Identifier: Apache-2.0
// What runs before main on the Cortex-M4F of QEMU's MPS2 board (mps2_an386.ld): the vector table,
// then the reset handler, which lays out memory, enables the FPU and the semihosting console,
// runs main and reports its status to QEMU.
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" {
extern std::uint32_t __data_start__[], __data_end__[], __data_load__[], __bss_start__[], __bss_end__[];
extern std::uint32_t __stack_top__[];
void initialise_monitor_handles();  // newlib's semihosting (librdimon)
void __libc_init_array();
int main();

// newlib's __libc_init_array calls _init and exit's __libc_fini_array calls _fini; with
// -nostartfiles no crti provides them, and kiln has nothing to run there.
void _init() {}
void _fini() {}
// What crtbegin would define: the handle of this program's static destructors (there is no DSO).
void* __dso_handle = &__dso_handle;

[[noreturn]] void reset_handler() {
  std::memcpy(__data_start__, __data_load__, (__data_end__ - __data_start__) * sizeof(std::uint32_t));
  std::memset(__bss_start__, 0, (__bss_end__ - __bss_start__) * sizeof(std::uint32_t));
  // Full access to the FPU's coprocessors 10 and 11 (CPACR), before any floating-point instruction.
  *reinterpret_cast<volatile std::uint32_t*>(0xE000ED88) |= 0xFu << 20;
  asm volatile("dsb\n isb" ::: "memory");
  initialise_monitor_handles();
  __libc_init_array();
  std::exit(main());  // semihosting's exit ends QEMU with main's status
}

[[noreturn]] void fault_handler() { std::abort(); }

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
