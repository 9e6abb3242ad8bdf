// SPDX-License-Identifier: Apache-2.0
// core/: data types, shapes, tensor infos, Status and Expected.
#include <climits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <kiln/core/inline_vector.hpp>
#include <kiln/core/status.hpp>
#include <kiln/core/tensor.hpp>

using namespace kiln;

TEST_CASE("DataType sizes and names", "[core]") {
  CHECK(size_of(DataType::Float32) == 4);
  CHECK(size_of(DataType::Float16) == 2);
  CHECK(size_of(DataType::BFloat16) == 2);
  CHECK(size_of(DataType::QAsymmU8) == 1);
  CHECK(size_of(DataType::QAsymmS8) == 1);
  CHECK(size_of(DataType::QSymmS8) == 1);
  CHECK(size_of(DataType::Signed32) == 4);
  CHECK(size_of(DataType::Boolean) == 1);
  CHECK(to_string(DataType::QAsymmU8) == "QAsymmU8");
  CHECK(is_quantized(DataType::QSymmS8));
  CHECK_FALSE(is_quantized(DataType::Float16));
  static_assert(std::size(all_data_types) == 8);
}

TEST_CASE("TensorShape stores up to six dimensions inline", "[core]") {
  constexpr TensorShape shape{1, 224, 224, 3};
  static_assert(shape.rank() == 4 && shape.num_elements() == 150528 && shape[3] == 3);
  static_assert(shape.num_elements(1, 3) == 224 * 224);
  static_assert(TensorShape{}.num_elements() == 1, "a scalar has one element");
  static_assert(sizeof(TensorShape) <= 32, "no heap, small enough to pass by value");
  CHECK(shape.to_string() == "[1, 224, 224, 3]");
  CHECK(TensorShape{2, 0, 3}.num_elements() == 0);
}

TEST_CASE("InlineVector holds up to its capacity in place, and marks more invalid", "[core]") {
  constexpr DimVector<std::int64_t> axes{0, -1, 2};
  static_assert(axes.size() == 3 && axes.valid() && axes[1] == -1 && axes.back() == 2);
  static_assert(DimVector<std::int64_t>{1, 2} == DimVector<std::int64_t>{1, 2});
  static_assert(!(DimVector<std::int64_t>{1, 2} == DimVector<std::int64_t>{1, 2, 0}));
  const std::vector<std::uint32_t> from_vector{3, 1, 2};
  const DimVector<std::uint32_t> permutation = from_vector;  // an importer's lists convert
  CHECK(std::vector<std::uint32_t>(permutation.begin(), permutation.end()) == from_vector);

  DimVector<int> seven(7, 5);  // past max_rank: the first six kept, counted as seven, invalid
  CHECK_FALSE(seven.valid());
  CHECK(seven.size() == 6);
  CHECK(seven != DimVector<int>(6, 5));
  seven.resize(2);
  CHECK(seven.valid());
  CHECK(seven == DimVector<int>{5, 5});
  DimVector<int> pads;
  pads.assign(4, 0);
  pads.push_back(1);
  CHECK(pads == DimVector<int>{0, 0, 0, 0, 1});
}

TEST_CASE("Invalid shapes are representable and reported by validate", "[core][errors]") {
  const TensorShape too_many{1, 2, 3, 4, 5, 6, 7};
  CHECK_FALSE(too_many.valid());
  CHECK(too_many.rank() == 7);
  auto status = validate(TensorInfo{too_many});
  CHECK(status.code() == ErrorCode::InvalidArgument);
  CHECK(status.message() == "tensor has 7 dimensions; kiln supports at most 6");
  const TensorShape huge{1u << 20, 1u << 20, 1u << 20};
  CHECK_FALSE(huge.valid());
  CHECK_THAT(validate(TensorInfo{huge}).message(), Catch::Contains("more than 1099511627776 elements"));
}

TEST_CASE("TensorInfo byte counts, equality and quantisation checks", "[core]") {
  TensorInfo f{{2, 3}, DataType::Float32};
  CHECK(f.num_bytes() == 24);
  CHECK(f.to_string() == "Float32 [2, 3]");
  TensorInfo q{{4}, DataType::QAsymmU8, {{0.5f}, 128}};
  CHECK(q.num_bytes() == 4);
  CHECK(validate(q).is_ok());
  CHECK(q != f);
  CHECK_THAT(validate(TensorInfo{{4}, DataType::QAsymmS8}).message(), Catch::Contains("has no quantisation scale"));
  TensorInfo per_axis{{3, 2}, DataType::QSymmS8, {{0.1f, 0.2f, 0.3f}, 0, 0u}};
  CHECK(per_axis.quantization.is_per_axis());
  CHECK(validate(per_axis).is_ok());
  per_axis.quantization.axis = 2;
  CHECK_THAT(validate(per_axis).message(), Catch::Contains("quantisation axis 2 is out of range"));
  TensorInfo negative_scale{{1}, DataType::QAsymmU8, {{-1.0f}, 0}};
  CHECK_THAT(validate(negative_scale).message(), Catch::Contains("scales must be positive"));
}

TEST_CASE("Scales hold their values or borrow them, and compare by value", "[core]") {
  static constexpr float header[] = {0.25f, 0.5f};  // as a compiled network's constants
  const Scales borrowed = Scales::borrowed(header);
  CHECK(borrowed.data() == header);  // not copied
  const Scales copy = borrowed;
  CHECK(copy.data() == header);
  CHECK(copy == Scales{0.25f, 0.5f});
  CHECK(copy.size() == 2);
  CHECK(copy[1] == 0.5f);
  Scales grown = borrowed;
  grown.push_back(1.0f);  // held from then on; the borrowed values untouched
  CHECK(grown == Scales{0.25f, 0.5f, 1.0f});
  CHECK(grown.data() != header);
  CHECK(borrowed.size() == 2);
  CHECK(Scales{} == Scales::borrowed({}));
  CHECK(Scales(std::vector<float>{0.1f}) != Scales{0.2f});
}

TEST_CASE("Tensor views expose typed spans", "[core]") {
  float data[6] = {1, 2, 3, 4, 5, 6};
  Tensor t{{{2, 3}}, data};
  auto span = t.as<float>();
  CHECK(span.size() == 6);
  span[5] = 60;
  ConstTensor c{t.info, data};
  CHECK(c.as<float>()[5] == 60);
}

TEST_CASE("Status carries a code and a message; context is prepended", "[core]") {
  const Status ok;
  CHECK(ok.is_ok());
  CHECK(static_cast<bool>(ok));
  const Status error = Status::error(ErrorCode::NotFound, "input binding ", 3, " does not exist");
  CHECK_FALSE(error);
  CHECK(error.code() == ErrorCode::NotFound);
  CHECK(error.message() == "input binding 3 does not exist");
  CHECK(error.with_context("network 1").message() == "network 1: input binding 3 does not exist");
  CHECK(to_string(ErrorCode::Unsupported) == "unsupported");
}

TEST_CASE("str_cat formats integers at their limits and floats", "[core]") {
  CHECK(detail::str_cat(INT_MIN, ' ', LLONG_MIN, ' ', ULLONG_MAX) ==
        "-2147483648 -9223372036854775808 18446744073709551615");
  CHECK(detail::str_cat(0.5f, ' ', -2.25, ' ', true) == "0.5 -2.25 true");
#if KILN_TEST_CONSTEXPR_STRING
  static_assert(detail::str_cat("rank ", 4, ", axis ", -1).size() == std::string_view("rank 4, axis -1").size());
#endif
}

TEST_CASE("Expected holds a value or an error and copies either", "[core]") {
  Expected<std::string> value = std::string("kiln");
  REQUIRE(value);
  CHECK(*value == "kiln");
  CHECK(value->size() == 4);
  CHECK(value.status().is_ok());
  Expected<std::string> error = Status::error(ErrorCode::InvalidArgument, "bad");
  REQUIRE_FALSE(error);
  CHECK(error.status().message() == "bad");
  Expected<std::string> copy = error;
  CHECK(copy.status().message() == "bad");
  copy = value;
  CHECK(*copy == "kiln");
  Expected<std::string> moved = std::move(copy);
  CHECK(*moved == "kiln");
  constexpr auto compute = [](int x) -> Expected<int> {
    if (x < 0) return Status::error(ErrorCode::InvalidArgument, "negative");
    return x * 2;
  };
  static_assert(*compute(21) == 42);
  CHECK_FALSE(compute(-1));
}
