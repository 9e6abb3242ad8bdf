// SPDX-License-Identifier: Apache-2.0
// Post-training quantisation of an ONNX model (`kiln quantize`): run the Float32 model on
// calibration examples, observe the range of each tensor an int8 layer would read or write, choose
// scales and zero points, quantise the weights per output channel, and write a QDQ model that kiln
// and ONNX Runtime both load (docs/decisions/0016-quantizer-writes-qdq.md).
//
// The graph rewriting and the arithmetic are compiled into libkiln_onnx (protobuf stays out of the
// header-only core); calibration runs in whatever Runtime the caller passes, so that this header
// compiles only the backends the program already has.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/tensor.hpp"
#include "kiln/import/onnx.hpp"
#include "kiln/optimizer/optimizer.hpp"

namespace kiln::onnx {

enum class CalibrationMethod : std::uint8_t {
  MinMax,      ///< the smallest and largest value seen
  Percentile,  ///< the values seen less the outer tails (QuantizeOptions::percentile)
};

struct QuantizeOptions {
  /// The type of the activations: QAsymmU8 or QAsymmS8 (weights are always QSymmS8).
  DataType activations = DataType::QAsymmU8;
  /// Weights with a scale per output channel (QDQ needs opset 13), else one per tensor.
  bool per_channel = true;
  CalibrationMethod method = CalibrationMethod::MinMax;
  /// Percentile: the share of the values, in percent, the range keeps; each tail loses half the rest.
  double percentile = 99.99;
  /// Values of the dimensions the model's inputs leave open, for calibration (the QDQ model written
  /// keeps them open).
  ImportOptions import;
};

/// What calibration saw of one tensor over every example: its extremes and, for the percentile
/// method, a histogram of `bins` equal bins spanning them, filled by a second pass.
class TensorStatistics {
 public:
  static constexpr std::size_t bins = 2048;

  /// First pass: the extremes (NaNs are not values).
  void observe_range(std::span<const float> values) {
    for (float v : values)
      if (!std::isnan(v)) {
        min_ = std::min(min_, v);
        max_ = std::max(max_, v);
      }
  }
  /// Second pass, after every first-pass call: the histogram over [min(), max()] of the finite values.
  void observe_histogram(std::span<const float> values) {
    if (histogram_.empty()) histogram_.assign(bins, 0);
    const double width = bin_width();
    for (float v : values) {
      if (!std::isfinite(v)) continue;
      const double position = width > 0.0 ? (double{v} - min_) / width : 0.0;
      ++histogram_[std::min(bins - 1, static_cast<std::size_t>(std::clamp(position, 0.0, double(bins - 1))))];
    }
  }

  bool empty() const { return min_ > max_; }
  float min() const { return min_; }
  float max() const { return max_; }
  const std::vector<std::uint64_t>& histogram() const { return histogram_; }

  /// The range the tensor is quantised to: the extremes, or for Percentile the edges of the first
  /// and last bins that the central `percentile` % of the values reach.
  std::pair<float, float> range(const QuantizeOptions& options) const {
    if (options.method == CalibrationMethod::MinMax || histogram_.empty()) return {min_, max_};
    std::uint64_t total = 0;
    for (std::uint64_t count : histogram_) total += count;
    const double tail = static_cast<double>(total) * (100.0 - std::clamp(options.percentile, 0.0, 100.0)) / 200.0;
    std::size_t low = 0, high = bins - 1;
    for (double below = 0.0; low < high && below + static_cast<double>(histogram_[low]) <= tail; ++low)
      below += static_cast<double>(histogram_[low]);
    for (double above = 0.0; high > low && above + static_cast<double>(histogram_[high]) <= tail; --high)
      above += static_cast<double>(histogram_[high]);
    const double width = bin_width();
    return {static_cast<float>(min_ + width * static_cast<double>(low)),
            high == bins - 1 ? max_ : static_cast<float>(min_ + width * static_cast<double>(high + 1))};
  }

 private:
  double bin_width() const { return (double{max_} - double{min_}) / static_cast<double>(bins); }

  float min_ = std::numeric_limits<float>::infinity();
  float max_ = -std::numeric_limits<float>::infinity();
  std::vector<std::uint64_t> histogram_;
};

/// The statistics of each observed tensor, by ONNX tensor name.
using CalibrationStatistics = std::map<std::string, TensorStatistics, std::less<>>;

/// The scale and zero point of an activation tensor quantised to [rmin, rmax] (widened to hold 0),
/// as ONNX Runtime's quantiser computes them: scale = (rmax - rmin) / 255 in double, stored as
/// float; zero point = round half to even of qmin - rmin / scale; scale 1 and zero point 0 when
/// the range is empty.
struct ActivationQuantization {
  float scale = 1.0f;
  std::int32_t zero_point = 0;
};
ActivationQuantization choose_activation_quantization(float rmin, float rmax, DataType type);

/// The model calibration runs: the model with every tensor it observes (graph inputs, and the
/// activations the QDQ writer may quantise) as its outputs, in place of its own.
struct CalibrationModel {
  std::vector<std::byte> bytes;
};
Expected<CalibrationModel> calibration_model(std::span<const std::byte> model);

/// What the writer did.
struct QuantizeSummary {
  std::size_t quantized_nodes = 0;      ///< nodes between DequantizeLinear and QuantizeLinear
  std::size_t removed_activations = 0;  ///< Relu/Clip folded into the quantisation of their input's producer
  std::size_t quantized_tensors = 0;    ///< activations with a QuantizeLinear/DequantizeLinear pair
  std::size_t quantized_weights = 0;    ///< weight and bias initializers stored as integers
  std::vector<std::string> float_ops;   ///< op types left in Float32, once each, sorted
};

struct QuantizedModel {
  std::vector<std::byte> bytes;  ///< the QDQ model, serialized
  QuantizeSummary summary;
  std::size_t examples = 0;  ///< calibration examples run
};

/// Writes the QDQ model of `model` with activation ranges from `statistics`: Conv, Gemm and MatMul
/// with constant weights, Add, Sub, Mul, AveragePool and GlobalAveragePool read DequantizeLinear and
/// feed QuantizeLinear; MaxPool and the reshaping ops keep their input's quantisation; a Relu or
/// Clip after a quantised node is folded into its range. Ops kiln does not run in int8 stay Float32.
Expected<QuantizedModel> write_qdq_model(std::span<const std::byte> model, const CalibrationStatistics& statistics,
                                         const QuantizeOptions& options = {});

/// The whole job: runs calibration_model(model) in `runtime` (optimised with `optimizer`, e.g.
/// RefBackend only) on each example of `examples` — a batch [N, ...] of the model's one input,
/// whose leading dimension is 1 — gathers the statistics, and writes the QDQ model.
template <class RuntimeType>
Expected<QuantizedModel> quantize(std::span<const std::byte> model, const HostTensor& examples,
                                  const QuantizeOptions& options, RuntimeType& runtime,
                                  const OptimizerOptions& optimizer = {}) {
  auto calibration = calibration_model(model);
  if (!calibration) return calibration.status();
  auto imported = import_model(calibration->bytes, options.import);
  if (!imported) return imported.status();
  if (imported->inputs.size() != 1)
    return Status::error(ErrorCode::Unsupported, "kiln quantize calibrates models with one input; this one has ",
                         imported->inputs.size());
  const TensorInfo input = imported->inputs[0].info;
  const std::size_t example_bytes = input.num_bytes();
  if (examples.info.type != input.type || examples.info.rank() != input.rank() || input.rank() == 0 ||
      input.shape[0] != 1 || examples.data.empty() || examples.data.size() % example_bytes != 0)
    return Status::error(ErrorCode::InvalidArgument, "the calibration examples ", examples.info.to_string(),
                         " are not a batch of the model's input ", input.to_string());
  const auto outputs = imported->outputs;
  auto optimized = RuntimeType::optimize(std::move(imported->network), optimizer);
  if (!optimized) return optimized.status().with_context("calibration model");
  auto id = runtime.load(std::move(*optimized));
  if (!id) return id.status().with_context("calibration model");

  std::vector<std::vector<std::byte>> buffers;
  std::vector<OutputBinding> bindings;
  for (const ModelTensor& out : outputs) buffers.emplace_back(out.info.num_bytes());
  for (std::size_t i = 0; i < outputs.size(); ++i)
    bindings.push_back({outputs[i].binding, {outputs[i].info, buffers[i].data()}});
  // Each Float32 output's statistics, looked up once: the passes run every example.
  CalibrationStatistics statistics;
  std::vector<TensorStatistics*> observed(outputs.size(), nullptr);
  for (std::size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].info.type == DataType::Float32) observed[i] = &statistics[outputs[i].name];
  const std::size_t count = examples.data.size() / example_bytes;
  auto pass = [&](bool histogram) -> Status {
    for (std::size_t e = 0; e < count; ++e) {
      const InputBinding in[] = {{imported->inputs[0].binding, {input, examples.data.data() + e * example_bytes}}};
      if (auto status = runtime.enqueue(*id, in, bindings); !status)
        return status.with_context(kiln::detail::str_cat("calibration example ", e));
      for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (!observed[i]) continue;
        const std::span<const float> values(reinterpret_cast<const float*>(buffers[i].data()),
                                            outputs[i].info.num_elements());
        histogram ? observed[i]->observe_histogram(values) : observed[i]->observe_range(values);
      }
    }
    return Status::ok();
  };
  Status status = pass(false);
  if (status && options.method == CalibrationMethod::Percentile) status = pass(true);
  (void)runtime.unload(*id);
  if (!status) return status;
  auto written = write_qdq_model(model, statistics, options);
  if (written) written->examples = count;
  return written;
}

}  // namespace kiln::onnx
