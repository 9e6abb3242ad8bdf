// SPDX-License-Identifier: Apache-2.0
// WorkingMemHandle: the intermediate memory of one in-flight inference of an asynchronous network.
#pragma once

#include <memory>

#include "kiln/detail/mutex.hpp"
#include "kiln/runtime/loaded_network.hpp"

namespace kiln {

template <class... Config>
class Runtime;

/// Per-inference state of a network loaded with LoadOptions::async_execution (Arm NN
/// IWorkingMemHandle). Each handle owns its own arena, so handles of one network execute
/// concurrently from different threads; one handle runs one inference at a time (concurrent calls
/// on the same handle wait for each other). Memory is allocated on first use and can be freed.
/// The handle keeps its network's data alive, but executing it after the network was unloaded is
/// an error.
class WorkingMemHandle {
 public:
  NetworkId network_id() const noexcept { return id_; }
  bool is_allocated() const {
    std::lock_guard lock(mutex_);
    return memory_.allocated;
  }
  /// Allocates the working memory now rather than at the first execute.
  Status allocate() {
    std::lock_guard lock(mutex_);
    return network_->allocate(memory_);
  }
  /// Returns the working memory to the allocator; the next execute allocates it again.
  void free() {
    std::lock_guard lock(mutex_);
    network_->release(memory_);
  }

 private:
  template <class... Config>
  friend class Runtime;

  WorkingMemHandle(NetworkId id, std::shared_ptr<const detail::LoadedNetwork> network)
      : id_(id), network_(std::move(network)) {}

  NetworkId id_;
  std::shared_ptr<const detail::LoadedNetwork> network_;
  mutable detail::Mutex mutex_;
  detail::WorkingMemory memory_;
};

}  // namespace kiln
