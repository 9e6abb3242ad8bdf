// SPDX-License-Identifier: Apache-2.0
// The networks kiln ships as examples, built with the builder API and deterministic weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <kiln/graph/network.hpp>

namespace kiln::examples {

/// Deterministic pseudo-random floats in [-scale, scale) (xorshift64*), so every run and every
/// backend sees the same weights.
class WeightGenerator {
 public:
  explicit WeightGenerator(std::uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  float next(float scale) {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    const std::uint64_t bits = (state_ * 0x2545F4914F6CDD1Dull) >> 40;  // 24 random bits
    return (static_cast<float>(bits) / 8388608.0f - 1.0f) * scale;
  }
  std::vector<float> values(std::uint64_t count, float scale) {
    std::vector<float> v(count);
    for (float& x : v) x = next(scale);
    return v;
  }

 private:
  std::uint64_t state_;
};

/// Helpers that add a layer with generated weights, used by the example networks.
class ExampleBuilder {
 public:
  explicit ExampleBuilder(std::uint64_t seed) : weights_(seed) {}
  Network& network() { return net_; }
  Network take() { return std::move(net_); }

  OutputSlot constant(TensorShape shape, float scale, const std::string& name) {
    return net_.add_constant<float>({shape}, weights_.values(shape.num_elements(), scale), name);
  }
  /// Convolution (with bias) followed by an optional activation.
  OutputSlot conv(OutputSlot x, std::uint32_t in, std::uint32_t out, std::uint32_t k, std::uint32_t stride,
                  const std::string& name, bool relu6 = true) {
    const std::uint32_t pad = k / 2;
    auto w = constant({out, k, k, in}, 1.0f / static_cast<float>(k * k * in), name + "/weights");
    auto b = constant({out}, 0.1f, name + "/bias");
    auto y =
        net_.add<ops::Convolution2d>({.padding = {pad, pad, pad, pad}, .stride = {stride, stride}}, {x, w, b}, name);
    return relu6 ? activation(y, name + "/relu6") : y;
  }
  OutputSlot depthwise(OutputSlot x, std::uint32_t channels, std::uint32_t stride, const std::string& name) {
    auto w = constant({1, 3, 3, channels}, 1.0f / 9.0f, name + "/weights");
    auto b = constant({channels}, 0.1f, name + "/bias");
    auto y =
        net_.add<ops::DepthwiseConvolution2d>({.padding = {1, 1, 1, 1}, .stride = {stride, stride}}, {x, w, b}, name);
    return activation(y, name + "/relu6");
  }
  OutputSlot activation(OutputSlot x, const std::string& name) {
    return net_.add<ops::Activation>(ops::Activation::relu6(), {x}, name);
  }
  OutputSlot dense(OutputSlot x, std::uint32_t in, std::uint32_t out, const std::string& name) {
    auto w = constant({out, in}, 1.0f / static_cast<float>(in), name + "/weights");
    auto b = constant({out}, 0.1f, name + "/bias");
    return net_.add<ops::FullyConnected>({}, {x, w, b}, name);
  }

 private:
  Network net_;
  WeightGenerator weights_;
};

/// A keyword-spotting-style MLP: [1, 64] -> 128 -> ReLU -> 64 -> ReLU -> 12 -> softmax.
inline Network mlp() {
  ExampleBuilder b(1);
  Network& net = b.network();
  auto x = net.add_input(0, {{1, 64}}, "features");
  auto h1 = net.add<ops::Activation>({}, {b.dense(x, 64, 128, "fc1")}, "fc1/relu");
  auto h2 = net.add<ops::Activation>({}, {b.dense(h1, 128, 64, "fc2")}, "fc2/relu");
  auto logits = b.dense(h2, 64, 12, "fc3");
  net.add_output(0, net.add<ops::Softmax>({}, {logits}, "softmax"), "probabilities");
  return b.take();
}

/// A small image classifier on [1, 32, 32, 3]: conv, depthwise-separable block, pooling,
/// a residual add, global pooling, dense and softmax.
inline Network small_cnn() {
  ExampleBuilder b(2);
  Network& net = b.network();
  auto x = net.add_input(0, {{1, 32, 32, 3}}, "image");
  auto c1 = b.conv(x, 3, 16, 3, 2, "conv1");
  auto d1 = b.depthwise(c1, 16, 1, "block1/depthwise");
  auto p1 = b.conv(d1, 16, 16, 1, 1, "block1/pointwise", false);
  auto sum = net.add<ops::ElementwiseBinary>({ops::BinaryOperation::Add}, {c1, p1}, "block1/add");
  auto pooled =
      net.add<ops::Pooling2d>({.kind = ops::PoolingKind::Max, .window = {2, 2}, .stride = {2, 2}}, {sum}, "maxpool");
  auto c2 = b.conv(pooled, 16, 32, 3, 1, "conv2");
  auto gap = net.add<ops::Pooling2d>({.kind = ops::PoolingKind::Average, .global = true}, {c2}, "global_pool");
  auto flat = net.add<ops::Reshape>({{1, 32}}, {gap}, "flatten");
  auto logits = b.dense(flat, 32, 10, "classifier");
  net.add_output(0, net.add<ops::Softmax>({}, {logits}, "softmax"), "probabilities");
  return b.take();
}

/// MobileNet v2's shape at `resolution` x `resolution` (224 for the real network): a stem
/// convolution, 17 inverted-residual blocks (1x1 expand, 3x3 depthwise, 1x1 project; residual
/// add when stride is 1 and channels match), a 1x1 head to 1280 channels, global average pool,
/// classifier and softmax. Weights are random: the shapes and the memory behaviour are real.
inline Network mobilenet_v2(std::uint32_t resolution = 224, std::uint32_t classes = 1000) {
  ExampleBuilder b(3);
  Network& net = b.network();
  auto x = net.add_input(0, {{1, resolution, resolution, 3}}, "image");
  auto y = b.conv(x, 3, 32, 3, 2, "stem");
  std::uint32_t channels = 32;
  struct Stage {
    std::uint32_t expansion, out, repeats, stride;
  };
  constexpr Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                              {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int block = 0;
  for (const Stage& stage : stages)
    for (std::uint32_t r = 0; r < stage.repeats; ++r, ++block) {
      const std::string name = "block" + std::to_string(block);
      const std::uint32_t stride = r == 0 ? stage.stride : 1;
      const std::uint32_t hidden = channels * stage.expansion;
      auto h = stage.expansion == 1 ? y : b.conv(y, channels, hidden, 1, 1, name + "/expand");
      h = b.depthwise(h, hidden, stride, name + "/depthwise");
      h = b.conv(h, hidden, stage.out, 1, 1, name + "/project", false);
      if (stride == 1 && channels == stage.out)
        h = net.add<ops::ElementwiseBinary>({ops::BinaryOperation::Add}, {y, h}, name + "/add");
      y = h;
      channels = stage.out;
    }
  y = b.conv(y, channels, 1280, 1, 1, "head");
  y = net.add<ops::Pooling2d>({.kind = ops::PoolingKind::Average, .global = true}, {y}, "global_pool");
  y = net.add<ops::Reshape>({{1, 1280}}, {y}, "flatten");
  y = b.dense(y, 1280, classes, "classifier");
  net.add_output(0, net.add<ops::Softmax>({}, {y}, "softmax"), "probabilities");
  return b.take();
}

/// The MobileNet-v1-like network of kiln's NeonBackend benchmark (299 MFLOP at 224 x 224): a 3x3
/// stride-2 convolution 3 -> 32, four depthwise-separable blocks (depthwise 3x3 + pointwise 1x1,
/// each with bias and ReLU6) with (stride, channels) = (1, 32 -> 64), (2, 64 -> 128),
/// (1, 128 -> 128), (2, 128 -> 256), global average pool, dense 256 -> 1000 and softmax.
inline Network mobilenet_v1_like(std::uint32_t resolution = 224) {
  ExampleBuilder b(4);
  Network& net = b.network();
  auto y = b.conv(net.add_input(0, {{1, resolution, resolution, 3}}, "image"), 3, 32, 3, 2, "conv0");
  struct Block {
    std::uint32_t stride, in, out;
  };
  constexpr Block blocks[] = {{1, 32, 64}, {2, 64, 128}, {1, 128, 128}, {2, 128, 256}};
  int index = 1;
  for (const Block& block : blocks) {
    const std::string name = "block" + std::to_string(index);
    y = b.depthwise(y, block.in, block.stride, name + "/depthwise");
    y = b.conv(y, block.in, block.out, 1, 1, name + "/pointwise");
    ++index;
  }
  y = net.add<ops::Pooling2d>({.kind = ops::PoolingKind::Average, .global = true}, {y}, "global_pool");
  y = net.add<ops::Reshape>({{1, 256}}, {y}, "flatten");
  y = b.dense(y, 256, 1000, "classifier");
  net.add_output(0, net.add<ops::Softmax>({}, {y}, "softmax"), "probabilities");
  return b.take();
}

}  // namespace kiln::examples
