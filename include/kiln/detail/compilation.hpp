// SPDX-License-Identifier: Apache-2.0
// How a translation unit gets kiln's compiled parts: from the headers (the default), or from libkiln.
#pragma once

// KILN_COMPILED_LIBRARY=1, defined for every translation unit of a program (Meson:
// -Dcompiled_library=true, which pkg-config passes on), makes kiln's headers declare the engine
// (optimizer, loader, execution) and take every backend's workload table from libkiln, where they
// are compiled once, instead of compiling them in each translation unit that includes kiln. The
// engine's definitions live in the *_inl.hpp files beside the headers that declare them (spdlog's
// -inl.h pattern); libkiln's engine translation unit defines KILN_BUILDING_LIBRARY=1 to compile
// them there, without `inline`.
#ifndef KILN_COMPILED_LIBRARY
#define KILN_COMPILED_LIBRARY 0
#endif
#ifndef KILN_BUILDING_LIBRARY
#define KILN_BUILDING_LIBRARY 0
#endif
#if KILN_COMPILED_LIBRARY && KILN_BUILDING_LIBRARY
#error "kiln: KILN_BUILDING_LIBRARY is for libkiln's own translation unit, which must not define KILN_COMPILED_LIBRARY"
#endif

#if KILN_COMPILED_LIBRARY || KILN_BUILDING_LIBRARY
#define KILN_INLINE
#else
#define KILN_INLINE inline
#endif
