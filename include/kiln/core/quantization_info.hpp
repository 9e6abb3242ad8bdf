// SPDX-License-Identifier: Apache-2.0
// QuantizationInfo: how the integers of a quantised tensor map to real numbers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kiln/core/data_type.hpp"

namespace kiln {

/// The scales of a quantised tensor: one, or one per slice of its axis. They are held, or borrowed
/// from storage that outlives the list and its copies (a compiled network's constants: that
/// network then describes its tensors without the heap).
class Scales {
 public:
  constexpr Scales() = default;
  constexpr Scales(std::initializer_list<float> scales) : held_(scales) {}
  constexpr Scales(std::vector<float> scales) : held_(std::move(scales)) {}
  static constexpr Scales borrowed(std::span<const float> scales) {
    Scales list;
    list.borrowed_ = scales;
    return list;
  }

  constexpr std::span<const float> values() const noexcept {
    return borrowed_.empty() ? std::span<const float>(held_) : borrowed_;
  }
  constexpr std::size_t size() const noexcept { return values().size(); }
  constexpr bool empty() const noexcept { return values().empty(); }
  constexpr float operator[](std::size_t i) const { return values()[i]; }
  constexpr const float* data() const noexcept { return values().data(); }
  constexpr auto begin() const noexcept { return values().begin(); }
  constexpr auto end() const noexcept { return values().end(); }

  constexpr void push_back(float scale) {
    if (!borrowed_.empty()) held_.assign(borrowed_.begin(), borrowed_.end());
    borrowed_ = {};
    held_.push_back(scale);
  }

  friend constexpr bool operator==(const Scales& a, const Scales& b) {
    return std::ranges::equal(a.values(), b.values());
  }

 private:
  std::vector<float> held_;
  std::span<const float> borrowed_;
};

/// Whose rules an int8 layer computes by. Kiln's (decision 0014) round once and agree with ONNX
/// Runtime to a unit; TensorFlow Lite's (decision 0023) are what LiteRT computes, bit for bit:
/// gemmlowp's two roundings, and TensorFlow Lite's own recipes for averages, concatenation and some
/// activations. A network holds one (Network::arithmetic), and its int8 workloads read it at load
/// (WorkloadInfo::arithmetic).
enum class QuantizedArithmetic : std::uint8_t { Kiln, TfLite };

constexpr std::string_view to_string(QuantizedArithmetic arithmetic) noexcept {
  return arithmetic == QuantizedArithmetic::TfLite ? "TensorFlow Lite's" : "kiln's";
}

/// Affine quantisation parameters: real = scale * (q - offset).
///
/// One scale means per-tensor quantisation; several scales (one per slice of `axis`) mean
/// per-axis quantisation, as used for convolution weights. Float tensors leave this empty.
struct QuantizationInfo {
  Scales scales;
  std::int32_t offset = 0;
  std::optional<std::uint32_t> axis;

  constexpr bool empty() const noexcept { return scales.empty(); }
  constexpr bool is_per_axis() const noexcept { return scales.size() > 1 || axis.has_value(); }
  friend constexpr bool operator==(const QuantizationInfo&, const QuantizationInfo&) = default;
};

/// The integers an 8-bit quantised type holds: [0, 255] for QAsymmU8, [-128, 127] for the signed ones.
struct QuantizedRange {
  std::int32_t lo = 0;
  std::int32_t hi = 0;
};
constexpr QuantizedRange quantized_range(DataType type) noexcept {
  return type == DataType::QAsymmU8 ? QuantizedRange{0, 255} : QuantizedRange{-128, 127};
}

}  // namespace kiln
