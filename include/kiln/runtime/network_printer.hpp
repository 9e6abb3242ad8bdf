// SPDX-License-Identifier: Apache-2.0
// A loaded network as text and as a Graphviz digraph: each step's backend and where each tensor lives.
#pragma once

#include <string>

#include "kiln/detail/compilation.hpp"
#include "kiln/runtime/network_layout.hpp"

namespace kiln::detail {

/// "Float32 [1, 8] @128" (an arena offset), "... @cl:64" (a device arena's), or "... constant".
std::string tensor_label(const NetworkLayout& layout, std::size_t tensor);

/// One line per step: layer, op, backend, and where each tensor it reads and writes lives.
std::string network_text(const NetworkLayout& layout);

/// The same as a Graphviz digraph: a node per layer, an edge per tensor labelled with its shape
/// and arena offset, constants as notes.
std::string network_dot(const NetworkLayout& layout);

}  // namespace kiln::detail

#if !KILN_COMPILED_LIBRARY || KILN_BUILDING_LIBRARY
#include "kiln/runtime/network_printer_inl.hpp"
#endif
