// SPDX-License-Identifier: Apache-2.0
// ONNX data movement: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Pad,
// Gather, Identity and Dropout. On constants (shape arithmetic, weights) they are folded at import.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "importer.hpp"
#include "kiln/core/requantization.hpp"

namespace kiln::onnx::detail {

Expected<std::size_t> normalized_axis(const Importer& im, std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) return im.invalid("axis ", axis, " is out of range for rank ", rank);
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

namespace {

std::vector<std::size_t> identity_order(std::size_t count) {
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  return order;
}

Expected<std::vector<std::int64_t>> int_list(Importer& im, std::size_t input, std::string_view role) {
  KILN_ONNX_TRY(constant, im.constant_input(input, role));
  std::vector<std::int64_t> values;
  for (std::size_t i = 0; i < constant->size(); ++i) values.push_back(constant->int_at(i));
  return values;
}

// Axes from an attribute (before `input_since`) or from input 1 (since), possibly absent.
Expected<std::optional<std::vector<std::int64_t>>> axes_of(Importer& im, std::int64_t input_since) {
  if (im.opset() < input_since) return im.attr_ints("axes");
  if (!im.has_input(1)) return std::optional<std::vector<std::int64_t>>{};
  KILN_ONNX_TRY(axes, int_list(im, 1, "axes"));
  return std::optional<std::vector<std::int64_t>>{axes};
}

// A reshape pairs groups of input axes with groups of output axes of the same element count;
// axes of size 1 belong to no group (-1).
struct AxisGroups {
  std::vector<int> of_input, of_output;
  int count = 0;
};

AxisGroups axis_groups(std::span<const std::int64_t> from, std::span<const std::int64_t> to) {
  AxisGroups groups{std::vector<int>(from.size(), -1), std::vector<int>(to.size(), -1), 0};
  std::size_t i = 0, j = 0;
  const auto next = [](std::span<const std::int64_t> dims, std::size_t& at) {
    while (at < dims.size() && dims[at] == 1) ++at;
    return at < dims.size();
  };
  while (next(from, i) && next(to, j)) {
    const int group = groups.count++;
    auto in = static_cast<std::uint64_t>(from[i]), out = static_cast<std::uint64_t>(to[j]);
    groups.of_input[i++] = group;
    groups.of_output[j++] = group;
    while (in != out) {  // the element counts are equal, so the smaller side has axes left
      if (in < out && next(from, i)) {
        in *= static_cast<std::uint64_t>(from[i]);
        groups.of_input[i++] = group;
      } else if (in > out && next(to, j)) {
        out *= static_cast<std::uint64_t>(to[j]);
        groups.of_output[j++] = group;
      } else {
        break;
      }
    }
  }
  return groups;
}

// The order of the reshaped tensor when `held` (an order of the input's axes) reshapes with no
// data moving: each group's axes side by side and ascending. Empty when they are not.
std::vector<std::size_t> reshaped_order(const AxisGroups& groups, std::span<const std::size_t> held) {
  std::vector<int> sequence;  // groups in held order, one entry per axis
  std::vector<std::size_t> last_axis(static_cast<std::size_t>(groups.count), 0);
  std::vector<bool> seen(static_cast<std::size_t>(groups.count), false);
  for (std::size_t axis : held) {
    const int group = groups.of_input[axis];
    if (group < 0) continue;
    const auto g = static_cast<std::size_t>(group);
    if (seen[g] && (sequence.back() != group || last_axis[g] + 1 != axis)) return {};
    if (!seen[g]) sequence.push_back(group);
    seen[g] = true;
    last_axis[g] = axis;
  }
  std::vector<std::size_t> order;
  for (int group : sequence)
    for (std::size_t axis = 0; axis < groups.of_output.size(); ++axis)
      if (groups.of_output[axis] == group) order.push_back(axis);
  // Axes of size 1 may sit anywhere: where plain or channels-last puts them, when that fits.
  const std::size_t rank = groups.of_output.size();
  for (Layout layout : {Layout::Plain, Layout::ChannelsLast}) {
    std::vector<std::size_t> candidate = layout_order(layout, rank);
    std::erase_if(candidate, [&](std::size_t axis) { return groups.of_output[axis] < 0; });
    if (candidate == order) return layout_order(layout, rank);
  }
  for (std::size_t axis = 0; axis < rank; ++axis)
    if (groups.of_output[axis] < 0) order.push_back(axis);
  return order;
}

// `held` with each group's axes brought side by side, ascending, where the group first appears.
std::vector<std::size_t> grouped_order(const AxisGroups& groups, std::span<const std::size_t> held) {
  std::vector<std::size_t> order;
  std::vector<bool> placed(static_cast<std::size_t>(groups.count), false);
  for (std::size_t axis : held) {
    const int group = groups.of_input[axis];
    if (group < 0) {
      order.push_back(axis);
    } else if (!placed[static_cast<std::size_t>(group)]) {
      placed[static_cast<std::size_t>(group)] = true;
      for (std::size_t a = 0; a < groups.of_input.size(); ++a)
        if (groups.of_input[a] == group) order.push_back(a);
    }
  }
  return order;
}

Status reshape_held(Importer& im, OutputSlot slot, std::span<const std::int64_t> dims,
                    std::span<const std::size_t> order) {
  std::vector<std::int64_t> kiln_dims;
  for (std::size_t axis : order) kiln_dims.push_back(dims[axis]);
  KILN_ONNX_TRY(y, im.add<ops::Reshape>({kiln_dims}, {slot}));
  im.define(0, y, order);
  return Status::ok();
}

// Output 0 is `x` with new dims and the same elements in the same (ONNX) order. A tensor held in
// another order (channels-last, or a shuffle's) is reshaped where it is when no data has to move;
// otherwise one transpose brings it to an order that reshapes to channels-last, or to ONNX's.
Status reshape_to(Importer& im, Value& x, std::vector<std::int64_t> dims) {
  if (element_count(dims) != element_count(x.dims)) return im.invalid("the new shape changes the element count");
  if (x.constant) {
    im.define_constant(0, x.constant->gathered(dims, identity_order(x.constant->size())), x.type);
    return Status::ok();
  }
  const AxisGroups groups = axis_groups(x.dims, dims);
  if (const HeldTensor* plain = x.in_order(layout_order(Layout::Plain, x.dims.size())))
    return reshape_held(im, plain->slot, dims, layout_order(Layout::Plain, dims.size()));
  for (const HeldTensor& held : x.held)
    if (auto order = reshaped_order(groups, held.order); !order.empty() || dims.empty())
      return reshape_held(im, held.slot, dims, order);
  const HeldTensor& source = x.held.front();
  const auto grouped = grouped_order(groups, source.order);
  if (dims.size() >= 3 && reshaped_order(groups, grouped) == layout_order(Layout::ChannelsLast, dims.size())) {
    KILN_ONNX_TRY(moved, im.permute(source.slot, permutation_between(source.order, grouped), "to_grouped"));
    return reshape_held(im, moved, dims, layout_order(Layout::ChannelsLast, dims.size()));
  }
  KILN_ONNX_TRY(input, im.plain(x));
  return reshape_held(im, input, dims, layout_order(Layout::Plain, dims.size()));
}

Status reshape(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  std::vector<std::int64_t> shape;
  if (im.opset() < 5) {
    shape = im.attr_ints("shape").value_or(std::vector<std::int64_t>{});
  } else {
    KILN_ONNX_TRY(requested, int_list(im, 1, "shape"));
    shape = requested;
  }
  const bool allow_zero = im.attr_int("allowzero", 0) != 0;
  std::optional<std::size_t> inferred;
  std::uint64_t known = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allow_zero) {
      if (i >= x->dims.size()) return im.invalid("shape entry ", i, " is 0 but the input has rank ", x->dims.size());
      shape[i] = x->dims[i];
    }
    if (shape[i] == -1) {
      if (inferred) return im.invalid("shape has more than one -1");
      inferred = i;
    } else if (shape[i] < 0 || shape[i] > std::int64_t{1} << 32) {
      return im.invalid("shape entry ", shape[i], " is out of range");
    } else {
      known *= static_cast<std::uint64_t>(shape[i]);
    }
  }
  if (std::ranges::count(shape, 0) > 0)
    return im.error("a shape with a zero dimension (kiln does not run empty tensors)");
  const std::uint64_t count = element_count(x->dims);
  if (inferred) {
    if (known == 0 || count % known != 0) return im.invalid("cannot infer the -1 for ", count, " elements");
    shape[*inferred] = static_cast<std::int64_t>(count / known);
  }
  return reshape_to(im, *x, shape);
}

Status flatten(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  const auto rank = static_cast<std::int64_t>(x->dims.size());
  std::int64_t axis = im.attr_int("axis", 1);
  if (axis < -rank || axis > rank) return im.invalid("axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  const auto outer = std::accumulate(x->dims.begin(), x->dims.begin() + axis, std::int64_t{1}, std::multiplies<>());
  const auto inner = std::accumulate(x->dims.begin() + axis, x->dims.end(), std::int64_t{1}, std::multiplies<>());
  return reshape_to(im, *x, {outer, inner});
}

Status squeeze(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  KILN_ONNX_TRY(axes, axes_of(im, 13));
  std::vector<bool> removed(x->dims.size(), false);
  if (!axes || axes->empty()) {
    for (std::size_t d = 0; d < x->dims.size(); ++d) removed[d] = x->dims[d] == 1;
  } else {
    for (std::int64_t axis : *axes) {
      KILN_ONNX_TRY(d, normalized_axis(im, axis, x->dims.size()));
      if (x->dims[d] != 1) return im.invalid("cannot squeeze axis ", axis, " of size ", x->dims[d]);
      removed[d] = true;
    }
  }
  std::vector<std::int64_t> dims;
  for (std::size_t d = 0; d < x->dims.size(); ++d)
    if (!removed[d]) dims.push_back(x->dims[d]);
  return reshape_to(im, *x, dims);
}

Status unsqueeze(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  KILN_ONNX_TRY(axes, axes_of(im, 13));
  if (!axes || axes->empty()) return im.invalid("axes is missing");
  const std::size_t rank = x->dims.size() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (std::int64_t axis : *axes) {
    KILN_ONNX_TRY(d, normalized_axis(im, axis, rank));
    if (inserted[d]) return im.invalid("axis ", axis, " is listed twice");
    inserted[d] = true;
  }
  std::vector<std::int64_t> dims;
  for (std::size_t d = 0, next = 0; d < rank; ++d) dims.push_back(inserted[d] ? 1 : x->dims[next++]);
  return reshape_to(im, *x, dims);
}

// Identity, and Dropout in inference: the input unchanged, and a mask that keeps everything.
Status identity(Importer& im) {
  if (im.opset() >= 12 && im.has_input(2)) {
    KILN_ONNX_TRY(training, im.constant_input(2, "training_mode"));
    if (training->size() == 1 && training->int_at(0) != 0) return im.error("training_mode true (kiln runs inference)");
  }
  KILN_ONNX_TRY(x, im.input(0));
  if (im.output_used(1)) {
    if (x->dims.empty() && !x->constant) return im.error("the mask of a scalar");
    ConstValue mask{x->dims, false, true, {}, std::vector<std::int64_t>(element_count(x->dims), 1)};
    im.define_constant(1, std::move(mask), DataType::Boolean);
  }
  im.define_value(0, *x);
  return Status::ok();
}

Status transpose(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  const std::size_t rank = x->dims.size();
  std::vector<std::int64_t> requested = im.attr_ints("perm").value_or(std::vector<std::int64_t>{});
  std::vector<std::size_t> perm(rank);
  if (requested.empty()) {
    for (std::size_t d = 0; d < rank; ++d) perm[d] = rank - 1 - d;
  } else {
    if (requested.size() != rank) return im.invalid("perm has ", requested.size(), " entries for rank ", rank);
    std::vector<bool> seen(rank, false);
    for (std::size_t d = 0; d < rank; ++d) {
      if (requested[d] < 0 || requested[d] >= static_cast<std::int64_t>(rank) ||
          seen[static_cast<std::size_t>(requested[d])])
        return im.invalid("perm is not a permutation of 0..", rank - 1);
      perm[d] = static_cast<std::size_t>(requested[d]);
      seen[perm[d]] = true;
    }
  }
  std::vector<std::int64_t> dims;
  for (std::size_t d : perm) dims.push_back(x->dims[d]);
  if (x->constant) {
    im.define_constant(0, x->constant->transposed(x->dims, perm, dims), x->type);
    return Status::ok();
  }
  // No layer: the output is the input's tensors with their axes renamed. Whoever reads it in
  // plain or channels-last order pays one transpose then, composed with any before it.
  std::vector<std::size_t> renamed(rank);  // input axis -> output axis
  for (std::size_t d = 0; d < rank; ++d) renamed[perm[d]] = d;
  Value y{dims, x->type, std::nullopt, {}};
  for (const HeldTensor& held : x->held) {
    HeldTensor moved{held.slot, {}};
    for (std::size_t axis : held.order) moved.order.push_back(renamed[axis]);
    y.held.push_back(std::move(moved));
  }
  im.define_value(0, std::move(y));
  return Status::ok();
}

// DepthToSpace (DCR and CRD) and SpaceToDepth: a Reshape to six dimensions, a Transpose and a
// Reshape back, in ONNX's order.
template <bool ToSpace>
Status depth_space(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  if (x->dims.size() != 4) return im.invalid("input has rank ", x->dims.size(), "; it must be 4 (NCHW)");
  const std::int64_t block = im.attr_int("blocksize", 0);
  if (block <= 0) return im.invalid("blocksize must be positive");
  const std::int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
  std::vector<std::int64_t> split, merged;
  DimVector<std::uint32_t> perm;
  if constexpr (ToSpace) {
    if (c % (block * block) != 0) return im.invalid("channels ", c, " are not a multiple of blocksize^2");
    const std::int64_t depth = c / (block * block);
    const std::string mode = im.attr_string("mode").value_or("DCR");
    if (mode != "DCR" && mode != "CRD") return im.invalid("mode '", mode, "' is not DCR or CRD");
    split = mode == "DCR" ? std::vector<std::int64_t>{n, block, block, depth, h, w}
                          : std::vector<std::int64_t>{n, depth, block, block, h, w};
    perm = mode == "DCR" ? DimVector<std::uint32_t>{0, 3, 4, 1, 5, 2} : DimVector<std::uint32_t>{0, 1, 4, 2, 5, 3};
    merged = {n, depth, h * block, w * block};
  } else {
    if (h % block != 0 || w % block != 0) return im.invalid("height and width are not multiples of blocksize");
    split = {n, c, h / block, block, w / block, block};
    perm = {0, 3, 5, 1, 2, 4};
    merged = {n, c * block * block, h / block, w / block};
  }
  KILN_ONNX_TRY(input, im.plain(*x));
  KILN_ONNX_TRY(blocks, im.add<ops::Reshape>({split}, {input}, "blocks"));
  KILN_ONNX_TRY(moved, im.add<ops::Transpose>({perm}, {blocks}, "moved"));
  KILN_ONNX_TRY(y, im.add<ops::Reshape>({merged}, {moved}));
  im.define(0, y, Layout::Plain);
  return Status::ok();
}

// Tile: the input repeated along each axis, one Concat of copies per axis repeated.
Status tile(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  KILN_ONNX_TRY(repeats, im.constant_input(1, "repeats"));
  if (repeats->size() != x->dims.size())
    return im.invalid("repeats has ", repeats->size(), " entries for rank ", x->dims.size());
  std::vector<std::int64_t> dims = x->dims;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (repeats->int_at(d) < 1) return im.invalid("repeats must be positive (kiln runs no empty tensors)");
    dims[d] *= repeats->int_at(d);
  }
  if (element_count(dims) > max_folded_elements && x->constant)
    return im.error("folding a constant of ", element_count(dims), " elements");
  if (x->constant) {  // element j of the result is the element of x at each coordinate modulo x's
    std::vector<std::size_t> source;
    std::vector<std::int64_t> index(dims.size(), 0);
    for (std::uint64_t j = 0; j < element_count(dims); ++j) {
      std::size_t offset = 0;
      for (std::size_t d = 0; d < dims.size(); ++d)
        offset = offset * static_cast<std::size_t>(x->dims[d]) + static_cast<std::size_t>(index[d] % x->dims[d]);
      source.push_back(offset);
      for (std::size_t d = dims.size(); d-- > 0;) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
      }
    }
    im.define_constant(0, x->constant->gathered(dims, source), x->type);
    return Status::ok();
  }
  KILN_ONNX_TRY(input, im.plain(*x));
  OutputSlot y = input;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::int64_t r = repeats->int_at(d);
    if (r == 1) continue;
    const std::vector<OutputSlot> copies(static_cast<std::size_t>(r), y);
    KILN_ONNX_TRY(tiled, im.add<ops::Concat>({static_cast<std::int64_t>(d)}, copies, kiln::detail::str_cat("axis", d)));
    y = tiled;
  }
  im.define(0, y, Layout::Plain);
  return Status::ok();
}

Status concat(Importer& im) {
  const auto axis_attr = im.opset() < 4 ? im.attr_int("axis", 1) : im.attr_int("axis");  // optional before opset 4
  if (!axis_attr) return im.invalid("axis is missing");
  KILN_ONNX_TRY(first, im.input(0));
  const std::size_t rank = first->dims.size();
  KILN_ONNX_TRY(axis, normalized_axis(im, *axis_attr, rank));
  std::vector<Value*> inputs;
  bool all_constant = true, any_channels_last = false;
  for (std::size_t i = 0; i < im.num_inputs(); ++i) {
    KILN_ONNX_TRY(v, im.input(i));
    if (v->dims.size() != rank) return im.invalid("input ", i, " has rank ", v->dims.size(), ", input 0 ", rank);
    all_constant = all_constant && v->constant.has_value();
    any_channels_last = any_channels_last || (!v->constant && Importer::preferred_layout(*v) == Layout::ChannelsLast);
    inputs.push_back(v);
  }
  if (all_constant) {
    ConstValue out{first->dims, first->constant->is_float, first->constant->is_bool, {}, {}};
    out.dims[axis] = 0;
    for (const Value* v : inputs) out.dims[axis] += v->dims[axis];
    const auto outer = std::accumulate(first->dims.begin(), first->dims.begin() + static_cast<std::ptrdiff_t>(axis),
                                       std::int64_t{1}, std::multiplies<>());
    for (std::int64_t o = 0; o < outer; ++o)
      for (const Value* v : inputs) {
        const std::size_t block = v->constant->size() / static_cast<std::size_t>(std::max<std::int64_t>(outer, 1));
        for (std::size_t i = 0; i < block; ++i) {
          const std::size_t source = static_cast<std::size_t>(o) * block + i;
          if (out.is_float)
            out.floats.push_back(v->constant->float_at(source));
          else
            out.ints.push_back(v->constant->int_at(source));
        }
      }
    im.define_constant(0, std::move(out), first->type);
    return Status::ok();
  }
  const Layout layout = any_channels_last && rank >= 3 ? Layout::ChannelsLast : Layout::Plain;
  std::vector<OutputSlot> slots;
  for (Value* v : inputs) {
    KILN_ONNX_TRY(slot, im.tensor(*v, layout, rank));
    slots.push_back(slot);
  }
  const auto kiln_axis = static_cast<std::int64_t>(layout == Layout::Plain ? axis : channels_last_axis(axis, rank));
  KILN_ONNX_TRY(y, im.add<ops::Concat>({kiln_axis}, slots));
  im.define(0, y, layout);
  return Status::ok();
}

Status split(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  const std::size_t rank = x->dims.size();
  KILN_ONNX_TRY(axis, normalized_axis(im, im.attr_int("axis", 0), rank));
  const auto outputs = static_cast<std::size_t>(im.node().output_size());
  std::vector<std::int64_t> sizes;
  if (im.opset() < 13) {
    sizes = im.attr_ints("split").value_or(std::vector<std::int64_t>{});
  } else if (im.has_input(1)) {
    KILN_ONNX_TRY(requested, int_list(im, 1, "split"));
    sizes = requested;
  }
  if (sizes.empty()) {  // equal parts, the last one smaller when the axis does not divide (opset 18)
    const std::int64_t parts = im.attr_int("num_outputs", static_cast<std::int64_t>(outputs));
    if (parts <= 0 || static_cast<std::size_t>(parts) != outputs)
      return im.invalid("num_outputs does not match the outputs");
    const std::int64_t part = (x->dims[axis] + parts - 1) / parts;
    for (std::int64_t i = 0, left = x->dims[axis]; i < parts; ++i, left -= part) sizes.push_back(std::min(part, left));
  }
  if (sizes.size() != outputs) return im.invalid(sizes.size(), " split sizes for ", outputs, " outputs");
  std::vector<std::uint32_t> kiln_sizes;
  for (std::int64_t s : sizes) {
    if (s < 0 || s > x->dims[axis]) return im.invalid("split size ", s, " is out of range");
    kiln_sizes.push_back(static_cast<std::uint32_t>(s));
  }
  const Layout layout = Importer::preferred_layout(*x);
  const auto kiln_axis = static_cast<std::int64_t>(layout == Layout::Plain ? axis : channels_last_axis(axis, rank));
  KILN_ONNX_TRY(input, im.tensor(*x, layout, rank));
  KILN_ONNX_TRY(first, im.add<ops::Split>({kiln_axis, kiln_sizes}, {input}));
  for (std::uint32_t i = 0; i < outputs; ++i) im.define(i, OutputSlot{first.layer, i}, layout);
  return Status::ok();
}

Status slice(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  const std::size_t rank = x->dims.size();
  ops::StridedSlice::Params params;
  if (im.opset() < 10) {
    params.begin = im.attr_ints("starts").value_or(std::vector<std::int64_t>{});
    params.end = im.attr_ints("ends").value_or(std::vector<std::int64_t>{});
    params.axes = im.attr_ints("axes").value_or(std::vector<std::int64_t>{});
  } else {
    KILN_ONNX_TRY(starts, int_list(im, 1, "starts"));
    KILN_ONNX_TRY(ends, int_list(im, 2, "ends"));
    params.begin = starts;
    params.end = ends;
    if (im.has_input(3)) {
      KILN_ONNX_TRY(axes, int_list(im, 3, "axes"));
      params.axes = axes;
    }
    if (im.has_input(4)) {
      KILN_ONNX_TRY(steps, int_list(im, 4, "steps"));
      params.strides = steps;
    }
  }
  std::vector<std::uint32_t> dims32;
  for (std::int64_t d : x->dims) dims32.push_back(static_cast<std::uint32_t>(d));
  auto window = ops::StridedSlice::resolve(params, TensorShape(std::span<const std::uint32_t>(dims32)));
  if (!window) return im.invalid(window.status().message());
  if (x->constant) {
    std::vector<std::int64_t> dims;
    for (std::size_t d = 0; d < rank; ++d) dims.push_back(window->count[d]);
    const auto strides = strides_of(x->dims);
    std::vector<std::size_t> order;
    std::vector<std::int64_t> index(rank, 0);
    for (std::uint64_t j = 0; j < element_count(dims); ++j) {
      std::size_t source = 0;
      for (std::size_t d = 0; d < rank; ++d)
        source += static_cast<std::size_t>(window->start[d] + index[d] * window->step[d]) * strides[d];
      order.push_back(source);
      for (std::size_t d = rank; d-- > 0;) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
      }
    }
    im.define_constant(0, x->constant->gathered(dims, order), x->type);
    return Status::ok();
  }
  const Layout layout = Importer::preferred_layout(*x);
  if (layout == Layout::ChannelsLast) {
    if (params.axes.empty())
      for (std::size_t i = 0; i < params.begin.size(); ++i) params.axes.push_back(static_cast<std::int64_t>(i));
    for (std::int64_t& axis : params.axes) {
      KILN_ONNX_TRY(d, normalized_axis(im, axis, rank));
      axis = static_cast<std::int64_t>(channels_last_axis(d, rank));
    }
  }
  return im.define_op<ops::StridedSlice>(params, *x, layout);
}

Status pad(Importer& im) {
  KILN_ONNX_TRY(x, im.input(0));
  const std::size_t rank = x->dims.size();
  std::vector<std::int64_t> pads;
  float value = 0.0f;
  std::vector<std::int64_t> axes;
  if (im.opset() < 11) {
    pads = im.attr_ints(im.opset() < 2 ? "paddings" : "pads").value_or(std::vector<std::int64_t>{});
    value = im.attr_float("value", 0.0f);
  } else {
    KILN_ONNX_TRY(requested, int_list(im, 1, "pads"));
    pads = requested;
    if (im.has_input(2)) {
      KILN_ONNX_TRY(constant_value, im.constant_input(2, "constant_value"));
      if (constant_value->size() != 1) return im.invalid("constant_value must be a scalar");
      value = constant_value->float_at(0);
    }
    if (im.has_input(3)) {
      KILN_ONNX_TRY(requested_axes, int_list(im, 3, "axes"));
      axes = requested_axes;
    }
  }
  if (axes.empty())
    for (std::size_t d = 0; d < rank; ++d) axes.push_back(static_cast<std::int64_t>(d));
  if (pads.size() != 2 * axes.size()) return im.invalid("pads has ", pads.size(), " values for ", axes.size(), " axes");
  const std::string mode = im.attr_string("mode").value_or("constant");
  ops::Pad::Params params;
  if (mode == "constant")
    params.mode = ops::PadMode::Constant;
  else if (mode == "reflect")
    params.mode = ops::PadMode::Reflect;
  else if (mode == "edge")
    params.mode = ops::PadMode::Edge;
  else
    return im.error("mode '", mode, "'");
  const Layout layout = Importer::preferred_layout(*x);
  params.value = value;
  if (is_quantized(x->type)) {
    // ONNX pads an 8-bit tensor with the integer; kiln's Pad takes the value it stands for and
    // fills with the integer that quantises to (ONNX Runtime's QOperator models pad with the zero point).
    KILN_ONNX_TRY(integers, im.tensor(*x, layout, rank));
    const QuantizationInfo& q = im.info(integers).quantization;
    if (q.is_per_axis()) return im.error("Pad of an 8-bit tensor quantised per axis");
    const QuantizedRange range = quantized_range(x->type);
    if (value < static_cast<float>(range.lo) || value > static_cast<float>(range.hi) || value != std::trunc(value))
      return im.invalid("constant_value ", value, " is not a ", to_string(x->type), " integer");
    params.value = dequantize(static_cast<std::int64_t>(value), q.scales[0], q.offset);
  }
  params.before.assign(rank, 0);
  params.after.assign(rank, 0);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    KILN_ONNX_TRY(d, normalized_axis(im, axes[i], rank));
    const std::int64_t before = pads[i], after = pads[i + axes.size()];
    if (before < 0 || after < 0) return im.error("negative pads (cropping) are not supported");
    if (before > std::int64_t{1} << 24 || after > std::int64_t{1} << 24) return im.invalid("pads are too large");
    const std::size_t k = layout == Layout::Plain ? d : channels_last_axis(d, rank);
    params.before[k] = static_cast<std::uint32_t>(before);
    params.after[k] = static_cast<std::uint32_t>(after);
  }
  return im.define_op<ops::Pad>(params, *x, layout);
}

Status gather(Importer& im) {
  KILN_ONNX_TRY(data, im.input(0));
  KILN_ONNX_TRY(indices, im.input(1));
  KILN_ONNX_TRY(axis, normalized_axis(im, im.attr_int("axis", 0), data->dims.size()));
  if (data->constant && indices->constant) {
    const std::int64_t dim = data->dims[axis];
    std::vector<std::int64_t> dims(data->dims.begin(), data->dims.begin() + static_cast<std::ptrdiff_t>(axis));
    dims.insert(dims.end(), indices->dims.begin(), indices->dims.end());
    dims.insert(dims.end(), data->dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, data->dims.end());
    if (element_count(dims) > max_folded_elements)
      return im.error("folding a constant of ", element_count(dims), " elements (at most ", max_folded_elements, ")");
    const auto outer = std::accumulate(data->dims.begin(), data->dims.begin() + static_cast<std::ptrdiff_t>(axis),
                                       std::int64_t{1}, std::multiplies<>());
    const auto inner = std::accumulate(data->dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, data->dims.end(),
                                       std::int64_t{1}, std::multiplies<>());
    std::vector<std::size_t> order;
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::size_t i = 0; i < indices->constant->size(); ++i) {
        std::int64_t index = indices->constant->int_at(i);
        if (index < -dim || index >= dim) return im.invalid("index ", index, " is out of range for dimension ", dim);
        if (index < 0) index += dim;
        for (std::int64_t k = 0; k < inner; ++k)
          order.push_back(static_cast<std::size_t>((o * dim + index) * inner + k));
      }
    im.define_constant(0, data->constant->gathered(dims, order), data->type);
    return Status::ok();
  }
  KILN_ONNX_TRY(input, im.plain(*data));
  KILN_ONNX_TRY(index_slot, im.plain(*indices));
  KILN_ONNX_TRY(y, im.add<ops::Gather>({static_cast<std::int64_t>(axis)}, {input, index_slot}));
  im.define(0, y, Layout::Plain);
  return Status::ok();
}

// GatherElements of computed tensors; shape arithmetic has no use for it, so constants are not folded.
Status gather_elements(Importer& im) {
  KILN_ONNX_TRY(data, im.input(0));
  KILN_ONNX_TRY(indices, im.input(1));
  KILN_ONNX_TRY(axis, normalized_axis(im, im.attr_int("axis", 0), data->dims.size()));
  KILN_ONNX_TRY(input, im.plain(*data));
  KILN_ONNX_TRY(index_slot, im.plain(*indices));
  KILN_ONNX_TRY(y, im.add<ops::GatherElements>({static_cast<std::int64_t>(axis)}, {input, index_slot}));
  im.define(0, y, Layout::Plain);
  return Status::ok();
}

constexpr ConverterEntry shape_ops[] = {
    {"DepthToSpace", depth_space<true>},
    {"SpaceToDepth", depth_space<false>},
    {"Tile", tile},
    {"Concat", concat},
    {"Dropout", identity},
    {"Flatten", flatten},
    {"Gather", gather},
    {"GatherElements", gather_elements},
    {"Identity", identity},
    {"Pad", pad},
    {"Reshape", reshape},
    {"Slice", slice},
    {"Split", split},
    {"Squeeze", squeeze},
    {"Transpose", transpose},
    {"Unsqueeze", unsqueeze},
};

}  // namespace

std::span<const ConverterEntry> shape_converters() { return shape_ops; }

}  // namespace kiln::onnx::detail
