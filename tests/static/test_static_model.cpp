// SPDX-License-Identifier: Apache-2.0
// StaticModel: the DS-CNN headers `kiln compile` wrote (examples/firmware/ds_cnn.hpp against
// PyTorch's output, ds_cnn_int8.hpp against ONNX Runtime's), a hand-written two-input, two-output
// network against hand-computed values, the checks of its arena and buffers, and the compile-time
// check of memory plans.
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include <catch2/catch.hpp>
#include <kiln/backends/ref/ref_backend.hpp>
#include <kiln/runtime/runtime.hpp>
#include <kiln/static/network_of.hpp>

#include "keyword_spotters.hpp"

namespace static_model_test {

using kiln::DataType;

// y = relu(a + b), and y seen as [3, 2]: two inputs, two outputs, one tensor read by two steps.
inline constexpr kiln::StaticTensor tensors[] = {
    kiln::in_arena(DataType::Float32, {2, 3}, 0),    // a
    kiln::in_arena(DataType::Float32, {2, 3}, 64),   // b
    kiln::in_arena(DataType::Float32, {2, 3}, 128),  // relu(a + b)
    kiln::in_arena(DataType::Float32, {3, 2}, 0),    // the same, reshaped, over a (no longer alive)
};
inline constexpr std::tuple layers{
    kiln::StaticInput{7, 0},
    kiln::StaticInput{3, 1},
    kiln::StaticLayer<kiln::ops::ElementwiseBinary, DataType::Float32, 2, 1>{
        "add", {kiln::ops::BinaryOperation::Add, kiln::ops::Activation::Params{}}, {0, 1}, {2}},
    kiln::StaticLayer<kiln::ops::Reshape, DataType::Float32, 1, 1>{"reshape", {{3, 2}}, {2}, {3}},
    kiln::StaticOutput{0, 2},
    kiln::StaticOutput{1, 3},
};
using AddModel = kiln::StaticModel<kiln::RefBackend, layers, tensors, 192>;

// The reshape's output placed over relu(a + b), which the reshape reads at the step that writes it.
inline constexpr kiln::StaticTensor overlapping[] = {tensors[0], tensors[1], tensors[2],
                                                     kiln::in_arena(DataType::Float32, {3, 2}, 128)};
static_assert(kiln::detail::static_plan_error<layers, tensors>(192, 64)[0] == '\0');
static_assert(std::string_view(kiln::detail::static_plan_error<layers, overlapping>(192, 64)) ==
              "two buffers alive at the same step share memory");
static_assert(std::string_view(kiln::detail::static_plan_error<layers, tensors>(150, 64)) ==
              "a buffer ends past the arena");
static_assert(std::string_view(kiln::detail::static_plan_error<layers, tensors>(192, 128)) ==
              "a buffer is not aligned to the backend's alignment");

}  // namespace static_model_test

namespace {

using kiln::DataType;
using kiln::InputBinding;
using kiln::OutputBinding;

TEMPLATE_TEST_CASE("A DS-CNN compiled into the program by kiln compile matches its reference", "[static]",
                   Float32Spotter, Int8Spotter) {
  alignas(64) static std::byte arena[TestType::arena_bytes];
  typename TestType::template Model<kiln::RefBackend> model{arena};
  REQUIRE(model.status());
  std::vector<float> scores(std::size(TestType::expected));
  for (int run = 0; run < 2; ++run) {  // the second run starts from the first one's arena
    REQUIRE(model.run(std::span<const float>(TestType::input), std::span<float>(scores)));
    for (std::size_t c = 0; c < scores.size(); ++c) CHECK(TestType::agrees(scores[c], TestType::expected[c]));
  }
}

TEST_CASE("A compiled DS-CNN's arena is the lower bound of its plan, with what its int8 workloads keep", "[static]") {
  CHECK(ds_cnn::arena_bytes == 64000);  // two [1, 25, 5, 64] Float32 tensors: the lower bound
  CHECK(ds_cnn::arena_bytes == ds_cnn::arena_lower_bound);
  CHECK(ds_cnn::kept_bytes == 0);
  CHECK(ds_cnn::weight_bytes == 90416);
  // Two [1, 25, 5, 64] int8 tensors, then one 8-byte requantization per output channel of the
  // nine convolutions (64 each) and of the classifier (12), and one for the global average pool,
  // the largest first: no padding between them.
  CHECK(ds_cnn_int8::kept_bytes == 9 * 64 * 8 + 12 * 8 + 8);
  CHECK(ds_cnn_int8::arena_lower_bound == 16000 + ds_cnn_int8::kept_bytes);
  CHECK(ds_cnn_int8::arena_bytes == ds_cnn_int8::arena_lower_bound);
}

TEMPLATE_TEST_CASE(
    "The same header loaded into the dynamic Runtime plans the same arena and computes the same "
    "scores",
    "[static]", Float32Spotter, Int8Spotter) {
  using Runtime = kiln::Runtime<typename TestType::Ops, kiln::RefBackend>;
  auto optimized = Runtime::optimize(kiln::network_of<TestType::layers, TestType::tensors>());
  REQUIRE(optimized);
  Runtime runtime;
  auto id = runtime.load(std::move(*optimized));
  REQUIRE(id);
  auto plan = runtime.plan(*id);
  REQUIRE(plan);
  std::uint64_t kept = 0;
  for (const kiln::PlannedStep& step : plan->steps) kept += step.kept_bytes;
  CHECK(plan->arena_bytes + kept == TestType::arena_lower_bound);  // the plan is its lower bound
  std::vector<float> dynamic(12), compiled(12);
  const InputBinding inputs[] = {{0, {*runtime.input_info(*id, 0), TestType::input}}};
  const OutputBinding outputs[] = {{0, {*runtime.output_info(*id, 0), dynamic.data()}}};
  REQUIRE(runtime.enqueue(*id, inputs, outputs));

  alignas(64) static std::byte arena[TestType::arena_bytes];
  typename TestType::template Model<kiln::RefBackend> model{arena};
  REQUIRE(model.run(std::span<const float>(TestType::input), std::span<float>(compiled)));
  CHECK(compiled == dynamic);  // the same workloads on the same data, in the same order
}

TEST_CASE("A compiled int8 layer refuses an arena region too small for what its workload keeps", "[static]") {
  // The first convolution of the int8 DS-CNN with room for 63 of its 64 channels' requantizations.
  constexpr auto& conv = std::get<3>(ds_cnn_int8::layers);
  static_assert(std::same_as<std::remove_cvref_t<decltype(conv)>::op, kiln::ops::Convolution2d>);
  static constexpr std::tuple layers{std::get<0>(ds_cnn_int8::layers), std::get<1>(ds_cnn_int8::layers),
                                     std::get<2>(ds_cnn_int8::layers),
                                     kiln::StaticLayer<kiln::ops::Convolution2d, DataType::QAsymmS8, 3, 1>{
                                         conv.name, conv.params, conv.inputs, conv.outputs, {}, {16000, 63 * 8}},
                                     kiln::StaticOutput{0, conv.outputs[0]}};
  using Truncated = kiln::StaticModel<kiln::RefBackend, layers, ds_cnn_int8::tensors, 16000 + 63 * 8>;
  alignas(64) static std::byte arena[Truncated::arena_bytes];
  Truncated model{arena};
  CHECK(model.status().message() ==
        "layer '/features/features.0/Conv': its workload keeps at least 512 bytes from load on; the compiled network "
        "planned 504 (was it compiled for another backend? run kiln compile again)");
}

TEST_CASE("KeptMemory lays arrays out as a region would, on the heap or in the region", "[static]") {
  using kiln::Requantization;
  static_assert(sizeof(Requantization) == 8 && alignof(Requantization) == 4);
  kiln::KeptMemory heap;
  REQUIRE(heap.array<std::uint8_t>(3));
  auto on_heap = heap.array<Requantization>(2);  // after 3 bytes, aligned: at 4
  REQUIRE(on_heap);
  CHECK(heap.bytes() == 4 + 16);
  (*on_heap)[0].shift = 5;
  const kiln::KeptArray<Requantization> held = *on_heap;  // a copy of its own
  (*on_heap)[0].shift = 6;
  CHECK(held[0].shift == 5);

  alignas(64) static std::byte region[32];
  kiln::KeptMemory in_region(region);
  REQUIRE(in_region.array<std::uint8_t>(3));
  auto kept = in_region.array<Requantization>(2);
  REQUIRE(kept);
  (*kept)[1] = {1 << 30, -3};
  const kiln::KeptArray<Requantization> view = *kept;  // reads the region, as the original does
  CHECK(static_cast<const void*>(&view[0]) == region + 4);
  CHECK(view[1].shift == -3);
  CHECK(in_region.array<std::int32_t>(4).status().message() ==
        "its workload keeps at least 36 bytes from load on; the compiled network planned 32 (was it compiled for "
        "another backend? run kiln compile again)");
}

TEST_CASE("A compiled network takes and gives every binding, in any order", "[static]") {
  alignas(64) static std::byte arena[static_model_test::AddModel::arena_bytes];
  static_model_test::AddModel model{arena};
  REQUIRE(model.status());
  const float a[] = {1, -2, 3, -4, 5, -6}, b[] = {0.5f, 0.5f, -4, 4, 1, 10};
  float sum[6] = {}, reshaped[6] = {};
  const InputBinding inputs[] = {{3, {model.input_info(3), b}}, {7, {model.input_info(7), a}}};
  const OutputBinding outputs[] = {{1, {model.output_info(1), reshaped}}, {0, {model.output_info(0), sum}}};
  REQUIRE(model.run(inputs, outputs));
  const std::vector<float> expected = {1.5f, 0, 0, 0, 6, 4};
  CHECK(std::vector<float>(sum, sum + 6) == expected);
  CHECK(std::vector<float>(reshaped, reshaped + 6) == expected);
  CHECK(model.output_info(1).shape == kiln::TensorShape{3, 2});

  SECTION("a missing binding is named") {
    const kiln::Status status = model.run(std::span(inputs, 1), outputs);
    CHECK(status.message() == "input binding 7 is missing");
  }
  SECTION("a buffer of another shape is refused") {
    const InputBinding wrong[] = {inputs[0], {7, {kiln::TensorInfo{{6}, DataType::Float32, {}}, a}}};
    CHECK(model.run(wrong, outputs).message() ==
          "input binding 7 expects Float32 [2, 3] but the buffer is Float32 [6]");
  }
}

TEST_CASE("A compiled network refuses an arena too small or misaligned, and buffers of another size", "[static]") {
  alignas(64) static std::byte arena[ds_cnn::arena_bytes + 64];
  {
    ds_cnn::Model<kiln::RefBackend> model{std::span(arena, ds_cnn::arena_bytes - 1)};
    CHECK(model.status().message() == "the arena has 63999 bytes; the network needs 64000");
    float scores[12];
    CHECK(model.run(std::span<const float>(ds_cnn_test_data::input), std::span<float>(scores)).message() ==
          model.status().message());
  }
  {
    ds_cnn::Model<kiln::RefBackend> model{std::span(arena + 4, ds_cnn::arena_bytes)};
    CHECK(model.status().message() == "the arena must be aligned to 64 bytes");
  }
  ds_cnn::Model<kiln::RefBackend> model{std::span(arena, ds_cnn::arena_bytes)};
  std::int32_t integers[12];
  CHECK(model.run(std::span<const float>(ds_cnn_test_data::input), std::span<std::int32_t>(integers)).message() ==
        "the network takes Float32 and gives Float32; the buffers hold other elements");
  float too_few[11];
  CHECK(model.run(std::span<const float>(ds_cnn_test_data::input), std::span<float>(too_few)).message() ==
        "the input buffer has 1960 bytes and the output 44; the network takes 1960 and gives 48");
}

}  // namespace
