#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Cross-builds kiln for Arm Linux and runs its `arm` test suite under QEMU user-mode emulation
# (docs/arm.md): on aarch64 the op tests on both of NeonBackend's instruction sets (Advanced SIMD
# on a Cortex-A53 model, the dot product and half-precision arithmetic on a Cortex-A76), run-time
# detection on three CPU models, the checks of the NEON code, and the kiln tool (the dispatching
# build, on QEMU's `max` CPU: the armv8.2-a set) on the shipped ONNX models; on armv7 (NEON,
# VFPv4) the op tests and the NEON code check. Installs the cross compilers, QEMU and the target
# libraries when they are missing (tools/arm_sysroot.sh).
#   sh tools/test_arm.sh [aarch64] [armv7]      (both when none is named)
set -eu
cd "$(dirname "$0")/.."

for target in ${*:-aarch64 armv7}; do
  case "$target" in
    aarch64) arch=arm64 cross=aarch64-linux-gnu options='-Donnx=enabled -Dneon_dispatch=true'
      programs="tests/test_ops_dispatch tests/isa_leak tools/kiln/kiln" ;;
    armv7) arch=armhf cross=armv7-linux-gnueabihf options=-Donnx=disabled programs="tests/test_ops" ;;
    *) echo "tools/test_arm.sh: $target is not aarch64 or armv7" >&2; exit 2 ;;
  esac
  sh tools/arm_sysroot.sh "$arch"
  build="build-$target"
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" --cross-file "cross/sysroot-$arch/sysroot.ini" --cross-file "cross/$cross.ini" \
      --wrap-mode=nodownload -Dneon=enabled -Dopencl=disabled -Dexamples=false $options
  fi
  ninja -C "$build" $programs
  meson test -C "$build" --no-rebuild --print-errorlogs --suite arm
done
