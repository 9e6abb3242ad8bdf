// SPDX-License-Identifier: Apache-2.0
// Float16 layers (decision 0019): PyTorch's Float32 result on the same halves, rounded to Float16
// (tests/fixtures/float16.txt), on every backend; the ops NeonBackend and ClBackend must run in Float16 themselves;
// Cast. Every other op's Float32 comparison with RefBackend runs in Float16 too
// (check_float16_against_ref).
#include <limits>

#include "support/fixtures.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

/// Each fixture case as a layer: its op, its parameters and inputs.
template <class F>
void visit_float16_case(const FixtureCase& c, F&& check) {
  // Weights and bias are constants, as in a network (NeonBackend packs them at load).
  auto halves = [&](std::initializer_list<const char*> names) {
    std::vector<TestTensor> inputs;
    for (const char* name : names) {
      inputs.push_back(c.tensor(name).to_float16());
      if (inputs.size() > 1 && (c.has("weights") || c.has("bias"))) inputs.back() = inputs.back().as_constant();
    }
    return inputs;
  };
  const std::string& name = c.name;
  auto starts = [&](std::string_view prefix) { return name.rfind(prefix, 0) == 0; };
  if (starts("conv_")) {
    check.template operator()<ops::Convolution2d>(
        ops::Convolution2d::Params{.padding = c.padding("padding"), .stride = c.size2d("stride")},
        halves({"input", "weights", "bias"}));
  } else if (starts("depthwise_")) {
    check.template operator()<ops::DepthwiseConvolution2d>(
        ops::DepthwiseConvolution2d::Params{.padding = c.padding("padding"), .stride = c.size2d("stride")},
        halves({"input", "weights", "bias"}));
  } else if (starts("fully_connected")) {
    check.template operator()<ops::FullyConnected>(ops::FullyConnected::Params{}, halves({"input", "weights", "bias"}));
  } else if (starts("max_pool") || starts("avg_pool")) {
    check.template operator()<ops::Pooling2d>(
        ops::Pooling2d::Params{.kind = c.u32("kind") == 0 ? ops::PoolingKind::Max : ops::PoolingKind::Average,
                               .window = c.size2d("window"),
                               .stride = c.size2d("stride"),
                               .padding = c.padding("padding")},
        halves({"input"}));
  } else if (starts("add_") || starts("mul_")) {
    check.template operator()<ops::ElementwiseBinary>(
        ops::ElementwiseBinary::Params{.operation = static_cast<ops::BinaryOperation>(c.u32("operation"))},
        halves({"a", "b"}));
  } else if (starts("softmax")) {
    check.template operator()<ops::Softmax>(ops::Softmax::Params{.axis = c.i64("axis")}, halves({"input"}));
  } else {
    check.template operator()<ops::Activation>(
        ops::Activation::Params{static_cast<ops::ActivationFunction>(c.u32("function")), c.f32("a"), c.f32("b")},
        halves({"input"}));
  }
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("Float16 layers give PyTorch's Float32 result on the same halves, rounded", "[ops][float16]",
                        tested_backends) {
  for (const auto& c : load_fixtures("float16")) {
    SECTION(c.name) {
      visit_float16_case(c, [&]<class Op>(const typename Op::Params& params, const std::vector<TestTensor>& inputs) {
        // Summation order and the last bits of exp and tanh differ from PyTorch's in Float32, which
        // can move a result across a rounding boundary of Float16: one step, 2^-10 relative. A
        // kernel that sums in Float16 may lose more (float16_accumulation_bound).
        std::vector<float> accumulation;
        if (accumulates_in_float16<Op, TestType>()) accumulation = float16_accumulation_bound<Op>(params, inputs);
        check_op<Op, TestType>(params, inputs, {c.tensor("output").to_float16()}, 1.0 / 1024 + 1e-5, 1e-6,
                               accumulation);
      });
    }
  }
}

TEMPLATE_LIST_TEST_CASE(
    "NeonBackend and ClBackend run convolution, depthwise, dense, pooling, elementwise, activation and "
    "softmax layers in Float16 themselves",
    "[ops][float16]", accelerated_backends) {
  for (const auto& c : load_fixtures("float16")) {
    // Neon's Softmax runs along the innermost axis only, in any type.
    if (std::string_view(TestType::id) == "CpuAcc" && c.name == "softmax_middle") continue;
    SECTION(c.name) {
      visit_float16_case(c, [&]<class Op>(const typename Op::Params& params, const std::vector<TestTensor>& inputs) {
        std::string_view owner;
        auto outputs = run_op<Op, TestType>(params, inputs, 2, &owner);
        if (!outputs) FAIL(outputs.status().message());
        CHECK(owner == TestType::id);
        CHECK((*outputs)[0].info.type == DataType::Float16);
      });
    }
  }
}

TEMPLATE_LIST_TEST_CASE("Cast rounds Float32 to the nearest Float16 and widens Float16 exactly", "[ops][float16][cast]",
                        tested_backends) {
  const float inf = std::numeric_limits<float>::infinity();
  // Ties to even at 1 + 2^-11 and 1 + 3 x 2^-11, overflow past 65504, the smallest subnormal.
  const std::vector<float> values{1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 65504.0f, 65520.0f, -1e6f, 0x1p-24f, 0.1f, -0.0f};
  const std::vector<float> rounded{1.0f, 1.0f + 0x1p-9f, 65504.0f, inf, -inf, 0x1p-24f, 0.0999755859375f, -0.0f};
  auto halves = run_op<ops::Cast, TestType>({.to = DataType::Float16}, {TestTensor::f32({2, 4}, values)});
  if (!halves) FAIL(halves.status().message());
  REQUIRE((*halves)[0].info.type == DataType::Float16);
  CHECK((*halves)[0].floats() == rounded);
  auto widened = run_op<ops::Cast, TestType>({.to = DataType::Float32}, {(*halves)[0]});
  if (!widened) FAIL(widened.status().message());
  REQUIRE((*widened)[0].info.type == DataType::Float32);
  CHECK((*widened)[0].floats() == rounded);
}

TEMPLATE_LIST_TEST_CASE("Cast matches RefBackend on every length a vector loop and its tail meet",
                        "[ops][float16][cast]", accelerated_backends) {
  for (std::uint32_t n : {1u, 7u, 8u, 15u, 16u, 17u, 33u, 100003u}) {
    INFO(n << " elements");
    const TestTensor x = random_f32({n}, n, -70000.0f, 70000.0f);
    check_against_ref<ops::Cast, TestType>({.to = DataType::Float16}, {x}, 0, 0);
    check_against_ref<ops::Cast, TestType>({.to = DataType::Float32}, {x.to_float16()}, 0, 0);
  }
}
