// SPDX-License-Identifier: Apache-2.0
// DeviceArena: one allocation of a device memory kind, and the handles of the tensors placed in it.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "kiln/core/status.hpp"

namespace kiln {

/// A network's tensors of one device memory kind live in one DeviceArena per working memory,
/// made by the owning backend's context (`allocate_arena`). `view(offset, bytes)` returns what that
/// backend's workloads receive as Tensor::data for the tensor planned at `offset` — for ClBackend a
/// `cl_mem` sub-buffer, never a host address. The arena owns its views; they die with it.
class DeviceArena {
 public:
  using ViewFn = Expected<void*> (*)(void* state, std::uint64_t offset, std::uint64_t bytes);

  DeviceArena() = default;
  DeviceArena(std::shared_ptr<void> state, ViewFn view) : state_(std::move(state)), view_(view) {}

  Expected<void*> view(std::uint64_t offset, std::uint64_t bytes) const { return view_(state_.get(), offset, bytes); }
  explicit operator bool() const noexcept { return state_ != nullptr; }

 private:
  std::shared_ptr<void> state_;
  ViewFn view_ = nullptr;
};

/// Host memory a device backend reads in place for one inference (ClBackend: a buffer made with
/// CL_MEM_USE_HOST_PTR around the user's input): `handle` is what its workloads receive as
/// Tensor::data, `owner` keeps it alive.
struct DeviceImport {
  void* handle = nullptr;
  std::shared_ptr<void> owner;
};

}  // namespace kiln
