// SPDX-License-Identifier: Apache-2.0
// ZeroCopy: which views an inference points at the user's buffers (LoadOptions::import_inputs and
// export_outputs), and the buffers pre-imported once for many inferences.
#pragma once

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "kiln/detail/compilation.hpp"
#include "kiln/detail/mutex.hpp"
#include "kiln/runtime/network_layout.hpp"

namespace kiln::detail {

class ZeroCopy {
 public:
  /// Finds, once at load, the views an inference retargets.
  void find_views(const NetworkLayout& layout);

  /// Points every producer whose only reader is an output at the user's buffer, or back at the
  /// arena when the buffer is not aligned to `alignment`.
  void bind_outputs(const NetworkLayout& layout, WorkingMemory& memory, std::span<const OutputBinding> outputs) const;
  /// Points the readers of input step `s` at the user's buffer (`import`) or at the arena copy,
  /// and the device readers of its copies at the buffer wrapped for their device when it can be.
  Status bind_input(const NetworkLayout& layout, WorkingMemory& memory, std::size_t s, const void* user,
                    bool import) const;

  /// Checks and remembers user buffers for later inferences.
  template <class Binding>
  Expected<std::vector<ImportedId>> import(const NetworkLayout& layout, std::span<const Binding> bindings) const;
  /// Forgets pre-imported buffers; unknown ids are an error and nothing is forgotten then.
  template <class Binding>
  Status clear(std::span<const ImportedId> ids) const;
  /// `given` followed by the bindings pre-imported as `ids`.
  template <class Binding>
  Expected<std::vector<Binding>> with_imported(std::span<const Binding> given, std::span<const ImportedId> ids) const;

 private:
  using Views = std::vector<std::pair<std::size_t, std::size_t>>;  ///< (step, position)
  struct StepViews {
    /// Input steps: every view that reads the input tensor. Output steps: the producer's view of
    /// the output tensor, when that producer may export.
    Views zero_copy;
    /// Host-to-device copies of a network input whose device reads host memory in place: the
    /// copy's device memory kind (1-based) and the views that read its output, which an importing
    /// inference points at the user's buffer instead, skipping the copy.
    std::uint8_t import_kind = 0;
    Views device_readers;
  };
  Status import_to_devices(const NetworkLayout& layout, WorkingMemory& memory, std::size_t input,
                           const void* host) const;

  template <class Binding>
  struct ImportTable {
    std::map<ImportedId, Binding> bindings;
    ImportedId next = 0;
  };
  template <class Binding>
  ImportTable<Binding>& table() const {
    if constexpr (std::same_as<Binding, InputBinding>)
      return imported_inputs_;
    else
      return imported_outputs_;
  }

  std::vector<StepViews> views_;  ///< per step
  mutable detail::Mutex mutex_;
  mutable ImportTable<InputBinding> imported_inputs_;
  mutable ImportTable<OutputBinding> imported_outputs_;
};

template <class Binding>
Expected<std::vector<ImportedId>> ZeroCopy::import(const NetworkLayout& layout,
                                                   std::span<const Binding> bindings) const {
  constexpr bool is_input = std::same_as<Binding, InputBinding>;
  constexpr std::string_view what = is_input ? "input" : "output";
  const Step::Kind kind = is_input ? Step::Kind::Input : Step::Kind::Output;
  const std::size_t alignment = layout.tensors.alignment();
  for (const Binding& binding : bindings) {
    const TensorInfo* info = layout.binding_info(kind, binding.id);
    if (info == nullptr) return layout.unknown_binding(kind, binding.id);
    const auto& tensor = binding.tensor;
    if (tensor.info.type != info->type || tensor.info.shape != info->shape)
      return Status::error(ErrorCode::InvalidArgument, what, " binding ", binding.id, " expects ", info->to_string(),
                           " but the buffer is ", tensor.info.to_string());
    if (reinterpret_cast<std::uintptr_t>(tensor.data) % alignment != 0 ||
        (tensor.data == nullptr && info->num_bytes() != 0))
      return Status::error(ErrorCode::InvalidArgument, "pre-imported ", what, " binding ", binding.id,
                           " needs a non-null buffer aligned to ", alignment, " bytes");
  }
  std::lock_guard lock(mutex_);
  auto& imports = table<Binding>();
  std::vector<ImportedId> ids;
  for (const Binding& binding : bindings) {
    ids.push_back(imports.next++);
    imports.bindings.emplace(ids.back(), binding);
  }
  return ids;
}

template <class Binding>
Status ZeroCopy::clear(std::span<const ImportedId> ids) const {
  constexpr std::string_view what = std::same_as<Binding, InputBinding> ? "input" : "output";
  std::lock_guard lock(mutex_);
  auto& imports = table<Binding>();
  for (ImportedId id : ids)
    if (imports.bindings.count(id) == 0)
      return Status::error(ErrorCode::NotFound, "pre-imported ", what, ' ', id,
                           " does not exist (never imported, or cleared)");
  for (ImportedId id : ids) imports.bindings.erase(id);
  return Status::ok();
}

template <class Binding>
Expected<std::vector<Binding>> ZeroCopy::with_imported(std::span<const Binding> given,
                                                       std::span<const ImportedId> ids) const {
  std::vector<Binding> all(given.begin(), given.end());
  std::lock_guard lock(mutex_);
  const auto& imports = table<Binding>();
  for (ImportedId id : ids) {
    auto it = imports.bindings.find(id);
    if (it == imports.bindings.end())
      return Status::error(ErrorCode::NotFound, "pre-imported ",
                           std::same_as<Binding, InputBinding> ? "input " : "output ", id,
                           " does not exist (never imported, or cleared)");
    all.push_back(it->second);
  }
  return all;
}

}  // namespace kiln::detail

#if !KILN_COMPILED_LIBRARY || KILN_BUILDING_LIBRARY
#include "kiln/runtime/zero_copy_inl.hpp"
#endif
