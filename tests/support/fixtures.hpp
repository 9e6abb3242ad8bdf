// SPDX-License-Identifier: Apache-2.0
// Reads the reference data that tools/gen_fixtures.py computed with PyTorch and numpy.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/op_runner.hpp"

namespace kiln::test {

/// One case of a fixture file: named parameters and named float tensors.
struct FixtureCase {
  std::string name;
  std::map<std::string, std::vector<double>> params;
  std::map<std::string, TestTensor> tensors;

  const std::vector<double>& values(const std::string& key) const {
    auto it = params.find(key);
    if (it == params.end()) FAIL("fixture case " << name << " has no parameter " << key);
    return it->second;
  }
  double value(const std::string& key, std::size_t i = 0) const {
    const auto& v = values(key);
    if (i >= v.size()) FAIL("fixture case " << name << " parameter " << key << " has no entry " << i);
    return v[i];
  }
  std::uint32_t u32(const std::string& key, std::size_t i = 0) const {
    return static_cast<std::uint32_t>(value(key, i));
  }
  std::int64_t i64(const std::string& key, std::size_t i = 0) const { return static_cast<std::int64_t>(value(key, i)); }
  float f32(const std::string& key, std::size_t i = 0) const { return static_cast<float>(value(key, i)); }
  bool flag(const std::string& key) const { return value(key) != 0.0; }
  template <class T>
  std::vector<T> list(const std::string& key) const {
    std::vector<T> out;
    for (double v : values(key)) out.push_back(static_cast<T>(v));
    return out;
  }
  ops::Size2d size2d(const std::string& key) const { return {u32(key, 0), u32(key, 1)}; }
  ops::Padding2d padding(const std::string& key) const { return {u32(key, 0), u32(key, 1), u32(key, 2), u32(key, 3)}; }
  bool has(const std::string& key) const { return tensors.count(key) != 0; }
  const TestTensor& tensor(const std::string& key) const {
    auto it = tensors.find(key);
    if (it == tensors.end()) FAIL("fixture case " << name << " has no tensor " << key);
    return it->second;
  }
};

/// All cases of tests/fixtures/<op>.txt.
inline std::vector<FixtureCase> load_fixtures(const std::string& op) {
  const std::string path = std::string(KILN_TEST_FIXTURES) + "/" + op + ".txt";
  std::ifstream file(path);
  if (!file) FAIL("cannot open fixture file " << path << " (regenerate with tools/gen_fixtures.py)");
  std::vector<FixtureCase> cases;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream words(line);
    std::string keyword;
    words >> keyword;
    if (keyword == "case") {
      cases.emplace_back();
      words >> cases.back().name;
    } else if (keyword == "param") {
      std::string key;
      words >> key;
      auto& values = cases.back().params[key];
      for (double v; words >> v;) values.push_back(v);
    } else if (keyword == "tensor") {
      std::string key;
      std::size_t rank = 0;
      words >> key >> rank;
      TensorShape shape;
      for (std::size_t d = 0; d < rank; ++d) {
        std::uint32_t dim = 0;
        words >> dim;
        shape.push_back(dim);
      }
      std::string data;
      std::getline(file, data);
      std::vector<float> values;
      const char* cursor = data.c_str();
      for (char* end = nullptr;; cursor = end) {
        const float v = std::strtof(cursor, &end);
        if (end == cursor) break;
        values.push_back(v);
      }
      if (values.size() != shape.num_elements())
        FAIL("fixture " << path << " tensor " << key << " has " << values.size() << " values for shape "
                        << shape.to_string());
      cases.back().tensors.emplace(key, TestTensor::f32(shape, values));
    }
  }
  if (cases.empty()) FAIL("fixture file " << path << " has no cases");
  return cases;
}

}  // namespace kiln::test
