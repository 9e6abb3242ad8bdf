#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Compiles every public header and the examples with Clang 14 and -Werror (CI runs this after the
# README's test command). BUILD (default build/) supplies the generated headers.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
clang=${CLANG:-clang++}
# The warnings of meson.build's warning_level=3, with its one exception: kiln's tensor infos and
# descriptors are written with members left out of their braces ({{1, 28, 28, 1}}), by design.
flags="-std=c++20 -Wall -Wextra -Wpedantic -Wno-missing-field-initializers -Werror -Iinclude -I$build/include"
jobs=$(nproc 2>/dev/null || echo 2)

# Every header in one translation unit: Clang's warnings, in seconds. That each header compiles on
# its own is the `build` suite's header_checks (one translation unit per header, with GCC). The
# dispatching NeonBackend's header belongs to that build alone (KILN_NEON_DISPATCH).
headers=$(cd include && find kiln -name '*.hpp' ! -path 'kiln/backends/neon/dispatch/*' | sort)
echo "clang: $(echo "$headers" | wc -l) headers"
echo "$headers" | sed 's/.*/#include <&>/' | $clang $flags -fsyntax-only -x c++ - ||
  { echo 'clang -Werror failed on the public headers'; exit 255; }

# Clang's warnings come from its front end, so the examples are parsed and checked, not compiled
# (-O1 code generation took minutes of CI for nothing -Werror would see).
echo "clang: examples/quick_start.cpp examples/custom_backend.cpp examples/run_examples.cpp examples/firmware/kws.cpp"
printf '%s\n' examples/quick_start.cpp examples/custom_backend.cpp examples/run_examples.cpp examples/firmware/kws.cpp |
  xargs -P "$jobs" -I{} sh -c \
  "$clang $flags -Iexamples -Iexamples/firmware -DKWS_SPOTTER=Int8Spotter -fsyntax-only {} || { echo 'clang -Werror failed on {}'; exit 255; }"
echo "clang: headers and examples compile with -Werror"
