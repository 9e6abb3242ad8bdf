#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Makes the target libraries of an Arm cross build (docs/arm.md): Debian's arm64 or armhf packages
# of kiln's dependencies, unpacked into cross/sysroot-ARCH, which the cross files name as sys_root.
# Unpacked rather than installed: multiarch installs need the Arm packages at exactly the versions
# of the x86 ones already installed, which mirrors do not always have; unpacking needs only the
# Arm package lists. Writes cross/sysroot-ARCH/sysroot.ini, the cross files' `sysroot`. Installs the cross compiler and qemu-user when they are missing.
#   sh tools/arm_sysroot.sh arm64|armhf
set -eu
cd "$(dirname "$0")/.."
arch=${1:?usage: tools/arm_sysroot.sh arm64|armhf}
case "$arch" in
  arm64) triple=aarch64-linux-gnu; target_packages="libxsimd-dev catch2 libprotobuf-dev libprotobuf32 libonnx-dev libonnx1 zlib1g" ;;
  armhf) triple=arm-linux-gnueabihf; target_packages="libxsimd-dev catch2" ;;
  *) echo "tools/arm_sysroot.sh: $arch is not arm64 or armhf" >&2; exit 2 ;;
esac
sysroot=cross/sysroot-$arch

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=""
for package in "g++-$triple" qemu-user; do
  dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
  $sudo dpkg --add-architecture "$arch"
  needs_update=1
fi
if [ -n "$missing" ] || [ -n "${needs_update:-}" ]; then
  # One index of a mirror mid-sync fails now and then, the rest still serve: the download below
  # fails loudly if a package we need has no list.
  $sudo apt-get update || echo "kiln: apt-get update reported an error; going on with the package lists it has" >&2
fi
if [ -n "$missing" ]; then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
fi

[ -f "$sysroot/.complete" ] && exit 0
rm -rf "$sysroot" && mkdir -p "$sysroot/debs"
packages=""
for package in $target_packages; do packages="$packages $package:$arch"; done
(cd "$sysroot/debs" && apt-get download $packages)
for deb in "$sysroot"/debs/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
# Absolute links inside the packages (libz.so -> /lib/...) would leave the sysroot: relink them inside.
find "$sysroot" -type l -lname '/*' | while read -r link; do
  ln -sf "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot$(readlink "$link")")" "$link"
done
rm -rf "$sysroot/debs"
printf "[constants]\nsysroot = '%s'\n" "$(realpath "$sysroot")" > "$sysroot/sysroot.ini"
touch "$sysroot/.complete"
