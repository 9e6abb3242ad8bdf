// SPDX-License-Identifier: Apache-2.0
// Runtime<Backends...>: loads optimized networks, executes them, and reports on them.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "kiln/runtime/loaded_network.hpp"

namespace kiln {

/// The engine: holds the backends' contexts and the loaded networks (Arm NN IRuntime).
///
/// \tparam Backends the backends compiled in, most preferred first; the last one must implement
///         every op (end the list with RefBackend).
///
/// \code
/// kiln::Runtime<kiln::RefBackend> runtime;
/// auto optimized = kiln::optimize<kiln::RefBackend>(std::move(network));
/// auto id = runtime.load(std::move(*optimized));
/// std::vector<float> out(10);
/// kiln::InputBinding in[] = {{0, {*runtime.input_info(*id, 0), image.data()}}};
/// kiln::OutputBinding res[] = {{0, {*runtime.output_info(*id, 0), out.data()}}};
/// kiln::Status status = runtime.enqueue(*id, in, res);
/// \endcode
/// All members may be called from several threads at once. A network being executed stays alive
/// until its execution ends, even if another thread unloads it.
template <class... Backends>
class Runtime {
  static_assert(detail::check_backend_pack<Backends...>());

 public:
  using OptimizedNetworkType = OptimizedNetwork<Backends...>;

  /// Loads a network: plans its memory, prepares its constants and creates its workloads.
  Expected<NetworkId> load(const OptimizedNetworkType& network, const LoadOptions& options = {}) {
    auto loaded = detail::LoadedNetwork::load<Backends...>(network, contexts_, options);
    if (!loaded) return loaded.status();
    std::lock_guard lock(mutex_);
    const NetworkId id = next_id_++;
    networks_.emplace(id, std::move(*loaded));
    return id;
  }

  /// Unloads a network; its memory is freed once no execution uses it any more.
  Status unload(NetworkId id) {
    std::lock_guard lock(mutex_);
    if (networks_.erase(id) == 0) return unknown(id);
    return Status::ok();
  }

  /// Runs one inference synchronously: copies the inputs in, executes every layer, copies the
  /// outputs out. Every input and output binding must be given exactly once.
  Status enqueue(NetworkId id, std::span<const InputBinding> inputs, std::span<const OutputBinding> outputs) {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->execute(inputs, outputs);
  }

  Expected<TensorInfo> input_info(NetworkId id, BindingId binding) const {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->input_info(binding);
  }
  Expected<TensorInfo> output_info(NetworkId id, BindingId binding) const {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->output_info(binding);
  }
  /// Arena size, lower bound and constant bytes of a loaded network.
  Expected<MemorySummary> memory_summary(NetworkId id) const {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->memory_summary();
  }

  /// The compiled-in backends, in preference order, and whether each can run on this machine.
  static DeviceSpec device_spec() {
    return DeviceSpec{{BackendInfo{Backends::id, Backends::memory::name, Backends::available()}...}};
  }

 private:
  Expected<std::shared_ptr<detail::LoadedNetwork>> find(NetworkId id) const {
    std::lock_guard lock(mutex_);
    auto it = networks_.find(id);
    if (it == networks_.end()) return unknown(id);
    return it->second;
  }
  Status unknown(NetworkId id) const {
    std::string loaded;
    for (const auto& entry : networks_) loaded += detail::str_cat(loaded.empty() ? "" : ", ", entry.first);
    return Status::error(ErrorCode::NotFound, "network ", id, " is not loaded; loaded networks: ",
                         loaded.empty() ? std::string("none") : loaded);
  }

  std::tuple<typename Backends::context...> contexts_;
  mutable std::mutex mutex_;
  std::map<NetworkId, std::shared_ptr<detail::LoadedNetwork>> networks_;
  NetworkId next_id_ = 0;
};

}  // namespace kiln
