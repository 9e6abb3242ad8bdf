// SPDX-License-Identifier: Apache-2.0
// DataType: the element types a kiln tensor can hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln {

/// Element type of a tensor (Arm NN's DataType vocabulary).
enum class DataType : std::uint8_t {
  Float32,
  Float16,
  BFloat16,
  QAsymmU8,  ///< uint8, real = scale * (q - offset)
  QAsymmS8,  ///< int8, real = scale * (q - offset)
  QSymmS8,   ///< int8, real = scale * q (per-tensor or per-axis scales)
  Signed32,
  Boolean,
};

inline constexpr DataType all_data_types[] = {DataType::Float32,  DataType::Float16,  DataType::BFloat16,
                                              DataType::QAsymmU8, DataType::QAsymmS8, DataType::QSymmS8,
                                              DataType::Signed32, DataType::Boolean};

/// Bytes one element of `type` occupies.
constexpr std::size_t size_of(DataType type) noexcept {
  switch (type) {
    case DataType::Float32:
    case DataType::Signed32: return 4;
    case DataType::Float16:
    case DataType::BFloat16: return 2;
    case DataType::QAsymmU8:
    case DataType::QAsymmS8:
    case DataType::QSymmS8:
    case DataType::Boolean: return 1;
  }
  return 0;
}

constexpr bool is_quantized(DataType type) noexcept {
  return type == DataType::QAsymmU8 || type == DataType::QAsymmS8 || type == DataType::QSymmS8;
}

constexpr bool is_floating_point(DataType type) noexcept {
  return type == DataType::Float32 || type == DataType::Float16 || type == DataType::BFloat16;
}

constexpr std::string_view to_string(DataType type) noexcept {
  switch (type) {
    case DataType::Float32: return "Float32";
    case DataType::Float16: return "Float16";
    case DataType::BFloat16: return "BFloat16";
    case DataType::QAsymmU8: return "QAsymmU8";
    case DataType::QAsymmS8: return "QAsymmS8";
    case DataType::QSymmS8: return "QSymmS8";
    case DataType::Signed32: return "Signed32";
    case DataType::Boolean: return "Boolean";
  }
  return "unknown";
}

/// The C++ type that stores one element of a data type, for the types kernels compute on.
template <DataType Type>
struct element_type;
template <>
struct element_type<DataType::Float32> {
  using type = float;
};
template <>
struct element_type<DataType::Float16> {
  using type = std::uint16_t;  ///< the bits of an IEEE binary16 (kiln::Half, core/half.hpp)
};
template <>
struct element_type<DataType::Signed32> {
  using type = std::int32_t;
};
template <>
struct element_type<DataType::QAsymmU8> {
  using type = std::uint8_t;
};
template <>
struct element_type<DataType::QAsymmS8> {
  using type = std::int8_t;
};
template <>
struct element_type<DataType::QSymmS8> {
  using type = std::int8_t;
};
template <>
struct element_type<DataType::Boolean> {
  using type = std::uint8_t;
};
template <DataType Type>
using element_type_t = typename element_type<Type>::type;

}  // namespace kiln
