#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds kiln's firmware for a Cortex-M4F with Debian's bare-metal GCC and newlib
# (cross/arm-none-eabi-cortex-m4.ini) and runs it under qemu-system-arm on the MPS2 AN386 board
# model (docs/firmware.md). Installs the compiler, its C and C++ libraries and QEMU when missing.
#   sh tools/test_firmware.sh
set -eu
cd "$(dirname "$0")/.."

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=""
for package in gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm; do
  dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
if [ -n "$missing" ]; then
  $sudo apt-get update || echo "kiln: apt-get update reported an error; going on with the package lists it has" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
fi

build=build-cortex-m4
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" --cross-file cross/arm-none-eabi-cortex-m4.ini -Dneon=disabled -Dopencl=disabled -Donnx=disabled
fi
ninja -C "$build"
meson test -C "$build" --no-rebuild --print-errorlogs --suite firmware
