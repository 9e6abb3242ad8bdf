// SPDX-License-Identifier: Apache-2.0
// Must not compile with KILN_SHOULD_FAIL: a layer type that is not an op descriptor (no infer).
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>

struct NoInfer {
  static constexpr std::string_view name = "NoInfer";
  static constexpr kiln::ops::Arity arity{1, 1};
  struct Params {};
#ifndef KILN_SHOULD_FAIL
  static constexpr kiln::Status infer(const Params&, std::span<const kiln::TensorInfo>, std::span<kiln::TensorInfo>) {
    return kiln::Status::ok();
  }
#endif
};

static_assert(kiln::OpDescriptor<NoInfer>, "kiln: an op descriptor needs name, arity, Params and infer()");
