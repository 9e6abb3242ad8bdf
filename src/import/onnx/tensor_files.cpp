// SPDX-License-Identifier: Apache-2.0
// Tensors in files: ONNX TensorProto (initializers, Constant nodes, the test data's .pb files) and
// NumPy .npy arrays, read into kiln's types with every size checked before it is trusted.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "importer.hpp"
#include "kiln/core/half.hpp"

namespace kiln::onnx {
namespace detail {
namespace {

constexpr std::uint64_t max_constant_elements = std::uint64_t{1} << 31;

std::size_t onnx_element_size(std::int32_t type) {
  switch (type) {
    case ::onnx::TensorProto::FLOAT:
    case ::onnx::TensorProto::INT32:
    case ::onnx::TensorProto::UINT32: return 4;
    case ::onnx::TensorProto::DOUBLE:
    case ::onnx::TensorProto::INT64:
    case ::onnx::TensorProto::UINT64: return 8;
    case ::onnx::TensorProto::FLOAT16:
    case ::onnx::TensorProto::BFLOAT16:
    case ::onnx::TensorProto::INT16:
    case ::onnx::TensorProto::UINT16: return 2;
    case ::onnx::TensorProto::INT8:
    case ::onnx::TensorProto::UINT8:
    case ::onnx::TensorProto::BOOL: return 1;
    default: return 0;
  }
}

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// One element of little-endian raw data, widened.
void append_raw(ConstValue& out, std::int32_t type, const char* p) {
  switch (type) {
    case ::onnx::TensorProto::FLOAT: out.floats.push_back(load<float>(p)); break;
    case ::onnx::TensorProto::DOUBLE: out.floats.push_back(static_cast<float>(load<double>(p))); break;
    case ::onnx::TensorProto::FLOAT16: out.floats.push_back(half_to_float(load<std::uint16_t>(p))); break;
    case ::onnx::TensorProto::BFLOAT16:
      out.floats.push_back(std::bit_cast<float>(std::uint32_t{load<std::uint16_t>(p)} << 16));
      break;
    case ::onnx::TensorProto::INT64: out.ints.push_back(load<std::int64_t>(p)); break;
    case ::onnx::TensorProto::UINT64:
      out.ints.push_back(static_cast<std::int64_t>(
          std::min<std::uint64_t>(load<std::uint64_t>(p), std::numeric_limits<std::int64_t>::max())));
      break;
    case ::onnx::TensorProto::INT32: out.ints.push_back(load<std::int32_t>(p)); break;
    case ::onnx::TensorProto::UINT32: out.ints.push_back(load<std::uint32_t>(p)); break;
    case ::onnx::TensorProto::INT16: out.ints.push_back(load<std::int16_t>(p)); break;
    case ::onnx::TensorProto::UINT16: out.ints.push_back(load<std::uint16_t>(p)); break;
    case ::onnx::TensorProto::INT8: out.ints.push_back(load<std::int8_t>(p)); break;
    case ::onnx::TensorProto::UINT8: out.ints.push_back(load<std::uint8_t>(p)); break;
    case ::onnx::TensorProto::BOOL: out.ints.push_back(load<std::uint8_t>(p) != 0 ? 1 : 0); break;
    default: break;
  }
}

bool is_float_type(std::int32_t type) {
  return type == ::onnx::TensorProto::FLOAT || type == ::onnx::TensorProto::DOUBLE ||
         type == ::onnx::TensorProto::FLOAT16 || type == ::onnx::TensorProto::BFLOAT16;
}

}  // namespace

Expected<std::vector<char>> read_whole_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return Status::error(ErrorCode::NotFound, "cannot open '", path, "'");
  const std::streamoff size = file.tellg();
  if (size < 0) return Status::error(ErrorCode::InvalidArgument, "cannot tell the size of '", path, "'");
  std::vector<char> chars(static_cast<std::size_t>(size));
  file.seekg(0);
  if (!file.read(chars.data(), size)) return Status::error(ErrorCode::InvalidArgument, "cannot read '", path, "'");
  return chars;
}

std::string_view onnx_type_name(std::int32_t type) {
  if (::onnx::TensorProto::DataType_IsValid(type))
    return ::onnx::TensorProto::DataType_Name(static_cast<::onnx::TensorProto::DataType>(type));
  return "an unknown type";
}

Expected<DataType> kiln_type(std::int32_t type) {
  if (is_float_type(type)) return DataType::Float32;
  if (type == ::onnx::TensorProto::BOOL) return DataType::Boolean;
  if (onnx_element_size(type) != 0) return DataType::Signed32;
  return Status::error(ErrorCode::Unsupported, "element type ", onnx_type_name(type), " is not supported");
}

std::optional<DataType> eight_bit_type(std::int64_t onnx_type) {
  if (onnx_type == ::onnx::TensorProto::UINT8) return DataType::QAsymmU8;
  if (onnx_type == ::onnx::TensorProto::INT8) return DataType::QAsymmS8;
  return std::nullopt;
}

Expected<TensorInfo> boundary_info(std::int32_t onnx_type, TensorShape shape) {
  if (const auto eight_bit = eight_bit_type(onnx_type)) return TensorInfo{shape, *eight_bit, raw_integers()};
  auto type = kiln_type(onnx_type);
  if (!type) return type.status();
  return TensorInfo{shape, *type, {}};
}

Expected<ConstValue> read_constant(const ::onnx::TensorProto& tensor) {
  const auto context = kiln::detail::str_cat("tensor '", tensor.name(), "'");
  auto fail = [&](const auto&... pieces) -> Status {
    return Status::error(ErrorCode::InvalidArgument, context, ": ", pieces...);
  };
  if (tensor.data_location() == ::onnx::TensorProto::EXTERNAL)
    return Status::error(ErrorCode::Unsupported, context, ": external data is not supported");
  const std::int32_t type = tensor.data_type();
  const std::size_t element_size = onnx_element_size(type);
  if (element_size == 0)
    return Status::error(ErrorCode::Unsupported, context, ": element type ", onnx_type_name(type), " is not supported");
  ConstValue out;
  out.onnx_type = type;
  out.is_float = is_float_type(type);
  out.is_bool = type == ::onnx::TensorProto::BOOL;
  std::uint64_t count = 1;
  for (std::int64_t d : tensor.dims()) {
    if (d < 0) return fail("negative dimension ", d);
    if (d != 0 && count > max_constant_elements / static_cast<std::uint64_t>(d))
      return fail("more than ", max_constant_elements, " elements");
    count *= static_cast<std::uint64_t>(d);
    out.dims.push_back(d);
  }
  if (out.dims.size() > TensorShape::max_rank)
    return fail(out.dims.size(), " dimensions; kiln supports at most ", TensorShape::max_rank);
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    if (raw.size() != count * element_size)
      return fail("raw data has ", raw.size(), " bytes; ", count, " elements of ", onnx_type_name(type), " need ",
                  count * element_size);
    if (type == ::onnx::TensorProto::FLOAT) {  // nearly every weight: one copy, not a call per element
      out.floats.resize(count);
      if (count != 0) std::memcpy(out.floats.data(), raw.data(), raw.size());  // no null pointers to memcpy
      return out;
    }
    for (std::size_t i = 0; i < count; ++i) append_raw(out, type, raw.data() + i * element_size);
    return out;
  }
  auto check = [&](int available) -> Status {
    if (static_cast<std::uint64_t>(available) != count)
      return fail("has ", available, " values for ", count, " elements");
    return Status::ok();
  };
  switch (type) {
    case ::onnx::TensorProto::FLOAT:
      if (auto s = check(tensor.float_data_size()); !s) return s;
      out.floats.assign(tensor.float_data().begin(), tensor.float_data().end());
      break;
    case ::onnx::TensorProto::DOUBLE:
      if (auto s = check(tensor.double_data_size()); !s) return s;
      for (double v : tensor.double_data()) out.floats.push_back(static_cast<float>(v));
      break;
    case ::onnx::TensorProto::INT64:
      if (auto s = check(tensor.int64_data_size()); !s) return s;
      out.ints.assign(tensor.int64_data().begin(), tensor.int64_data().end());
      break;
    case ::onnx::TensorProto::UINT32:
    case ::onnx::TensorProto::UINT64:
      if (auto s = check(tensor.uint64_data_size()); !s) return s;
      for (std::uint64_t v : tensor.uint64_data())
        out.ints.push_back(
            static_cast<std::int64_t>(std::min<std::uint64_t>(v, std::numeric_limits<std::int64_t>::max())));
      break;
    case ::onnx::TensorProto::FLOAT16:
      if (auto s = check(tensor.int32_data_size()); !s) return s;
      for (std::int32_t v : tensor.int32_data()) out.floats.push_back(half_to_float(static_cast<std::uint16_t>(v)));
      break;
    case ::onnx::TensorProto::BFLOAT16:
      if (auto s = check(tensor.int32_data_size()); !s) return s;
      for (std::int32_t v : tensor.int32_data())
        out.floats.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(v & 0xffff) << 16));
      break;
    default:  // the integer types of 32 bits and less, and bool
      if (auto s = check(tensor.int32_data_size()); !s) return s;
      for (std::int32_t v : tensor.int32_data()) out.ints.push_back(out.is_bool ? (v != 0 ? 1 : 0) : v);
      break;
  }
  return out;
}

namespace {

// `value`, read as ONNX type `onnx_type`, as a host tensor (boundary_info's type).
Expected<HostTensor> to_host(const ConstValue& value, std::int32_t onnx_type, std::string name) {
  auto dims = to_dims(value.dims);
  if (!dims) return dims.status();
  auto info = boundary_info(onnx_type, TensorShape(std::span<const std::uint32_t>(*dims)));
  if (!info) return info.status();
  HostTensor out{std::move(name), std::move(*info), {}};
  if (auto valid = kiln::validate(out.info); !valid) return valid;
  const DataType type = out.info.type;
  out.data.resize(out.info.num_bytes());
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (type == DataType::Float32) {
      const float v = value.float_at(i);
      std::memcpy(out.data.data() + 4 * i, &v, 4);
    } else if (type == DataType::Boolean) {
      out.data[i] = std::byte{value.int_at(i) != 0 ? std::uint8_t{1} : std::uint8_t{0}};
    } else if (is_quantized(type)) {  // read from uint8 or int8, so in range
      out.data[i] = static_cast<std::byte>(static_cast<std::uint8_t>(value.int_at(i)));
    } else {
      const std::int64_t v = value.int_at(i);
      if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
        return Status::error(ErrorCode::Unsupported, "integer value ", v, " does not fit kiln's Signed32");
      const auto narrow = static_cast<std::int32_t>(v);
      std::memcpy(out.data.data() + 4 * i, &narrow, 4);
    }
  }
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// NumPy's format: "\x93NUMPY", version, header length, a Python dict literal, then the data.
Expected<HostTensor> read_npy(std::span<const char> bytes, const std::string& path) {
  auto fail = [&](const auto&... pieces) -> Status {
    return Status::error(ErrorCode::InvalidArgument, "'", path, "' is not a .npy file kiln reads: ", pieces...);
  };
  if (bytes.size() < 10 || std::string_view(bytes.data(), 6) != "\x93NUMPY") return fail("no NumPy magic");
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_length, offset;
  if (major == 1) {
    header_length = static_cast<unsigned char>(bytes[8]) | (std::size_t{static_cast<unsigned char>(bytes[9])} << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return fail("truncated header");
    header_length = 0;
    for (int i = 3; i >= 0; --i) header_length = (header_length << 8) | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  } else {
    return fail("format version ", major);
  }
  if (header_length > bytes.size() - offset) return fail("truncated header");
  const std::string_view header(bytes.data() + offset, header_length);
  offset += header_length;

  auto field = [&](std::string_view key) -> std::string_view {
    const auto at = header.find(kiln::detail::str_cat("'", key, "'"));
    if (at == std::string_view::npos) return {};
    auto rest = header.substr(at + key.size() + 2);
    const auto colon = rest.find(':');
    return colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
  };
  std::string_view descr = field("descr");
  const auto quote = descr.find('\'');
  if (quote == std::string_view::npos) return fail("no 'descr'");
  descr = descr.substr(quote + 1);
  descr = descr.substr(0, descr.find('\''));
  if (field("fortran_order").find("True") < field("fortran_order").find(',')) return fail("Fortran order");
  std::string_view shape = field("shape");
  if (shape.find('(') == std::string_view::npos || shape.find(')') == std::string_view::npos) return fail("no 'shape'");
  shape = shape.substr(shape.find('(') + 1, shape.find(')') - shape.find('(') - 1);

  ConstValue value;
  std::uint64_t count = 1;
  for (std::size_t i = 0; i < shape.size();) {
    while (i < shape.size() && (shape[i] == ' ' || shape[i] == ',')) ++i;
    if (i == shape.size()) break;
    std::int64_t dim = 0;
    std::size_t digits = 0;
    for (; i < shape.size() && shape[i] >= '0' && shape[i] <= '9'; ++i, ++digits) {
      if (dim > (std::int64_t{1} << 40)) return fail("dimension too large");
      dim = dim * 10 + (shape[i] - '0');
    }
    if (digits == 0) return fail("bad shape");
    if (dim != 0 && count > max_constant_elements / static_cast<std::uint64_t>(dim)) return fail("too many elements");
    count *= static_cast<std::uint64_t>(dim);
    value.dims.push_back(dim);
  }
  if (value.dims.size() > TensorShape::max_rank) return fail(value.dims.size(), " dimensions");

  std::int32_t onnx_type;
  if (descr == "<f4")
    onnx_type = ::onnx::TensorProto::FLOAT;
  else if (descr == "<f8")
    onnx_type = ::onnx::TensorProto::DOUBLE;
  else if (descr == "<f2")
    onnx_type = ::onnx::TensorProto::FLOAT16;
  else if (descr == "<i8")
    onnx_type = ::onnx::TensorProto::INT64;
  else if (descr == "<i4")
    onnx_type = ::onnx::TensorProto::INT32;
  else if (descr == "|i1")
    onnx_type = ::onnx::TensorProto::INT8;
  else if (descr == "|u1")
    onnx_type = ::onnx::TensorProto::UINT8;
  else if (descr == "|b1")
    onnx_type = ::onnx::TensorProto::BOOL;
  else
    return fail("element type '", descr, "'");
  const std::size_t element_size = onnx_element_size(onnx_type);
  if (bytes.size() - offset != count * element_size)
    return fail("data has ", bytes.size() - offset, " bytes, the header says ", count * element_size);
  value.is_float = is_float_type(onnx_type);
  value.is_bool = onnx_type == ::onnx::TensorProto::BOOL;
  for (std::size_t i = 0; i < count; ++i) append_raw(value, onnx_type, bytes.data() + offset + i * element_size);
  return to_host(value, onnx_type, {});
}

// How a host tensor is written: its ONNX element type (0 for a type kiln does not write) and NumPy's
// name for it.
struct WrittenType {
  std::int32_t onnx = 0;
  const char* npy = "";
};
WrittenType written_type(DataType type) {
  switch (type) {
    case DataType::Float32: return {::onnx::TensorProto::FLOAT, "<f4"};
    case DataType::Signed32: return {::onnx::TensorProto::INT32, "<i4"};
    case DataType::Boolean: return {::onnx::TensorProto::BOOL, "|b1"};
    case DataType::QAsymmU8: return {::onnx::TensorProto::UINT8, "|u1"};
    case DataType::QAsymmS8:
    case DataType::QSymmS8: return {::onnx::TensorProto::INT8, "|i1"};
    default: return {};
  }
}

std::string npy_bytes(const HostTensor& tensor) {
  const char* descr = written_type(tensor.info.type).npy;
  std::string shape;
  for (std::size_t d = 0; d < tensor.info.rank(); ++d)
    shape += kiln::detail::str_cat(d == 0 ? "" : ", ", tensor.info.shape[d]);
  if (tensor.info.rank() == 1) shape += ',';  // a Python 1-tuple
  std::string header =
      kiln::detail::str_cat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (", shape, "), }");
  header.append(63 - (10 + header.size()) % 64, ' ');  // the whole header, newline included, is a multiple of 64
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  out.append(reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size());
  return out;
}

}  // namespace
}  // namespace detail

Expected<HostTensor> read_tensor_proto(std::span<const std::byte> bytes) {
  ::onnx::TensorProto proto;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return Status::error(ErrorCode::InvalidArgument, "the data is not an ONNX TensorProto");
  auto value = detail::read_constant(proto);
  if (!value) return value.status();
  return detail::to_host(*value, proto.data_type(), proto.name());
}

Expected<HostTensor> read_tensor_file(const std::string& path) {
  auto bytes = detail::read_whole_file(path);
  if (!bytes) return bytes.status();
  if (detail::ends_with(path, ".npy")) return detail::read_npy(*bytes, path);
  auto tensor = read_tensor_proto(std::as_bytes(std::span<const char>(*bytes)));
  if (!tensor) return tensor.status().with_context(path);
  return tensor;
}

Status write_tensor_file(const std::string& path, const HostTensor& tensor) {
  if (tensor.data.size() != tensor.info.num_bytes())
    return Status::error(ErrorCode::InvalidArgument, "tensor '", tensor.name, "' has ", tensor.data.size(),
                         " bytes of data for ", tensor.info.to_string());
  const std::int32_t onnx_type = detail::written_type(tensor.info.type).onnx;
  if (onnx_type == 0)
    return Status::error(ErrorCode::Unsupported, "cannot write ", to_string(tensor.info.type), " tensors");
  std::string bytes;
  if (detail::ends_with(path, ".npy")) {
    bytes = detail::npy_bytes(tensor);
  } else {
    ::onnx::TensorProto proto;
    proto.set_name(tensor.name);
    for (std::size_t d = 0; d < tensor.info.rank(); ++d) proto.add_dims(tensor.info.shape[d]);
    proto.set_data_type(onnx_type);
    proto.set_raw_data(reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size());
    bytes = proto.SerializeAsString();
  }
  std::ofstream file(path, std::ios::binary);
  if (!file || !file.write(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    return Status::error(ErrorCode::InvalidArgument, "cannot write '", path, "'");
  return Status::ok();
}

Expected<TestDataSet> read_test_data_set(const std::string& dir) {
  TestDataSet set;
  for (auto [prefix, list] : {std::pair{"input_", &set.inputs}, std::pair{"output_", &set.outputs}})
    for (std::size_t i = 0;; ++i) {
      const auto path = std::filesystem::path(dir) / kiln::detail::str_cat(prefix, i, ".pb");
      std::error_code error;
      if (!std::filesystem::exists(path, error)) break;
      auto tensor = read_tensor_file(path.string());
      if (!tensor) return tensor.status();
      list->push_back(std::move(*tensor));
    }
  if (set.outputs.empty()) return Status::error(ErrorCode::NotFound, "'", dir, "' has no output_0.pb");
  return set;
}

Comparison compare(const HostTensor& actual, const HostTensor& expected, double rtol, double atol) {
  Comparison c;
  // Integers compare by value: a file holds ONNX's uint8 and int8 as Signed32, kiln as quantised types.
  auto is_integer = [](DataType type) { return type == DataType::Signed32 || is_quantized(type); };
  const bool comparable = actual.info.type == expected.info.type
                              ? actual.info == expected.info || is_quantized(actual.info.type)
                              : is_integer(actual.info.type) && is_integer(expected.info.type);
  if (!comparable || actual.info.shape != expected.info.shape || actual.data.size() != actual.info.num_bytes() ||
      expected.data.size() != expected.info.num_bytes()) {
    c.same_info = false;
    c.mismatches = expected.info.num_elements();
    return c;
  }
  auto value = [](const HostTensor& t, std::size_t i) -> double {
    switch (t.info.type) {
      case DataType::Float32: {
        float v;
        std::memcpy(&v, t.data.data() + 4 * i, 4);
        return v;
      }
      case DataType::Signed32: {
        std::int32_t v;
        std::memcpy(&v, t.data.data() + 4 * i, 4);
        return v;
      }
      case DataType::QAsymmS8:
      case DataType::QSymmS8: return static_cast<std::int8_t>(std::to_integer<std::uint8_t>(t.data[i]));
      default: return std::to_integer<std::uint8_t>(t.data[i]);
    }
  };
  for (std::size_t i = 0; i < expected.info.num_elements(); ++i) {
    const double a = value(actual, i), e = value(expected, i);
    if (std::isnan(a) && std::isnan(e)) continue;
    const double diff = a == e ? 0.0 : std::abs(a - e);  // equal infinities differ by nothing
    c.max_abs_error = std::isnan(diff) ? INFINITY : std::max(c.max_abs_error, diff);
    if (e != 0.0 && std::isfinite(e)) c.max_rel_error = std::max(c.max_rel_error, diff / std::abs(e));
    if (!(diff <= atol + rtol * std::abs(e))) ++c.mismatches;
  }
  return c;
}

}  // namespace kiln::onnx
