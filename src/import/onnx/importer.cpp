// SPDX-License-Identifier: Apache-2.0
// The ONNX importer's driver: the model and its graph, values and their layouts, the converter table.
#include "importer.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <google/protobuf/io/zero_copy_stream.h>

#include "kiln/core/requantization.hpp"

namespace kiln::onnx {
namespace detail {

std::uint64_t element_count(std::span<const std::int64_t> dims) {
  std::uint64_t count = 1;
  for (std::int64_t d : dims) count *= static_cast<std::uint64_t>(d);
  return count;
}

std::vector<std::size_t> strides_of(std::span<const std::int64_t> dims) {
  std::vector<std::size_t> strides(dims.size(), 1);
  for (std::size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * static_cast<std::size_t>(dims[d]);
  return strides;
}

std::vector<std::size_t> to_channels_last(std::size_t rank) {
  std::vector<std::size_t> perm(rank);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  if (rank >= 3) std::rotate(perm.begin() + 1, perm.begin() + 2, perm.end());
  return perm;
}

std::size_t position_in(std::span<const std::size_t> order, std::size_t axis) {
  return static_cast<std::size_t>(std::ranges::find(order, axis) - order.begin());
}

std::vector<std::size_t> permutation_between(std::span<const std::size_t> from, std::span<const std::size_t> to) {
  std::vector<std::size_t> perm;
  for (std::size_t axis : to) perm.push_back(position_in(from, axis));
  return perm;
}

std::size_t channels_last_axis(std::size_t axis, std::size_t rank) { return position_in(to_channels_last(rank), axis); }

ConstValue ConstValue::gathered(std::vector<std::int64_t> new_dims, std::span<const std::size_t> source) const {
  ConstValue out{std::move(new_dims), is_float, is_bool, {}, {}};
  if (is_float) {
    out.floats.reserve(source.size());
    for (std::size_t s : source) out.floats.push_back(floats[s]);
  } else {
    out.ints.reserve(source.size());
    for (std::size_t s : source) out.ints.push_back(ints[s]);
  }
  return out;
}

namespace {
// Writes `values` seen as `dims`, transposed by `perm`, to out[0, element count). The innermost
// output axis runs as a strided loop and the others odometer-wise, with no table of indices.
template <class T>
void transpose_into(const T* values, std::span<const std::int64_t> dims, std::span<const std::size_t> perm, T* out) {
  const std::size_t rank = perm.size(), count = element_count(dims);
  if (count == 0) return;
  if (rank == 0) {
    out[0] = values[0];
    return;
  }
  const auto in_strides = strides_of(dims);
  std::vector<std::int64_t> out_dims(rank);
  std::vector<std::size_t> strides(rank);  // the source stride of each output dimension
  for (std::size_t d = 0; d < rank; ++d) {
    out_dims[d] = dims[perm[d]];
    strides[d] = in_strides[perm[d]];
  }
  const auto inner = static_cast<std::size_t>(out_dims[rank - 1]);
  const std::size_t inner_stride = strides[rank - 1];
  std::vector<std::int64_t> index(rank, 0);
  std::size_t source = 0;
  for (std::size_t written = 0; written < count; written += inner) {
    for (std::size_t i = 0; i < inner; ++i) *out++ = values[source + i * inner_stride];
    for (std::size_t d = rank - 1; d-- > 0;) {  // next outer index, moving `source` along
      source += strides[d];
      if (++index[d] < out_dims[d]) break;
      source -= static_cast<std::size_t>(out_dims[d]) * strides[d];
      index[d] = 0;
    }
  }
}

template <class T>
std::vector<T> transpose_values(const std::vector<T>& values, std::span<const std::int64_t> dims,
                                std::span<const std::size_t> perm) {
  std::vector<T> out(values.size());
  transpose_into(values.data(), dims, perm, out.data());
  return out;
}
}  // namespace

ConstValue ConstValue::transposed(std::span<const std::int64_t> dims, std::span<const std::size_t> perm,
                                  std::vector<std::int64_t> new_dims) const {
  ConstValue out{std::move(new_dims), is_float, is_bool, {}, {}};
  if (is_float)
    out.floats = transpose_values(floats, dims, perm);
  else
    out.ints = transpose_values(ints, dims, perm);
  return out;
}

Expected<std::vector<std::uint32_t>> to_dims(std::span<const std::int64_t> dims) {
  std::vector<std::uint32_t> out;
  for (std::int64_t d : dims) {
    if (d < 0 || d > std::numeric_limits<std::uint32_t>::max())
      return Status::error(ErrorCode::InvalidArgument, "dimension ", d, " is out of range");
    out.push_back(static_cast<std::uint32_t>(d));
  }
  return out;
}

// ---- the current node

std::string Importer::node_description() const {
  if (node_ == nullptr) return "graph";
  return kiln::detail::str_cat("node '", node_->name(), "' (", node_->op_type(), ")");
}

std::string Importer::layer_name(std::string_view suffix) const {
  // Unnamed nodes are named after their first named output.
  const auto& outputs = node_->output();
  const auto named = std::ranges::find_if(outputs, [](const std::string& name) { return !name.empty(); });
  std::string base = !node_->name().empty()   ? node_->name()
                     : named == outputs.end() ? std::string(node_->op_type())
                                              : kiln::detail::str_cat(node_->op_type(), '_', *named);
  return suffix.empty() ? base : kiln::detail::str_cat(base, '/', suffix);
}

std::size_t Importer::num_inputs() const {
  std::size_t n = static_cast<std::size_t>(node_->input_size());
  while (n > 0 && node_->input(static_cast<int>(n - 1)).empty()) --n;
  return n;
}

bool Importer::has_input(std::size_t i) const {
  return i < static_cast<std::size_t>(node_->input_size()) && !node_->input(static_cast<int>(i)).empty();
}

Expected<Value*> Importer::input(std::size_t i) {
  if (!has_input(i)) return invalid("input ", i, " is missing");
  auto found = values_.find(node_->input(static_cast<int>(i)));
  if (found == values_.end())
    return invalid("input ", i, " '", node_->input(static_cast<int>(i)), "' is not produced by any earlier node");
  return &found->second;
}

Expected<const ConstValue*> Importer::constant_input(std::size_t i, std::string_view role) {
  KILN_ONNX_TRY(value, input(i));
  if (!value->constant)
    return error(role, " (input ", i, " '", node_->input(static_cast<int>(i)),
                 "') must be a constant (an initializer or computable at import)");
  return &*value->constant;
}

Expected<Value*> Importer::output_value(std::size_t i) {
  auto found = i < static_cast<std::size_t>(node_->output_size()) ? values_.find(node_->output(static_cast<int>(i)))
                                                                  : values_.end();
  if (found == values_.end()) return invalid("output ", i, " is not defined");
  return &found->second;
}

bool Importer::output_used(std::size_t i) const {
  if (!is_output(i)) return false;
  auto found = readers_.find(node_->output(static_cast<int>(i)));
  return found != readers_.end() && found->second > 0;
}

const ::onnx::AttributeProto* Importer::attr(std::string_view name) const {
  for (const auto& a : node_->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
std::optional<std::int64_t> Importer::attr_int(std::string_view name) const {
  const auto* a = attr(name);
  if (a == nullptr) return std::nullopt;
  return a->i();
}
std::int64_t Importer::attr_int(std::string_view name, std::int64_t fallback) const {
  return attr_int(name).value_or(fallback);
}
std::optional<float> Importer::attr_float(std::string_view name) const {
  const auto* a = attr(name);
  if (a == nullptr) return std::nullopt;
  return a->f();
}
float Importer::attr_float(std::string_view name, float fallback) const { return attr_float(name).value_or(fallback); }
std::optional<std::vector<std::int64_t>> Importer::attr_ints(std::string_view name) const {
  const auto* a = attr(name);
  if (a == nullptr) return std::nullopt;
  return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}
std::optional<std::vector<float>> Importer::attr_floats(std::string_view name) const {
  const auto* a = attr(name);
  if (a == nullptr) return std::nullopt;
  return std::vector<float>(a->floats().begin(), a->floats().end());
}
std::optional<std::string> Importer::attr_string(std::string_view name) const {
  const auto* a = attr(name);
  if (a == nullptr) return std::nullopt;
  return a->s();
}

// ---- values and layouts

std::vector<std::size_t> layout_order(Layout layout, std::size_t rank) {
  if (layout == Layout::ChannelsLast) return to_channels_last(rank);
  std::vector<std::size_t> order(rank);
  std::iota(order.begin(), order.end(), std::size_t{0});
  return order;
}

const HeldTensor* Value::in_order(std::span<const std::size_t> order) const {
  const auto found =
      std::ranges::find_if(held, [&](const HeldTensor& h) { return std::ranges::equal(h.order, order); });
  return found == held.end() ? nullptr : &*found;
}

Layout Importer::preferred_layout(const Value& value) {
  const std::size_t rank = value.dims.size();
  if (value.in_order(layout_order(Layout::Plain, rank)) != nullptr) return Layout::Plain;
  // Channels-last, or an order a shuffle left: channels-last is where such values go next.
  return value.held.empty() ? Layout::Plain : Layout::ChannelsLast;
}

OutputSlot Importer::add_constant(const ConstValue& constant, DataType type, std::string_view suffix) {
  if (type == DataType::Float32 && constant.quantized) {
    const std::vector<std::size_t> identity = layout_order(Layout::Plain, constant.dims.size());
    if (auto dequantized = add_quantized_constant(constant, identity, suffix)) return *dequantized;
  }
  std::vector<std::byte> bytes(constant.size() * size_of(type));
  if (type == DataType::Float32 && constant.is_float) {
    if (!bytes.empty()) std::memcpy(bytes.data(), constant.floats.data(), bytes.size());
  } else if (type == DataType::Float32) {
    for (std::size_t i = 0; i < constant.size(); ++i) {
      const float value = constant.float_at(i);
      std::memcpy(bytes.data() + i * sizeof value, &value, sizeof value);
    }
  } else if (type == DataType::Boolean) {
    for (std::size_t i = 0; i < constant.size(); ++i) bytes[i] = constant.int_at(i) != 0 ? std::byte{1} : std::byte{0};
  } else {
    for (std::size_t i = 0; i < constant.size(); ++i) {
      const auto value = static_cast<std::int32_t>(constant.int_at(i));
      std::memcpy(bytes.data() + i * sizeof value, &value, sizeof value);
    }
  }
  return adopt_constant(constant.dims, type, std::move(bytes), suffix);
}

OutputSlot Importer::add_constant(const ConstValue& constant, std::span<const std::int64_t> dims,
                                  std::span<const std::size_t> perm, DataType type, std::string_view suffix) {
  std::vector<std::int64_t> new_dims;
  for (std::size_t d : perm) new_dims.push_back(dims[d]);
  if (type == DataType::Float32 && constant.quantized && std::ranges::equal(dims, constant.dims))
    if (auto dequantized = add_quantized_constant(constant, perm, suffix)) return *dequantized;
  if (type != DataType::Float32 || !constant.is_float)
    return add_constant(constant.transposed(dims, perm, new_dims), type, suffix);
  // Weights, mostly: transposed straight into the layer's bytes, not through a copy.
  std::vector<std::byte> bytes(constant.size() * sizeof(float));
  transpose_into(constant.floats.data(), dims, perm, reinterpret_cast<float*>(bytes.data()));
  return adopt_constant(new_dims, type, std::move(bytes), suffix);
}

std::optional<OutputSlot> Importer::add_quantized_constant(const ConstValue& constant,
                                                           std::span<const std::size_t> perm, std::string_view suffix) {
  const ConstValue::Quantized& q = *constant.quantized;
  std::vector<std::int64_t> new_dims;
  for (std::size_t d : perm) new_dims.push_back(constant.dims[d]);
  ConstValue integers{constant.dims, false, false, {}, q.ints};
  const ConstValue permuted = integers.transposed(constant.dims, perm, new_dims);
  std::vector<std::byte> bytes(permuted.size() * size_of(q.type));
  for (std::size_t i = 0; i < permuted.size(); ++i) {
    const auto value = static_cast<std::int32_t>(permuted.ints[i]);
    if (q.type == DataType::Signed32)
      std::memcpy(bytes.data() + 4 * i, &value, 4);
    else
      bytes[i] = static_cast<std::byte>(static_cast<std::uint8_t>(value));
  }
  QuantizationInfo info = q.info;
  if (info.axis) info.axis = static_cast<std::uint32_t>(position_in(perm, *info.axis));
  const OutputSlot integers_slot = adopt_constant(new_dims, q.type, std::move(bytes), suffix, info);
  auto dequantized = add<ops::Dequantize>({}, {integers_slot}, kiln::detail::str_cat(suffix, "/dequantize"));
  if (!dequantized) return std::nullopt;
  return *dequantized;
}

OutputSlot Importer::adopt_constant(std::span<const std::int64_t> dims, DataType type, std::vector<std::byte> bytes,
                                    std::string_view suffix, QuantizationInfo quantization) {
  const auto kiln_dims = *to_dims(dims);
  const TensorInfo info{TensorShape(std::span<const std::uint32_t>(kiln_dims)), type, std::move(quantization)};
  const OutputSlot slot = network_->adopt_constant(info, std::move(bytes), layer_name(suffix));
  infos_[{slot.layer, 0}] = info;
  return slot;
}

Expected<OutputSlot> Importer::tensor(Value& value, Layout layout, std::size_t rank) {
  const std::size_t own_rank = value.dims.size();
  if (rank < 3) layout = Layout::Plain;  // [N, C] and lower are channels-last already
  std::vector<std::int64_t> dims(rank - own_rank, 1);
  dims.insert(dims.end(), value.dims.begin(), value.dims.end());

  const auto order = layout_order(layout, rank);
  if (rank == own_rank)
    if (const HeldTensor* held = value.in_order(order)) return held->slot;

  if (value.constant) {
    ConstValue expanded = *value.constant;
    expanded.dims = dims;
    if (value.type == DataType::Signed32)
      for (std::int64_t v : expanded.ints)
        if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
          return error("constant value ", v, " does not fit kiln's 32-bit integers");
    const OutputSlot slot = layout == Layout::ChannelsLast
                                ? add_constant(expanded, dims, order, value.type, "constant_nhwc")
                                : add_constant(expanded, value.type, "constant");
    if (rank == own_rank) value.held.push_back({slot, order});
    return slot;
  }

  if (rank == own_rank) {
    // One permutation from the first order it is held in (an input, or the layer that made it).
    const HeldTensor& source = value.held.front();
    KILN_ONNX_TRY(slot, permute(source.slot, permutation_between(source.order, order),
                                layout == Layout::Plain ? "to_nchw" : "to_nhwc"));
    value.held.push_back({slot, order});
    return slot;
  }
  // A broadcast operand of lower rank: leading 1s, then the layout.
  KILN_ONNX_TRY(base, plain(value));
  KILN_ONNX_TRY(reshaped, add<ops::Reshape>({dims}, {base}, "expand_rank"));
  if (layout == Layout::Plain) return reshaped;
  return permute(reshaped, to_channels_last(rank), "to_nhwc");
}

Expected<OutputSlot> Importer::permute(OutputSlot slot, std::span<const std::size_t> perm, std::string_view suffix) {
  const TensorShape& shape = info(slot).shape;
  // A permutation that keeps the order of the dimensions larger than 1 moves no data (NCHW and
  // NHWC of a 1x1 image): a Reshape says so, and backends run it as a copy or not at all.
  std::vector<std::size_t> moved;
  for (std::size_t d : perm)
    if (shape[d] != 1) moved.push_back(d);
  if (std::ranges::is_sorted(moved)) {
    std::vector<std::int64_t> dims;
    for (std::size_t d : perm) dims.push_back(shape[d]);
    return add<ops::Reshape>({dims}, {slot}, suffix);
  }
  return add<ops::Transpose>({std::vector<std::uint32_t>(perm.begin(), perm.end())}, {slot}, suffix);
}

bool Importer::is_output(std::size_t i) const {
  return i < static_cast<std::size_t>(node_->output_size()) && !node_->output(static_cast<int>(i)).empty();
}

void Importer::define(std::size_t i, OutputSlot slot, std::span<const std::size_t> order) {
  if (!is_output(i)) return;  // an optional output the model does not name
  Value value;
  const TensorInfo& slot_info = info(slot);
  value.type = slot_info.type;
  value.dims.resize(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) value.dims[order[k]] = slot_info.shape[k];
  value.held.push_back({slot, {order.begin(), order.end()}});
  values_[node_->output(static_cast<int>(i))] = std::move(value);
}

void Importer::define_value(std::size_t i, Value value) {
  if (!is_output(i)) return;
  node_folded_ = value.constant.has_value();
  values_[node_->output(static_cast<int>(i))] = std::move(value);
}

void Importer::define_constant(std::size_t i, ConstValue constant, DataType type) {
  if (!is_output(i)) return;
  Value value;
  value.dims = constant.dims;
  value.type = type;
  value.constant = std::move(constant);
  values_[node_->output(static_cast<int>(i))] = std::move(value);
  node_folded_ = true;
}

// ---- spatial ops

Expected<std::vector<std::int64_t>> spatial_attr(const Importer& im, std::string_view name, std::size_t axes,
                                                 std::int64_t fallback) {
  const std::size_t expected = name == "pads" ? 2 * axes : axes;
  auto values = im.attr_ints(name).value_or(std::vector<std::int64_t>(expected, fallback));
  if (values.size() != expected)
    return im.invalid(name, " has ", values.size(), " values; ", expected, " expected for ", axes, " spatial axes");
  for (std::int64_t v : values)
    if (v < 0 || v > std::numeric_limits<std::int32_t>::max() || (v == 0 && name != "pads"))
      return im.invalid(name, " value ", v, " is out of range");
  return values;
}

Expected<Window> read_window(const Importer& im, std::span<const std::int64_t> spatial,
                             std::span<const std::int64_t> kernel) {
  const std::size_t axes = spatial.size();
  if (axes < 1 || axes > 3) return im.error(axes, " spatial axes; kiln runs 1-D, 2-D and 3-D windows");
  std::vector<std::int64_t> kernel_shape(kernel.begin(), kernel.end());
  if (im.attr("kernel_shape") != nullptr || kernel.empty()) {
    KILN_ONNX_TRY(k, spatial_attr(im, "kernel_shape", axes, 0));
    if (!kernel.empty() && !std::ranges::equal(k, kernel)) return im.invalid("kernel_shape does not match the weights");
    kernel_shape = k;
  }
  KILN_ONNX_TRY(strides, spatial_attr(im, "strides", axes, 1));
  KILN_ONNX_TRY(dilations, spatial_attr(im, "dilations", axes, 1));
  KILN_ONNX_TRY(pads, spatial_attr(im, "pads", axes, 0));
  const std::string auto_pad = im.attr_string("auto_pad").value_or("NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (std::size_t a = 0; a < axes; ++a) {
      const std::int64_t out = (spatial[a] + strides[a] - 1) / strides[a];
      const std::int64_t total =
          std::max<std::int64_t>(0, (out - 1) * strides[a] + (kernel_shape[a] - 1) * dilations[a] + 1 - spatial[a]);
      pads[a] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[a + axes] = total - pads[a];
    }
  } else if (auto_pad == "VALID") {
    std::ranges::fill(pads, 0);
  } else if (auto_pad != "NOTSET") {
    return im.invalid("auto_pad '", auto_pad, "' is not known");
  }
  auto axis = [&](std::size_t a) {
    auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    return WindowAxis{u(kernel_shape[a]), u(strides[a]), u(dilations[a]), u(pads[a]), u(pads[a + axes])};
  };
  const WindowAxis width = axis(axes - 1), height = axes >= 2 ? axis(axes - 2) : WindowAxis{},
                   depth = axes == 3 ? axis(0) : WindowAxis{};
  return Window{{height.kernel, width.kernel},
                {height.stride, width.stride},
                {height.dilation, width.dilation},
                {height.before, height.after, width.before, width.after},
                depth};
}

Expected<OutputSlot> nhwc_input(Importer& im, Value& x) {
  if (x.dims.size() < 3 || x.dims.size() > 5)
    return im.error("input has ", x.dims.size(), " dimensions; kiln runs 1-D, 2-D and 3-D spatial ops (3 to 5)");
  KILN_ONNX_TRY(slot, im.channels_last(x));
  const auto& d = x.dims;
  if (d.size() == 4) return slot;
  if (d.size() == 3) return im.add<ops::Reshape>({{d[0], 1, d[2], d[1]}}, {slot}, "as_2d");
  return im.add<ops::Reshape>({{d[0] * d[2], d[3], d[4], d[1]}}, {slot}, "depth_slices");
}

Status define_nhwc_output(Importer& im, const Value& x, OutputSlot y, std::int64_t depth) {
  const TensorShape& s = im.info(y).shape;
  if (x.dims.size() == 3) {
    KILN_ONNX_TRY(lowered, im.add<ops::Reshape>({{s[0], s[2], s[3]}}, {y}, "as_1d"));
    y = lowered;
  } else if (x.dims.size() == 5) {
    KILN_ONNX_TRY(volume, im.add<ops::Reshape>({{x.dims[0], depth, s[1], s[2], s[3]}}, {y}, "as_3d"));
    y = volume;
  }
  im.define(0, y, Layout::ChannelsLast);
  return Status::ok();
}

// ---- the graph

namespace {

// The input's declared dimensions as text, "[batch, 3, 224, 224]" ('?' for an unnamed dynamic one).
std::string declared_shape(const ::onnx::TensorShapeProto& shape) {
  std::string text = "[";
  for (const auto& dim : shape.dim())
    text += kiln::detail::str_cat(text.size() > 1 ? ", " : "", dim.has_dim_value()   ? std::to_string(dim.dim_value())
                                                               : dim.has_dim_param() ? dim.dim_param()
                                                                                     : std::string("?"));
  return text + "]";
}

// The dimensions of a graph input: those the model fixes, the others from options.input_shapes
// (by input name) or options.dimensions (by dimension name). `named` collects the names used.
Expected<std::vector<std::int64_t>> input_dims(const ::onnx::ValueInfoProto& input, const ImportOptions& options,
                                               std::set<std::string, std::less<>>& named) {
  const auto context = kiln::detail::str_cat("graph input '", input.name(), "'");
  if (!input.type().has_tensor_type())
    return Status::error(ErrorCode::Unsupported, context, " is not a tensor (sequences and maps are not supported)");
  const auto& tensor_type = input.type().tensor_type();
  if (!tensor_type.has_shape()) return Status::error(ErrorCode::Unsupported, context, " has no shape");
  const auto& shape = tensor_type.shape();
  const auto given = options.input_shapes.find(input.name());
  if (given != options.input_shapes.end() && given->second.size() != static_cast<std::size_t>(shape.dim_size()))
    return Status::error(ErrorCode::InvalidArgument, context, " has ", shape.dim_size(), " dimensions ",
                         declared_shape(shape), "; the shape given for it has ", given->second.size());
  std::vector<std::int64_t> dims;
  for (int axis = 0; axis < shape.dim_size(); ++axis) {
    const auto& dim = shape.dim(axis);
    const bool fixed = dim.has_dim_value() && dim.dim_value() >= 0;
    std::optional<std::int64_t> value;
    if (fixed) value = dim.dim_value();
    if (given != options.input_shapes.end()) {
      const std::int64_t wanted = given->second[static_cast<std::size_t>(axis)];
      if (fixed && wanted != dim.dim_value())
        return Status::error(ErrorCode::InvalidArgument, context, " fixes dimension ", axis, " of ",
                             declared_shape(shape), " at ", dim.dim_value(), "; the shape given for it says ", wanted);
      value = wanted;
    } else if (!fixed && dim.has_dim_param()) {
      if (const auto found = options.dimensions.find(dim.dim_param()); found != options.dimensions.end()) {
        value = found->second;
        named.insert(dim.dim_param());
      }
    }
    if (!value) {
      if (dim.has_dim_param())
        return Status::error(ErrorCode::Unsupported, context, " has the dynamic dimension '", dim.dim_param(),
                             "' (axis ", axis, " of ", declared_shape(shape),
                             "); kiln plans memory at load and needs its value: ImportOptions::dimensions[\"",
                             dim.dim_param(), "\"] (kiln --dim ", dim.dim_param(), "=N), or the input's whole shape",
                             " (kiln --shape ", input.name(), "=D0x...)");
      return Status::error(ErrorCode::Unsupported, context, " has an unnamed dynamic dimension (axis ", axis, " of ",
                           declared_shape(shape), "); kiln plans memory at load and needs its value: give the ",
                           "input's shape, ImportOptions::input_shapes (kiln --shape ", input.name(), "=D0x...)");
    }
    if (*value == 0 && fixed)
      return Status::error(ErrorCode::Unsupported, context,
                           " has an empty dimension (kiln does not run empty tensors)");
    if (*value <= 0)
      return Status::error(ErrorCode::InvalidArgument, context, " would have dimension ", axis, " of ",
                           declared_shape(shape), " = ", *value, " (kiln runs tensors of at least one element)");
    dims.push_back(*value);
  }
  return dims;
}

}  // namespace

Status Importer::add_graph_input(const ::onnx::ValueInfoProto& input, std::span<const std::int64_t> input_dims,
                                 BindingId binding, ImportedModel& model) {
  const auto context = kiln::detail::str_cat("graph input '", input.name(), "'");
  const auto& tensor_type = input.type().tensor_type();
  auto boundary = boundary_info(tensor_type.elem_type(), {});
  if (!boundary) return boundary.status().with_context(context);
  if (boundary->type == DataType::Float32 && tensor_type.elem_type() != ::onnx::TensorProto::FLOAT)
    return Status::error(ErrorCode::Unsupported, context, " is ", onnx_type_name(tensor_type.elem_type()),
                         "; kiln's importer takes float32 inputs (convert the model's inputs to float32)");
  Value value;
  value.dims.assign(input_dims.begin(), input_dims.end());
  if (value.dims.size() > TensorShape::max_rank)
    return Status::error(ErrorCode::Unsupported, context, " has ", value.dims.size(), " dimensions; kiln runs at most ",
                         TensorShape::max_rank);
  auto dims = to_dims(value.dims);
  if (!dims) return dims.status().with_context(context);
  value.type = boundary->type;
  const TensorInfo info{TensorShape(std::span<const std::uint32_t>(*dims)), boundary->type, boundary->quantization};
  if (auto valid = kiln::validate(info); !valid) return valid.with_context(context);
  const OutputSlot slot = network_->add_input(binding, info, input.name());
  infos_[{slot.layer, 0}] = info;
  value.held.push_back({slot, layout_order(Layout::Plain, value.dims.size())});
  model.inputs.push_back({input.name(), binding, info});
  values_[input.name()] = std::move(value);
  return Status::ok();
}

/// Every converter, sorted by op type.
std::span<const ConverterEntry> converter_table() {
  static const std::vector<ConverterEntry> table = [] {
    std::vector<ConverterEntry> all;
    for (auto part : {activation_converters(), einsum_converters(), elementwise_converters(), convolution_converters(),
                      dense_converters(), pooling_converters(), loss_converters(), normalization_converters(),
                      recurrent_converters(), reduce_converters(), resize_converters(), shape_converters(),
                      constant_converters(), quantization_converters(), qoperator_converters()})
      all.insert(all.end(), part.begin(), part.end());
    std::ranges::sort(all, {}, &ConverterEntry::op);
    return all;
  }();
  return table;
}

Status Importer::convert_node(const ::onnx::NodeProto& node) {
  node_ = &node;
  node_folded_ = false;
  const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
  if (!default_domain && node.domain() != "com.microsoft")
    return error("op domain '", node.domain(), "' is not supported (only the default ONNX domain and ",
                 "com.microsoft's quantised ops are)");
  // An optional output may go unnamed (an LSTM whose Y only Y_h follows), but not every output.
  if (std::ranges::all_of(node.output(), [](const std::string& name) { return name.empty(); }))
    return invalid("the node has no output");
  const auto table = converter_table();
  const std::string op = default_domain ? node.op_type() : node.domain() + "." + node.op_type();
  const auto found = std::ranges::lower_bound(table, std::string_view(op), {}, &ConverterEntry::op);
  if (found == table.end() || found->op != op) return error("kiln's importer does not support op ", op);
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() && !values_.contains(node.input(i)))
      return invalid("input ", i, " '", node.input(i),
                     "' is not produced by any earlier node (the graph must be "
                     "topologically sorted)");
  if (auto status = found->convert(*this); !status) return status;
  for (int i = 0; i < node.output_size(); ++i)
    if (output_used(static_cast<std::size_t>(i)) && !values_.contains(node.output(i)))
      return error("output ", i, " '", node.output(i), "' is used but kiln does not compute it");
  // A constant no later node reads is in the network already, or not needed: weights are the
  // bulk of an import, so each is let go as soon as it is converted.
  for (const auto& name : node.input())
    if (!name.empty() && --readers_[name] == 0)
      if (auto value = values_.find(name); value != values_.end()) value->second.constant.reset();
  folded_ += node_folded_ ? 1 : 0;
  return Status::ok();
}

std::string Importer::expansion_name(std::string_view role) const { return layer_name(role); }

void Importer::define_named_constant(const std::string& name, ConstValue constant) {
  Value value;
  value.dims = constant.dims;
  value.type = constant.is_float ? DataType::Float32 : DataType::Signed32;
  value.constant = std::move(constant);
  values_[name] = std::move(value);
}

Status Importer::convert_as(std::span<const ::onnx::NodeProto> nodes) {
  const ::onnx::NodeProto* original = node_;
  const std::size_t folded = folded_;
  for (const auto& node : nodes)
    for (const auto& name : node.input())
      if (!name.empty()) ++readers_[name];
  Status status = Status::ok();
  for (const auto& node : nodes) {
    status = convert_node(node);
    if (!status) break;
  }
  const std::string expanded = node_description() + ": ";
  node_ = original;
  folded_ = folded;
  node_folded_ = false;
  if (status) return status;
  std::string_view reason = status.message();
  if (reason.starts_with(expanded)) reason.remove_prefix(expanded.size());
  return Status::error(status.code(), node_description(), ", computed as ", expanded, reason);
}

Status Importer::add_constant_input(const HostTensor& tensor) {
  Value value;
  ConstValue constant;
  for (std::size_t d = 0; d < tensor.info.rank(); ++d) constant.dims.push_back(tensor.info.shape[d]);
  if (tensor.data.size() != tensor.info.num_bytes())
    return Status::error(ErrorCode::InvalidArgument, "constant input '", tensor.name, "' has ", tensor.data.size(),
                         " bytes of data for ", tensor.info.to_string());
  constant.is_float = tensor.info.type == DataType::Float32;
  constant.is_bool = tensor.info.type == DataType::Boolean;
  for (std::size_t i = 0; i < tensor.info.num_elements(); ++i) {
    if (tensor.info.type == DataType::Float32) {
      float v;
      std::memcpy(&v, tensor.data.data() + 4 * i, 4);
      constant.floats.push_back(v);
    } else if (tensor.info.type == DataType::Signed32 || is_quantized(tensor.info.type)) {
      constant.ints.push_back(integer_at(ConstTensor{tensor.info, tensor.data.data()}, i));
    } else if (tensor.info.type == DataType::Boolean) {
      constant.ints.push_back(std::to_integer<int>(tensor.data[i]) != 0 ? 1 : 0);
    } else {
      return Status::error(ErrorCode::Unsupported, "constant input '", tensor.name, "' is ",
                           to_string(tensor.info.type));
    }
  }
  value.dims = constant.dims;
  // Integer constants are Signed32 whatever their width, as initializers are.
  value.type = is_quantized(tensor.info.type) ? DataType::Signed32 : tensor.info.type;
  value.constant = std::move(constant);
  values_[tensor.name] = std::move(value);
  return Status::ok();
}

Status Importer::read_graph(::onnx::GraphProto& graph, ImportedModel& model, const ImportOptions& options) {
  network_ = &model.network;
  for (auto& initializer : *graph.mutable_initializer()) {
    auto constant = read_constant(initializer);
    if (!constant) return constant.status();
    auto type = kiln_type(initializer.data_type());
    if (!type) return type.status().with_context(kiln::detail::str_cat("initializer '", initializer.name(), "'"));
    Value value;
    value.dims = constant->dims;
    value.type = *type;
    value.constant = std::move(*constant);
    values_[initializer.name()] = std::move(value);
    std::string().swap(*initializer.mutable_raw_data());  // its bytes are in the value now: not held twice
  }
  for (const auto& node : graph.node())
    for (const auto& name : node.input()) ++readers_[name];
  for (const auto& output : graph.output()) ++readers_[output.name()];

  BindingId binding = 0;
  std::set<std::string, std::less<>> named;  // the dimensions options.dimensions gave values
  std::string input_names;
  for (const auto& input : graph.input()) {
    // An initializer also listed as an input (IR < 4), or an input the user made constant.
    if (auto known = values_.find(input.name()); known != values_.end()) {
      if (known->second.constant && known->second.constant->onnx_type == 0)
        known->second.constant->onnx_type = input.type().tensor_type().elem_type();
      continue;
    }
    input_names += kiln::detail::str_cat(input_names.empty() ? "" : ", ", input.name());
    auto dims = input_dims(input, options, named);
    if (!dims) return dims.status();
    if (auto status = add_graph_input(input, *dims, binding++, model); !status) return status;
  }
  // A value for a name the model does not have is a typing error to report, not to ignore.
  for (const auto& [name, shape] : options.input_shapes)
    if (std::ranges::none_of(model.inputs, [&](const ModelTensor& input) { return input.name == name; }))
      return Status::error(ErrorCode::InvalidArgument, "a shape is given for '", name,
                           "', which is not an input of the model (its inputs: ", input_names, ")");
  for (const auto& [name, size] : options.dimensions)
    if (!named.contains(name))
      return Status::error(ErrorCode::InvalidArgument, "a value is given for the dimension '", name,
                           "', which no input of the model leaves open (or the input's whole shape was given)");
  for (const auto& node : graph.node())
    if (auto status = convert_node(node); !status) return status;
  node_ = nullptr;

  binding = 0;
  for (const auto& output : graph.output()) {
    auto found = values_.find(output.name());
    if (found == values_.end())
      return Status::error(ErrorCode::InvalidNetwork, "graph output '", output.name(), "' is not computed by any node");
    ::onnx::NodeProto output_node;
    output_node.set_name(output.name());
    output_node.set_op_type("Output");
    output_node.add_output(output.name());
    node_ = &output_node;
    auto slot = plain(found->second);
    node_ = nullptr;
    if (!slot) return slot.status();
    model.network.add_output(binding, *slot, output.name());
    model.outputs.push_back({output.name(), binding, info(*slot)});
    ++binding;
  }
  model.num_nodes = static_cast<std::size_t>(graph.node_size());
  model.num_folded = folded_;
  return Status::ok();
}

}  // namespace detail

std::span<const std::string_view> supported_ops() {
  static const std::vector<std::string_view> ops = [] {
    std::vector<std::string_view> names;
    for (const auto& entry : detail::converter_table()) names.push_back(entry.op);
    return names;
  }();
  return ops;
}

namespace {

Expected<ImportedModel> import_proto(::onnx::ModelProto& proto, const ImportOptions& options) {
  if (!proto.has_graph()) return Status::error(ErrorCode::InvalidArgument, "the model has no graph");
  ImportedModel model;
  model.producer = kiln::detail::str_cat(proto.producer_name(), proto.producer_version().empty() ? "" : " ",
                                         proto.producer_version());
  bool has_default_domain = false;
  for (const auto& opset : proto.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      model.opset = opset.version();
      has_default_domain = true;
    }
  if (!has_default_domain) model.opset = proto.ir_version() < 3 ? 1 : 0;
  if (model.opset < min_opset || model.opset > max_opset)
    return Status::error(ErrorCode::Unsupported, "the model uses ONNX opset ", model.opset, "; kiln reads opsets ",
                         min_opset, " to ", max_opset);
  detail::Importer importer(model.opset);
  for (const HostTensor& constant : options.constant_inputs)
    if (auto status = importer.add_constant_input(constant); !status) return status;
  if (auto status = importer.read_graph(*proto.mutable_graph(), model, options); !status) return status;
  if (auto status = model.network.infer_shapes(); !status) return status;
  for (ModelTensor& input : model.inputs)
    input.used = std::ranges::any_of(model.network.execution_order(), [&](LayerId id) {
      const auto* params = model.network.layer(id).params_if<ops::Input>();
      return params != nullptr && params->binding == input.binding;
    });
  return model;
}

constexpr std::string_view not_onnx =
    "the data is not an ONNX model (protobuf parsing failed: corrupt or truncated file?)";

}  // namespace

Expected<ImportedModel> import_model(std::span<const std::byte> bytes, const ImportOptions& options) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return Status::error(ErrorCode::InvalidArgument, "the model is ", bytes.size(),
                         " bytes; protobuf reads at most 2 GiB (external data is not supported)");
  ::onnx::ModelProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return Status::error(ErrorCode::InvalidArgument, not_onnx);
  return import_proto(proto, options);
}

namespace {

/// A model file's pages, mapped read-only and handed to protobuf a window at a time: the parser
/// copies each byte string straight out of the page cache, and the windows it has finished with
/// are let go, so that the file never lies in this process's memory whole next to the strings
/// made from it (mapped whole, it added up to 8 MiB to RegNet-X's peak RSS).
class MappedFileStream : public google::protobuf::io::ZeroCopyInputStream {
 public:
  MappedFileStream(const std::byte* data, std::size_t size) : data_(data), size_(size) {}

  bool Next(const void** data, int* size) override {
    if (position_ >= size_) return false;
    // protobuf backs up only within the window it was given last: the ones before it are done.
    release_before(window_start_);
    window_start_ = position_;
    const std::size_t length = std::min(window, size_ - position_);
    *data = data_ + position_;
    *size = static_cast<int>(length);
    position_ += length;
    return true;
  }
  void BackUp(int count) override { position_ -= static_cast<std::size_t>(count); }
  bool Skip(int count) override {
    if (static_cast<std::size_t>(count) > size_ - position_) {
      position_ = size_;
      return false;
    }
    position_ += static_cast<std::size_t>(count);
    return true;
  }
  std::int64_t ByteCount() const override { return static_cast<std::int64_t>(position_); }

 private:
  static constexpr std::size_t window = std::size_t{1} << 20;

  void release_before(std::size_t end) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    end = end / page * page;  // the mapping starts on a page: whole pages only
    if (end > released_) ::madvise(const_cast<std::byte*>(data_) + released_, end - released_, MADV_DONTNEED);
    released_ = std::max(released_, end);
  }

  const std::byte* data_;
  std::size_t size_, position_ = 0, window_start_ = 0, released_ = 0;
};

}  // namespace

Expected<ImportedModel> import_file(const std::string& path, const ImportOptions& options) {
  // Parsed from the file's pages: no copy of the file through a buffer of this process.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error(ErrorCode::NotFound, "cannot open model file '", path, "'");
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::error(ErrorCode::InvalidArgument, "model file '", path, "' is not a regular file");
  }
  const auto size = static_cast<std::size_t>(info.st_size);
  if (size == 0 || size > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    ::close(fd);
    return size == 0 ? Status::error(ErrorCode::InvalidArgument, not_onnx).with_context(path)
                     : Status::error(ErrorCode::InvalidArgument, "the model is ", size,
                                     " bytes; protobuf reads at most 2 GiB (external data is not supported)")
                           .with_context(path);
  }
  void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) return Status::error(ErrorCode::InvalidArgument, "cannot map model file '", path, "'");
  ::madvise(mapped, size, MADV_SEQUENTIAL);
  ::onnx::ModelProto proto;
  MappedFileStream stream(static_cast<const std::byte*>(mapped), size);
  const bool parsed = proto.ParseFromZeroCopyStream(&stream);
  ::munmap(mapped, size);
  if (!parsed) return Status::error(ErrorCode::InvalidArgument, not_onnx).with_context(path);
  auto model = import_proto(proto, options);
  if (!model) return model.status().with_context(path);
  return model;
}

}  // namespace kiln::onnx
