// SPDX-License-Identifier: Apache-2.0
// Must not compile with KILN_SHOULD_FAIL: an OpSet names something that is not an op descriptor.
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>

#ifdef KILN_SHOULD_FAIL
using Ops = kiln::OpSet<kiln::ops::Convolution2d, kiln::RefBackend>;
#else
using Ops = kiln::OpSet<kiln::ops::Convolution2d, kiln::ops::Activation>;
#endif
kiln::Runtime<Ops, kiln::RefBackend> runtime;
