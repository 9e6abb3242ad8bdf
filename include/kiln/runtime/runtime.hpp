// SPDX-License-Identifier: Apache-2.0
// Runtime<Config...>: loads optimized networks, executes them, and reports on them.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "kiln/detail/mutex.hpp"
#include "kiln/optimizer/optimizer.hpp"
#include "kiln/runtime/backend_options.hpp"
#include "kiln/runtime/loaded_network.hpp"
#include "kiln/runtime/working_mem_handle.hpp"

namespace kiln {

/// The engine: holds the backends' contexts and the loaded networks (Arm NN IRuntime).
///
/// \tparam Config optionally an OpSet naming the ops the program runs (only their workloads are
///         compiled; without one, every op), then the backends compiled in, most preferred first;
///         the last one must implement every op (end the list with RefBackend).
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
template <class... Config>
class Runtime {
  using Backends = typename detail::RuntimeConfig<Config...>::backends;
  static_assert(detail::check_config<Config...>());

 public:
  using OptimizedNetworkType = optimized_network_t<Config...>;
  using Options = apply_t<BackendOptions, Backends>;

  /// \param backend_options typed options per backend, given to each context's `configure`.
  explicit Runtime(RuntimeOptions options = {}, const Options& backend_options = {}) : options_(options) {
    for_each_backend_context([&]<class B>(std::type_identity<B>, auto& context) {
      if constexpr (requires { context.configure(backend_options.template get<B>()); })
        context.configure(backend_options.template get<B>());
    });
    std::apply([&](auto&... context) { context_pointers_ = {static_cast<void*>(&context)...}; }, contexts_);
  }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// optimize() for this Runtime's configuration.
  static Expected<OptimizedNetworkType> optimize(Network network, const OptimizerOptions& options = {}) {
    return kiln::optimize<Config...>(std::move(network), options);
  }

  /// Loads a network: plans its memory, prepares its constants and creates its workloads. Each
  /// backend context with a `before_load(const Network&) -> Status` or `after_load(NetworkId)`
  /// member is told (a failing before_load cancels the load).
  Expected<NetworkId> load(const OptimizedNetworkType& network, LoadOptions options = {}) {
    return load_graph(network.graph(), nullptr, std::move(options));
  }
  /// The same, taking the network: each constant's data is let go as soon as the workloads that
  /// read it are made, so that a model's weights are held about once while it loads, not twice.
  Expected<NetworkId> load(OptimizedNetworkType&& network, LoadOptions options = {}) {
    detail::OptimizedGraph graph = std::move(network).release();
    return load_graph(graph, &graph.network, std::move(options));
  }

  /// Unloads a network; its memory is freed once no execution uses it any more. Backend contexts
  /// with `before_unload(NetworkId)` / `after_unload(NetworkId)` members are told.
  Status unload(NetworkId id) {
    std::lock_guard lifecycle(lifecycle_mutex_);
    if (auto network = find(id); !network) return network.status();
    for_each_context([&](auto& context) {
      if constexpr (requires { context.before_unload(id); }) context.before_unload(id);
    });
    {
      std::lock_guard lock(mutex_);
      if (networks_.erase(id) == 0) return unknown(id);
      if (last_enqueued_ == id) last_enqueued_.reset();
    }
    for_each_context([&](auto& context) {
      if constexpr (requires { context.after_unload(id); }) context.after_unload(id);
    });
    options_.logger.log(LogSeverity::Info, "unloaded network ", id);
    return Status::ok();
  }

  /// Runs one inference synchronously: copies the inputs in, executes every layer, copies the
  /// outputs out. Every input and output binding must be given exactly once. Calls on one network
  /// from several threads run one after the other.
  Status enqueue(NetworkId id, std::span<const InputBinding> inputs, std::span<const OutputBinding> outputs,
                 std::span<const ImportedId> imported_inputs = {}, std::span<const ImportedId> imported_outputs = {}) {
    auto network = find(id);
    if (!network) return network.status();
    if ((*network)->async_execution())
      return Status::error(ErrorCode::InvalidArgument, "network ", id,
                           " was loaded for asynchronous execution; run it with execute() and a working memory handle");
    if (options_.release_working_memory_on_switch) release_previous(id);
    if (Status status = (*network)->enqueue(inputs, outputs, imported_inputs, imported_outputs); !status)
      return failed("enqueue", status);
    return Status::ok();
  }

  /// A working memory handle for a network loaded with async_execution; its memory is allocated
  /// at the first execute (or WorkingMemHandle::allocate).
  Expected<std::unique_ptr<WorkingMemHandle>> create_working_mem_handle(NetworkId id) {
    auto network = find(id);
    if (!network) return network.status();
    if (!(*network)->async_execution())
      return Status::error(ErrorCode::InvalidArgument, "network ", id,
                           " was loaded without async_execution; run it with enqueue() or load it with "
                           "LoadOptions::async_execution");
    return std::unique_ptr<WorkingMemHandle>(new WorkingMemHandle(id, std::move(*network)));
  }

  /// Runs one inference on a working memory handle. Different handles run concurrently.
  /// Pre-imported tensors stand in for the bindings they were imported for; together with
  /// `inputs` and `outputs` they must name every binding exactly once.
  Status execute(WorkingMemHandle& handle, std::span<const InputBinding> inputs, std::span<const OutputBinding> outputs,
                 std::span<const ImportedId> imported_inputs = {}, std::span<const ImportedId> imported_outputs = {}) {
    auto network = find(handle.id_);
    if (!network || network->get() != handle.network_.get())
      return Status::error(ErrorCode::NotFound, "the working memory handle belongs to network ", handle.id_,
                           ", which is no longer loaded");
    std::lock_guard lock(handle.mutex_);
    if (Status status = handle.network_->execute(handle.memory_, inputs, outputs, imported_inputs, imported_outputs);
        !status)
      return failed("execute", status);
    return Status::ok();
  }

  /// Pre-imports input buffers of a network loaded with import_inputs: checked once (binding,
  /// shape, type, alignment) and then read in place by every inference that names their ids.
  Expected<std::vector<ImportedId>> import_inputs(NetworkId id, std::span<const InputBinding> inputs) {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->import(inputs);
  }
  /// Pre-imports output buffers of a network loaded with export_outputs.
  Expected<std::vector<ImportedId>> import_outputs(NetworkId id, std::span<const OutputBinding> outputs) {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->import(outputs);
  }
  Status clear_imported_inputs(NetworkId id, std::span<const ImportedId> ids) {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->template clear_imported<InputBinding>(ids);
  }
  Status clear_imported_outputs(NetworkId id, std::span<const ImportedId> ids) {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->template clear_imported<OutputBinding>(ids);
  }

  /// What a network loaded with LoadOptions::profiling recorded so far.
  Expected<Profile> profile(NetworkId id) const {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->profile();
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

  /// The steps of a loaded network in execution order and where each tensor lives, as data
  /// (what `kiln compile` writes into a header).
  Expected<NetworkPlan> plan(NetworkId id) const {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->plan();
  }

  /// A loaded network as text: each layer's backend and where each tensor lives (arena offset).
  Expected<std::string> network_text(NetworkId id) const {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->to_text();
  }
  /// A loaded network as a Graphviz digraph (`dot -Tsvg`), with backends, shapes and offsets.
  Expected<std::string> network_dot(NetworkId id) const {
    auto network = find(id);
    if (!network) return network.status();
    return (*network)->to_dot();
  }

  /// The per-runtime context of backend B (its device handles, caches, statistics...).
  template <class B>
  typename B::context& context() {
    static_assert(contains_v<B, Backends>, "kiln: context<B>() names a backend this Runtime does not have");
    return std::get<index_of_v<B, Backends>>(contexts_);  // by position: contexts may share a type
  }

  /// The compiled-in backends, in preference order, and whether each can run on this machine.
  static DeviceSpec device_spec() {
    DeviceSpec spec;
    for (const detail::BackendDescription& b : detail::describe<Config...>().backends)
      spec.backends.push_back({b.id, b.memory, b.available(), b.capabilities});
    return spec;
  }

 private:
  // `consumed`: graph's network, when the caller gave it up (see load).
  Expected<NetworkId> load_graph(const detail::OptimizedGraph& graph, Network* consumed, LoadOptions options) {
    std::lock_guard lifecycle(lifecycle_mutex_);
    Status ready;
    for_each_context([&](auto& context) {
      if constexpr (requires {
                      { context.before_load(graph.network) } -> std::same_as<Status>;
                    })
        if (ready) ready = context.before_load(graph.network);
    });
    if (!ready) return failed("load", ready);
    auto loaded = detail::LoadedNetwork::load(graph, detail::describe<Config...>(), context_pointers_,
                                              std::move(options), options_.host_allocator, consumed);
    if (!loaded) return failed("load", loaded.status());
    NetworkId id;
    {
      std::lock_guard lock(mutex_);
      id = next_id_++;
      networks_.emplace(id, *loaded);
    }
    for_each_context([&](auto& context) {
      if constexpr (requires { context.after_load(id); }) context.after_load(id);
    });
    if (options_.logger.enabled(LogSeverity::Info)) {
      const MemorySummary& memory = (*loaded)->memory_summary();
      options_.logger.log(LogSeverity::Info, "loaded network ", id, " (", graph.network.execution_order().size(),
                          " layers): ", memory.strategy, " arena ", memory.arena_bytes, " bytes, lower bound ",
                          memory.lower_bound_bytes, ", constants ", memory.constant_bytes, " bytes (",
                          memory.constant_bytes_in_workloads, " more packed into workloads), in ", (*loaded)->load_us(),
                          " us");
    }
    return id;
  }

  Expected<std::shared_ptr<detail::LoadedNetwork>> find(NetworkId id) const {
    std::lock_guard lock(mutex_);
    auto it = networks_.find(id);
    if (it == networks_.end()) return unknown(id);
    return it->second;
  }
  Status unknown(NetworkId id) const {
    std::string loaded;
    for (const auto& entry : networks_) loaded += detail::str_cat(loaded.empty() ? "" : ", ", entry.first);
    return Status::error(ErrorCode::NotFound, "network ", id,
                         " is not loaded; loaded networks: ", loaded.empty() ? std::string("none") : loaded);
  }

  Status failed(std::string_view what, const Status& status) const {
    options_.logger.log(LogSeverity::Error, what, " failed: ", status.message());
    return status;
  }
  template <class F>
  void for_each_context(F&& f) {
    std::apply([&](auto&... context) { (f(context), ...); }, contexts_);
  }
  template <class F>
  void for_each_backend_context(F&& f) {
    [&]<class... Bs>(TypeList<Bs...>) {
      (f(std::type_identity<Bs>{}, std::get<index_of_v<Bs, Backends>>(contexts_)), ...);
    }(Backends{});
  }
  /// Frees the working memory of the network enqueued before `id`, when that was another one.
  void release_previous(NetworkId id) {
    std::shared_ptr<detail::LoadedNetwork> previous;
    {
      std::lock_guard lock(mutex_);
      if (last_enqueued_ && *last_enqueued_ != id) {
        auto it = networks_.find(*last_enqueued_);
        if (it != networks_.end()) previous = it->second;
      }
      last_enqueued_ = id;
    }
    if (previous) previous->release_own_memory();
  }

  RuntimeOptions options_;
  typename detail::contexts_of<Backends>::type contexts_;
  std::array<void*, Backends::size> context_pointers_{};
  detail::Mutex lifecycle_mutex_;  // loads and unloads one at a time, so context hooks come in pairs
  mutable detail::Mutex mutex_;    // guards networks_ and last_enqueued_
  std::map<NetworkId, std::shared_ptr<detail::LoadedNetwork>> networks_;
  std::optional<NetworkId> last_enqueued_;
  NetworkId next_id_ = 0;
};

}  // namespace kiln
