// SPDX-License-Identifier: Apache-2.0
// A backend's workload table: for every op, the entries of the workloads it has, one per data type.
#pragma once

#include <array>
#include <span>
#include <utility>

#include "kiln/backends/workload_entry.hpp"

namespace kiln {

/// A backend's own workload entries for every op, by op index (ops::op_list order); an op it has
/// no workload for, or one outside the program's OpSet, has none.
using WorkloadTable = std::array<std::span<const WorkloadEntry>, ops::op_count>;

/// The table of a backend whose workloads a library compiled once for the whole program
/// (workloads_compiled_v<B>): defined in that library, by table_of<B, AllOps>.
template <class B>
const WorkloadTable& compiled_workload_table();

namespace detail {

/// The entries of Op that the class template WorkloadOf<Op, Type> provides (Owner's workloads,
/// run with Context), one per data type it has a workload for, in all_data_types order.
template <class Op, class Owner, template <class, DataType> class WorkloadOf, class Context>
struct OwnEntries {
  template <DataType Type>
  static constexpr bool has = !std::derived_from<WorkloadOf<Op, Type>, NotImplemented>;

  static constexpr auto value = []<std::size_t... I>(std::index_sequence<I...>) {
    std::array<WorkloadEntry, (std::size_t{has<all_data_types[I]>} + ... + 0)> entries{};
    std::size_t next = 0;
    auto add = [&]<DataType Type>() {
      if constexpr (has<Type>) entries[next++] = entry_of<Op, WorkloadOf<Op, Type>, Type, Context>(Owner::id);
    };
    (add.template operator()<all_data_types[I]>(), ...);
    return entries;
  }
  (std::make_index_sequence<std::size(all_data_types)>{});
};

/// Owner's table over the ops of Set, its workloads taken from WorkloadOf (by default its Workload
/// specialisations). Only the ops of Set are instantiated.
template <class Owner, class Set, template <class, DataType> class WorkloadOf = own_workloads<Owner>::template type>
constexpr WorkloadTable table_of() {
  WorkloadTable table{};
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto add = [&]<std::size_t Index>() {
      using Op = type_at_t<Index, ops::op_list>;
      if constexpr (Set::contains[Index] && !ops::is_structural_v<Op>)
        table[Index] = OwnEntries<Op, Owner, WorkloadOf, typename Owner::context>::value;
    };
    (add.template operator()<I>(), ...);
  }
  (std::make_index_sequence<ops::op_count>{});
  return table;
}

template <class Owner, class Set>
inline constexpr WorkloadTable own_table = table_of<Owner, Set>();

inline namespace KILN_WORKLOAD_SOURCE {
/// Owner's entries for the op at `op`, if it is in Set: from this translation unit's Workload
/// specialisations, or from the library that compiled them.
template <class Owner, class Set>
std::span<const WorkloadEntry> own_entries(std::size_t op) {
  if constexpr (workloads_compiled_v<Owner>) {
    if (!Set::contains[op]) return {};
    return compiled_workload_table<Owner>()[op];
  } else {
    return own_table<Owner, Set>[op];
  }
}
}  // namespace KILN_WORKLOAD_SOURCE

}  // namespace detail
}  // namespace kiln
