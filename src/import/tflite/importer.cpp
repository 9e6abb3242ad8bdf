// SPDX-License-Identifier: Apache-2.0
// The TensorFlow Lite importer: verifies a .tflite file with FlatBuffers' verifier, reads its
// tensors (NHWC, kiln's layout: no conversion), and hands each operator to its converter.
#include "importer.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <utility>

#if __has_include(<sys/mman.h>)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define KILN_TFLITE_MAPS_FILES 1
#else
#define KILN_TFLITE_MAPS_FILES 0
#endif

#include <flatbuffers/flatbuffers.h>

namespace kiln::tflite {
namespace {

using kiln::detail::str_cat;
using BuiltinOperator = format::BuiltinOperator;

struct OperatorEntry {
  BuiltinOperator code;
  std::string_view name;
  detail::Converter convert;
};

// Sorted by name: supported_ops() returns the names in this order.
constexpr OperatorEntry operator_table[] = {
    {BuiltinOperator::ADD, "ADD", detail::convert_add},
    {BuiltinOperator::AVERAGE_POOL_2D, "AVERAGE_POOL_2D", detail::convert_average_pool_2d},
    {BuiltinOperator::BATCH_MATMUL, "BATCH_MATMUL", detail::convert_batch_matmul},
    {BuiltinOperator::CONCATENATION, "CONCATENATION", detail::convert_concatenation},
    {BuiltinOperator::CONV_2D, "CONV_2D", detail::convert_conv_2d},
    {BuiltinOperator::DEPTHWISE_CONV_2D, "DEPTHWISE_CONV_2D", detail::convert_depthwise_conv_2d},
    {BuiltinOperator::DEQUANTIZE, "DEQUANTIZE", detail::convert_dequantize},
    {BuiltinOperator::FULLY_CONNECTED, "FULLY_CONNECTED", detail::convert_fully_connected},
    {BuiltinOperator::GATHER, "GATHER", detail::convert_gather},
    {BuiltinOperator::HARD_SWISH, "HARD_SWISH", detail::convert_hard_swish},
    {BuiltinOperator::LEAKY_RELU, "LEAKY_RELU", detail::convert_leaky_relu},
    {BuiltinOperator::LOGISTIC, "LOGISTIC", detail::convert_logistic},
    {BuiltinOperator::MAX_POOL_2D, "MAX_POOL_2D", detail::convert_max_pool_2d},
    {BuiltinOperator::MEAN, "MEAN", detail::convert_mean},
    {BuiltinOperator::MUL, "MUL", detail::convert_mul},
    {BuiltinOperator::PAD, "PAD", detail::convert_pad},
    {BuiltinOperator::PADV2, "PADV2", detail::convert_pad},
    {BuiltinOperator::QUANTIZE, "QUANTIZE", detail::convert_quantize},
    {BuiltinOperator::RELU, "RELU", detail::convert_relu},
    {BuiltinOperator::RELU6, "RELU6", detail::convert_relu6},
    {BuiltinOperator::RESHAPE, "RESHAPE", detail::convert_reshape},
    {BuiltinOperator::RESIZE_BILINEAR, "RESIZE_BILINEAR", detail::convert_resize_bilinear},
    {BuiltinOperator::RESIZE_NEAREST_NEIGHBOR, "RESIZE_NEAREST_NEIGHBOR", detail::convert_resize_nearest_neighbor},
    {BuiltinOperator::SLICE, "SLICE", detail::convert_slice},
    {BuiltinOperator::SOFTMAX, "SOFTMAX", detail::convert_softmax},
    {BuiltinOperator::SPLIT, "SPLIT", detail::convert_split},
    {BuiltinOperator::SQUEEZE, "SQUEEZE", detail::convert_reshape},
    {BuiltinOperator::STRIDED_SLICE, "STRIDED_SLICE", detail::convert_strided_slice},
    {BuiltinOperator::SUB, "SUB", detail::convert_sub},
    {BuiltinOperator::TANH, "TANH", detail::convert_tanh},
    {BuiltinOperator::TRANSPOSE, "TRANSPOSE", detail::convert_transpose},
    {BuiltinOperator::TRANSPOSE_CONV, "TRANSPOSE_CONV", detail::convert_transpose_conv},
};

constexpr auto operator_names = [] {
  std::array<std::string_view, std::size(operator_table)> names{};
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = operator_table[i].name;
  return names;
}();

const OperatorEntry* find_operator(BuiltinOperator code) {
  for (const OperatorEntry& entry : operator_table)
    if (entry.code == code) return &entry;
  return nullptr;
}

/// The operator an OperatorCode names: the larger of its two code fields (the format moved builtin
/// codes past 127 into a 32-bit field and left the old byte beside it).
BuiltinOperator code_of(const format::OperatorCode& code) {
  return static_cast<BuiltinOperator>(
      std::max<std::int32_t>(code.deprecated_builtin_code(), static_cast<std::int32_t>(code.builtin_code())));
}

bool is_weights_of(BuiltinOperator code, std::size_t input) {
  return input == 1 && (code == BuiltinOperator::CONV_2D || code == BuiltinOperator::DEPTHWISE_CONV_2D ||
                        code == BuiltinOperator::FULLY_CONNECTED || code == BuiltinOperator::TRANSPOSE_CONV);
}

std::string_view name_of(const format::Tensor& tensor) {
  return tensor.name() ? std::string_view(tensor.name()->c_str(), tensor.name()->size()) : std::string_view();
}

/// The kiln info of a tensor: its type (int8 weights with zero points of 0 are QSymmS8, other
/// int8 tensors QAsymmS8; INT64 integers are held as Signed32), shape and quantisation.
Expected<TensorInfo> info_of(const format::Tensor& tensor, bool weights) {
  auto refuse = [&](const auto&... pieces) {
    return Status::error(ErrorCode::Unsupported, "tensor '", name_of(tensor), "': ", pieces...);
  };
  TensorInfo info;
  if (const auto* shape = tensor.shape()) {
    if (shape->size() > TensorShape::max_rank)
      return refuse("has ", shape->size(), " dimensions; kiln holds at most ", TensorShape::max_rank);
    std::vector<std::uint32_t> dims;
    for (std::int32_t d : *shape) {
      if (d < 0) return refuse("has a dimension of ", d);
      dims.push_back(static_cast<std::uint32_t>(d));
    }
    info.shape = TensorShape(std::span<const std::uint32_t>(dims));
    if (!info.shape.valid()) return refuse("has more than ", TensorShape::max_elements, " elements");
  }
  const format::QuantizationParameters* q = tensor.quantization();
  const bool scaled = q && q->scale() && q->scale()->size() > 0;
  switch (tensor.type()) {
    case format::TensorType::FLOAT32: info.type = DataType::Float32; break;
    case format::TensorType::FLOAT16: info.type = DataType::Float16; break;
    case format::TensorType::INT32:
    case format::TensorType::INT64: info.type = DataType::Signed32; break;
    case format::TensorType::BOOL: info.type = DataType::Boolean; break;
    case format::TensorType::UINT8: info.type = DataType::QAsymmU8; break;
    case format::TensorType::INT8: info.type = weights ? DataType::QSymmS8 : DataType::QAsymmS8; break;
    default:
      return refuse("has element type ", static_cast<int>(tensor.type()),
                    " (TensorType); kiln reads FLOAT32, FLOAT16, INT32, INT64, BOOL, UINT8 and INT8");
  }
  if (tensor.sparsity()) return refuse("is sparse; kiln reads dense tensors");
  if (!scaled) {
    if (is_quantized(info.type)) return refuse("is ", to_string(info.type), " without a quantisation scale");
    return info;
  }
  if (!is_quantized(info.type) && info.type != DataType::Signed32) return info;  // a float's min and max: unused
  const auto& scales = *q->scale();
  const auto* zero_points = q->zero_point();
  if (zero_points && zero_points->size() != 1 && zero_points->size() != scales.size())
    return refuse("has ", scales.size(), " scales and ", zero_points->size(), " zero points");
  const std::int64_t zero_point = zero_points && zero_points->size() > 0 ? zero_points->Get(0) : 0;
  if (zero_points)
    for (std::int64_t z : *zero_points)
      if (z != zero_point) return refuse("has zero points that differ by channel; kiln holds one per tensor");
  const QuantizedRange range = quantized_range(info.type);
  if (is_quantized(info.type) && (zero_point < range.lo || zero_point > range.hi))
    return refuse("has zero point ", zero_point, ", outside ", to_string(info.type), "'s range");
  if (info.type == DataType::QSymmS8 && zero_point != 0) info.type = DataType::QAsymmS8;  // not symmetric after all
  info.quantization.scales = Scales(std::vector<float>(scales.begin(), scales.end()));
  info.quantization.offset = static_cast<std::int32_t>(zero_point);
  if (scales.size() > 1) {
    const std::int32_t axis = q->quantized_dimension();
    if (axis < 0 || static_cast<std::size_t>(axis) >= info.shape.rank() || info.shape[axis] != scales.size())
      return refuse("has ", scales.size(), " scales on axis ", axis, " of shape ", info.shape.to_string());
    info.quantization.axis = static_cast<std::uint32_t>(axis);
  }
  if (auto valid = validate(info); !valid) return refuse(valid.message());
  return info;
}

/// `bytes` where FlatBuffers can read scalars in place: the caller's own when they are aligned for
/// them (a file read into a std::vector is), else a copy in aligned memory.
struct AlignedBytes {
  struct Free {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{16}); }
  };
  std::unique_ptr<std::byte[], Free> copy;
  const std::byte* data;
  explicit AlignedBytes(std::span<const std::byte> bytes) : data(bytes.data()) {
    if (reinterpret_cast<std::uintptr_t>(bytes.data()) % 16 == 0 && !bytes.empty()) return;
    copy.reset(static_cast<std::byte*>(::operator new[](std::max<std::size_t>(bytes.size(), 1), std::align_val_t{16})));
    if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
    data = copy.get();
  }
};

#if KILN_TFLITE_MAPS_FILES
/// A file's bytes mapped read-only, its pages faulted in at once: not read into a buffer zeroed
/// first, and page-aligned, so that the importer reads them in place.
class MappedFile {
 public:
  /// The mapping, or nothing where the file cannot be mapped (empty, not a regular file).
  static std::optional<MappedFile> map(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    struct stat status {};
    void* address = MAP_FAILED;
    if (::fstat(fd, &status) == 0 && S_ISREG(status.st_mode) && status.st_size > 0)
      address = ::mmap(nullptr, static_cast<std::size_t>(status.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    ::close(fd);
    if (address == MAP_FAILED) return std::nullopt;
    return MappedFile(static_cast<const std::byte*>(address), static_cast<std::size_t>(status.st_size));
  }
  MappedFile(MappedFile&& other) noexcept : data_(std::exchange(other.data_, nullptr)), size_(other.size_) {}
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
  }
  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  MappedFile(const std::byte* data, std::size_t size) : data_(data), size_(size) {}
  const std::byte* data_;
  std::size_t size_;
};
#endif

}  // namespace

namespace detail {

std::string Importer::describe() const { return str_cat("operator ", op_index_, " (", op_name_, ")"); }

std::string Importer::layer_name(std::string_view suffix) const {
  std::string name;
  if (op_->outputs() && op_->outputs()->size() > 0) name = name_of(tensor_at(tensor_index(op_->outputs(), 0)));
  if (name.empty()) name = str_cat(op_name_, "_", op_index_);
  if (!suffix.empty()) name += str_cat("/", suffix);
  return name;
}

std::size_t Importer::num_inputs() const { return op_->inputs() ? op_->inputs()->size() : 0; }

bool Importer::has_input(std::size_t i) const {
  return i < num_inputs() && op_->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i)) >= 0;
}

Expected<std::span<const std::byte>> Importer::buffer_of(const format::Tensor& tensor) const {
  const auto* buffers = model_.buffers();
  if (!buffers || tensor.buffer() >= buffers->size())
    return Status::error(ErrorCode::InvalidNetwork, "tensor '", name_of(tensor), "' reads buffer ", tensor.buffer(),
                         "; the model has ", buffers ? buffers->size() : 0);
  const format::Buffer& buffer = *buffers->Get(tensor.buffer());
  if (buffer.offset() > 1) {  // the data follows the FlatBuffer in the file
    if (buffer.offset() > file_.size() || buffer.size() > file_.size() - buffer.offset())
      return Status::error(ErrorCode::InvalidNetwork, "tensor '", name_of(tensor), "' reads ", buffer.size(),
                           " bytes at offset ", buffer.offset(), ", past the end of the ", file_.size(), "-byte file");
    return file_.subspan(buffer.offset(), buffer.size());
  }
  if (!buffer.data()) return std::span<const std::byte>();
  return std::as_bytes(std::span(buffer.data()->data(), buffer.data()->size()));
}

Status Importer::read_tensors() {
  const auto& tensors = *graph_->tensors();
  infos_.resize(tensors.size());
  held_.assign(tensors.size(), std::nullopt);
  for (flatbuffers::uoffset_t t = 0; t < tensors.size(); ++t) {
    auto info = info_of(*tensors.Get(t), is_weights_[t]);
    if (!info) return info.status();
    infos_[t] = std::move(*info);
  }
  return Status::ok();
}

Expected<Held> Importer::input(std::size_t i) {
  if (!has_input(i)) return invalid("input ", i, " is left out");
  const std::size_t t = tensor_index(op_->inputs(), i);
  if (held_[t]) return *held_[t];
  const format::Tensor& tensor = tensor_at(t);
  auto data = buffer_of(tensor);
  if (!data) return data.status().with_context(describe());
  const TensorInfo& info = infos_[t];
  if (data->empty() && info.num_elements() != 0)
    return invalid("input ", i, " (tensor '", name_of(tensor),
                   "') is neither a model input, a constant, nor the output of an earlier operator");
  std::vector<std::byte> bytes;
  if (tensor.type() == format::TensorType::INT64) {  // held as Signed32
    if (data->size() != info.num_elements() * 8)
      return invalid("the buffer of tensor '", name_of(tensor), "' holds ", data->size(), " bytes; its shape needs ",
                     info.num_elements() * 8);
    for (std::size_t e = 0; e < info.num_elements(); ++e) {
      std::int64_t value;
      std::memcpy(&value, data->data() + e * 8, 8);
      if (value < std::numeric_limits<std::int32_t>::min() || value > std::numeric_limits<std::int32_t>::max())
        return error("tensor '", name_of(tensor), "' holds ", value, ", beyond the 32-bit integers kiln holds");
      const auto narrow = static_cast<std::int32_t>(value);
      const auto* p = reinterpret_cast<const std::byte*>(&narrow);
      bytes.insert(bytes.end(), p, p + 4);
    }
  } else {
    if (data->size() != info.num_bytes())
      return invalid("the buffer of tensor '", name_of(tensor), "' holds ", data->size(), " bytes; ", info.to_string(),
                     " needs ", info.num_bytes());
    bytes.assign(data->begin(), data->end());
  }
  const OutputSlot slot = network_->adopt_constant(info, std::move(bytes), name_of(tensor));
  return *(held_[t] = Held{slot, info});
}

std::optional<std::span<const std::byte>> Importer::constant_bytes(std::size_t i) const {
  if (!has_input(i)) return std::nullopt;
  auto data = buffer_of(tensor_at(tensor_index(op_->inputs(), i)));
  if (!data || data->empty()) return std::nullopt;
  return *data;
}

Expected<std::vector<std::int64_t>> Importer::constant_ints(std::size_t i, std::string_view role) const {
  if (!has_input(i)) return invalid("has no ", role, " (input ", i, ")");
  const std::size_t t = tensor_index(op_->inputs(), i);
  const format::Tensor& tensor = tensor_at(t);
  auto data = buffer_of(tensor);
  if (!data) return data.status().with_context(describe());
  const std::size_t width = tensor.type() == format::TensorType::INT64 ? 8 : 4;
  if (tensor.type() != format::TensorType::INT32 && tensor.type() != format::TensorType::INT64)
    return error("takes its ", role, " as INT32 or INT64; tensor '", name_of(tensor), "' is ", infos_[t].to_string());
  if (data->empty() && infos_[t].num_elements() != 0)
    return error("needs its ", role, " (tensor '", name_of(tensor), "') constant");
  if (data->size() != infos_[t].num_elements() * width)
    return invalid("the buffer of tensor '", name_of(tensor), "' holds ", data->size(), " bytes; its shape needs ",
                   infos_[t].num_elements() * width);
  std::vector<std::int64_t> values(infos_[t].num_elements());
  for (std::size_t e = 0; e < values.size(); ++e) {
    if (width == 8) {
      std::memcpy(&values[e], data->data() + e * 8, 8);
    } else {
      std::int32_t value;
      std::memcpy(&value, data->data() + e * 4, 4);
      values[e] = value;
    }
  }
  return values;
}

Status Importer::set_output(std::size_t i, const Held& held) {
  const std::size_t t = tensor_index(op_->outputs(), i);
  const TensorInfo& file = infos_[t];
  if (held_[t]) return invalid("output ", i, " is also written by an earlier operator");
  if (held.info.type != file.type)
    return invalid("kiln computes output ", i, " as ", held.info.to_string(), "; the model says ", file.to_string());
  Held result = held;
  if (held.info.shape != file.shape) {
    if (held.info.num_elements() != file.num_elements())
      return invalid("kiln computes output ", i, " as ", held.info.to_string(), "; the model says ", file.to_string());
    ops::Reshape::Params reshape;
    for (std::size_t d = 0; d < file.shape.rank(); ++d) reshape.shape.push_back(file.shape[d]);
    auto reshaped = add<ops::Reshape>(reshape, std::span(&result, 1), false, "reshape");
    if (!reshaped) return reshaped.status();
    result = reshaped->front();
  }
  if (result.info.quantization != file.quantization) {  // a layer that keeps its input's scale, given another
    if (i != 0) return error("output ", i, " has another quantisation than kiln's layer gives it");
    auto requantized = add<ops::Requantize>({}, std::span(&result, 1), true, "requantize");
    if (!requantized) return requantized.status();
    result = requantized->front();
  }
  held_[t] = result;
  return Status::ok();
}

Expected<std::vector<Held>> Importer::dequantized(std::span<const Held> inputs) {
  std::vector<Held> floats;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& info = inputs[i].info;
    if (!is_quantized(info.type) && !(info.type == DataType::Signed32 && !info.quantization.scales.empty())) {
      floats.push_back(inputs[i]);
      continue;
    }
    auto dequantized = add<ops::Dequantize>({}, std::span(&inputs[i], 1), false, str_cat("dequantize_", i));
    if (!dequantized) return dequantized.status();
    floats.push_back(dequantized->front());
  }
  return floats;
}

Status Importer::set_float_output(const Held& result) {
  if (!quantized_output()) return set_output(0, result);
  auto quantized = add<ops::Quantize>({}, std::span(&result, 1), true, "quantize");
  if (!quantized) return quantized.status();
  return set_output(0, quantized->front());
}

Expected<std::optional<ops::Activation::Params>> Importer::fused(format::ActivationFunctionType activation) const {
  using Function = ops::ActivationFunction;
  switch (activation) {
    case format::ActivationFunctionType::NONE: return std::optional<ops::Activation::Params>();
    case format::ActivationFunctionType::RELU: return std::optional(ops::Activation::Params{Function::ReLU});
    case format::ActivationFunctionType::RELU6:
      return std::optional(ops::Activation::Params{Function::BoundedReLU, 6.0f, 0.0f});
    case format::ActivationFunctionType::RELU_N1_TO_1:
      return std::optional(ops::Activation::Params{Function::BoundedReLU, 1.0f, -1.0f});
    default:
      return error("fuses activation ", static_cast<int>(activation),
                   " (ActivationFunctionType); kiln fuses NONE, RELU, RELU6 and RELU_N1_TO_1");
  }
}

Expected<Held> Importer::activated(const Held& held, format::ActivationFunctionType activation) {
  auto params = fused(activation);
  if (!params) return params.status();
  if (!*params) return held;
  auto out = add<ops::Activation>(**params, std::span(&held, 1), false, "activation");
  if (!out) return out.status();
  return out->front();
}

Status Importer::check_operator_tensors() const {
  const std::size_t count = graph_->tensors()->size();
  if (!op_->outputs() || op_->outputs()->size() == 0) return invalid("has no outputs");
  for (const auto* list : {op_->inputs(), op_->outputs()})
    if (list)
      for (std::int32_t t : *list)
        if (t < -1 || t >= static_cast<std::int64_t>(count) || (t == -1 && list == op_->outputs()))
          return invalid("reads or writes tensor ", t, "; the subgraph has ", count);
  return Status::ok();
}

std::vector<bool> Importer::used_operators() const {
  const auto* codes = model_.operator_codes();
  const auto* operators = graph_->operators();
  const std::size_t count = operators ? operators->size() : 0;
  std::vector<bool> used(count, false), read(graph_->tensors()->size(), false);
  auto mark = [&](const flatbuffers::Vector<std::int32_t>* list, std::size_t how_many) {
    for (flatbuffers::uoffset_t i = 0; list && i < std::min<std::size_t>(list->size(), how_many); ++i)
      if (const std::int32_t t = list->Get(i); t >= 0 && static_cast<std::size_t>(t) < read.size())
        read[static_cast<std::size_t>(t)] = true;
  };
  mark(graph_->outputs(), std::numeric_limits<std::size_t>::max());
  for (std::size_t k = count; k-- > 0;) {
    const format::Operator& op = *operators->Get(static_cast<flatbuffers::uoffset_t>(k));
    if (op.outputs())
      for (std::int32_t t : *op.outputs())
        used[k] = used[k] || (t >= 0 && static_cast<std::size_t>(t) < read.size() && read[static_cast<std::size_t>(t)]);
    if (!used[k]) continue;
    // RESHAPE's second input, the new shape, is not read: the output tensor's shape is the one kiln makes.
    const bool reshape = codes && op.opcode_index() < codes->size() &&
                         code_of(*codes->Get(op.opcode_index())) == BuiltinOperator::RESHAPE;
    mark(op.inputs(), reshape ? 1 : std::numeric_limits<std::size_t>::max());
  }
  return used;
}

Status Importer::read(ImportedModel& imported) {
  const auto* subgraphs = model_.subgraphs();
  if (!subgraphs || subgraphs->size() == 0)
    return Status::error(ErrorCode::InvalidNetwork, "the model has no subgraph");
  graph_ = subgraphs->Get(0);
  if (!graph_->tensors()) return Status::error(ErrorCode::InvalidNetwork, "the model's subgraph has no tensors");
  network_ = &imported.network;
  network_->set_arithmetic(QuantizedArithmetic::TfLite);  // LiteRT's integers, bit for bit (decision 0023)
  imported.opset = model_.version();
  imported.opset_name = "TensorFlow Lite schema";
  if (model_.description()) imported.producer = model_.description()->str();
  const auto* codes = model_.operator_codes();
  const auto* operators = graph_->operators();
  const std::size_t num_tensors = graph_->tensors()->size();

  // Which tensors are read as weights: their int8 type is QSymmS8 when their zero points are 0.
  is_weights_.assign(num_tensors, false);
  if (operators)
    for (const format::Operator* op : *operators)
      if (codes && op->opcode_index() < codes->size() && op->inputs())
        for (flatbuffers::uoffset_t i = 0; i < op->inputs()->size(); ++i) {
          const std::int32_t t = op->inputs()->Get(i);
          if (t >= 0 && static_cast<std::size_t>(t) < num_tensors &&
              is_weights_of(code_of(*codes->Get(op->opcode_index())), i))
            is_weights_[static_cast<std::size_t>(t)] = true;
        }
  if (auto s = read_tensors(); !s) return s;

  auto graph_tensor = [&](std::int32_t t, std::string_view what, std::size_t i) -> Expected<std::size_t> {
    if (t < 0 || static_cast<std::size_t>(t) >= num_tensors)
      return Status::error(ErrorCode::InvalidNetwork, "model ", what, " ", i, " is tensor ", t, "; the subgraph has ",
                           num_tensors);
    return static_cast<std::size_t>(t);
  };
  if (graph_->inputs())
    for (flatbuffers::uoffset_t i = 0; i < graph_->inputs()->size(); ++i) {
      auto t = graph_tensor(graph_->inputs()->Get(i), "input", i);
      if (!t) return t.status();
      const std::string name(name_of(*graph_->tensors()->Get(static_cast<flatbuffers::uoffset_t>(*t))));
      const OutputSlot slot = network_->add_input(static_cast<BindingId>(i), infos_[*t], name);
      held_[*t] = Held{slot, infos_[*t]};
      imported.inputs.push_back({name, static_cast<BindingId>(i), infos_[*t]});
    }

  const std::vector<bool> used = used_operators();
  for (std::size_t k = 0; operators && k < operators->size(); ++k) {
    if (!used[k]) {
      ++imported.num_unused;
      continue;
    }
    op_ = operators->Get(static_cast<flatbuffers::uoffset_t>(k));
    op_index_ = k;
    op_name_ = "?";
    if (!codes || op_->opcode_index() >= codes->size())
      return invalid("has operator code index ", op_->opcode_index(), "; the model has ", codes ? codes->size() : 0);
    const format::OperatorCode& code = *codes->Get(op_->opcode_index());
    const BuiltinOperator builtin = code_of(code);
    const OperatorEntry* entry = find_operator(builtin);
    if (builtin == static_cast<BuiltinOperator>(32))  // CUSTOM
      return error("is the custom operator '", code.custom_code() ? code.custom_code()->str() : "",
                   "'; kiln reads builtin operators");
    if (!entry)
      return Status::error(ErrorCode::Unsupported, "operator ", k, ": builtin operator ", static_cast<int>(builtin),
                           " (BuiltinOperator in TensorFlow Lite's schema.fbs) is not one kiln reads; it reads ",
                           operator_names.size(), " (kiln::tflite::supported_ops())");
    op_name_ = entry->name;
    if (auto s = check_operator_tensors(); !s) return s;
    if (auto s = entry->convert(*this); !s) return s;
    for (std::size_t o = 0; o < op_->outputs()->size(); ++o)
      if (!held_[tensor_index(op_->outputs(), o)]) return error("output ", o, " was not made");
  }
  imported.num_nodes = operators ? operators->size() : 0;

  if (graph_->outputs())
    for (flatbuffers::uoffset_t i = 0; i < graph_->outputs()->size(); ++i) {
      auto t = graph_tensor(graph_->outputs()->Get(i), "output", i);
      if (!t) return t.status();
      const std::string name(name_of(*graph_->tensors()->Get(static_cast<flatbuffers::uoffset_t>(*t))));
      if (!held_[*t])
        return Status::error(ErrorCode::InvalidNetwork, "model output ", i, " (tensor '", name,
                             "') is computed by no operator");
      network_->add_output(static_cast<BindingId>(i), held_[*t]->slot, name);
      imported.outputs.push_back({name, static_cast<BindingId>(i), infos_[*t]});
    }
  return network_->infer_shapes();
}

}  // namespace detail

Expected<ImportedModel> import_model(std::span<const std::byte> bytes) {
  const AlignedBytes aligned(bytes);
  const auto* data = reinterpret_cast<const std::uint8_t*>(aligned.data);
  flatbuffers::Verifier::Options options;
  options.max_tables = 1u << 24;  // a large model has millions of tables no more than it has bytes
  flatbuffers::Verifier verifier(data, bytes.size(), options);
  if (bytes.size() < 8 || !flatbuffers::BufferHasIdentifier(data, format::ModelIdentifier()))
    return Status::error(ErrorCode::InvalidNetwork, "not a TensorFlow Lite model (no \"TFL3\" identifier in its ",
                         bytes.size(), " bytes)");
  if (!format::VerifyModelBuffer(verifier))
    return Status::error(ErrorCode::InvalidNetwork,
                         "the TensorFlow Lite model does not verify (a truncated or corrupt file: FlatBuffers' "
                         "verifier found an offset, size or table out of bounds)");
  ImportedModel imported;
  detail::Importer importer(*format::GetModel(data), std::span(aligned.data, bytes.size()));
  if (auto s = importer.read(imported); !s) return s;
  return imported;
}

Expected<ImportedModel> import_file(const std::string& path) {
  std::span<const std::byte> bytes;
#if KILN_TFLITE_MAPS_FILES
  const auto mapped = MappedFile::map(path);
  if (mapped) bytes = mapped->bytes();
#endif
  std::vector<std::byte> read;  // where the file cannot be mapped
  if (bytes.empty()) {
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    if (!file) return Status::error(ErrorCode::InvalidArgument, "cannot open '", path, "'");
    const std::streamoff size = file.tellg();
    read.resize(static_cast<std::size_t>(std::max<std::streamoff>(size, 0)));
    file.seekg(0);
    if (!file.read(reinterpret_cast<char*>(read.data()), static_cast<std::streamsize>(read.size())))
      return Status::error(ErrorCode::InvalidArgument, "cannot read '", path, "'");
    bytes = read;
  }
  auto imported = import_model(bytes);
  if (!imported) return imported.status().with_context(path);
  return imported;
}

std::span<const std::string_view> supported_ops() { return operator_names; }

}  // namespace kiln::tflite
