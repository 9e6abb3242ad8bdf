// SPDX-License-Identifier: Apache-2.0
// The one Catch2 v2 runner of kiln's tests, with the TAP reporter that `meson test` reads.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <catch2/catch_reporter_tap.hpp>
