#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs what kiln needs from Debian's packages when it is missing (apt-get, as root or with
# sudo) and configures the build folder `build/`. Safe to run again: it only does what is missing.
set -eu
cd "$(dirname "$0")/.."

packages="g++ meson ninja-build pkg-config python3 libeigen3-dev libxsimd-dev opencl-clhpp-headers opencl-headers
ocl-icd-opencl-dev pocl-opencl-icd catch2 libprotobuf-dev libonnx-dev libonnx-testdata libflatbuffers-dev
flatbuffers-compiler"
missing=""
for package in $packages; do
  dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "kiln setup: installing$missing"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
fi

# The backends and the importers are required, not auto-detected, so that a machine missing one
# fails here instead of silently building (and testing) without it.
if [ ! -f build/build.ninja ]; then
  meson setup build --wrap-mode=nodownload -Dneon=enabled -Dopencl=enabled -Donnx=enabled -Dtflite=enabled
fi
