// SPDX-License-Identifier: Apache-2.0
// Attention: softmax(scale * query key + mask) value, the scaled dot-product attention of transformers.
#pragma once

#include <string_view>

#include "kiln/ops/op_common.hpp"

namespace kiln::ops {

/// Scaled dot-product attention over the two innermost dimensions, every leading (batch, head)
/// index on its own: what the optimizer makes of MatMul -> scale -> mask Add -> Softmax -> MatMul
/// (passes/fuse_attention.hpp), so that a backend never needs the whole score matrix.
///
/// Inputs: query [..., M, D]; key [..., D, N], the right operand of query x key as a MatMul takes
/// it (an export's transposed keys), or [..., N, D] with `key_rows`; value [..., N, Dv]; optionally
/// a mask added to the scores, broadcasting (numpy) to [..., M, N]. The leading dimensions of
/// query, key and value agree. Output [..., M, Dv]: softmax over N of scale * query key + mask,
/// times value.
struct Attention {
  static constexpr std::string_view name = "Attention";
  static constexpr Arity arity{3, 4};
  struct Params {
    float scale = 1.0f;
    bool key_rows = false;
    friend constexpr bool operator==(const Params&, const Params&) = default;
  };

  /// M, D, N and Dv of a layer with these inputs (shapes already checked by infer).
  struct Sizes {
    std::uint32_t queries, depth, keys, value_depth;
    std::uint64_t batches;
  };
  static constexpr Sizes sizes(const Params& p, std::span<const TensorInfo> in) {
    const TensorShape &q = in[0].shape, &k = in[1].shape, &v = in[2].shape;
    return {q.dim_from_end(1), q.dim_from_end(0), p.key_rows ? k.dim_from_end(1) : k.dim_from_end(0), v.dim_from_end(0),
            q.num_elements(0, q.rank() - 2)};
  }

  static constexpr Status infer(const Params& p, std::span<const TensorInfo> in, std::span<TensorInfo> out) {
    constexpr std::string_view roles[] = {"query", "key", "value", "mask"};
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (auto s = detail::expect_same_type(in, 0, i); !s) return s;
      if (i < 3 && (in[i].rank() < 2 || in[i].rank() != in[0].rank()))
        return detail::invalid("input ", i, " (", roles[i], ") has shape ", in[i].shape.to_string(),
                               "; query, key and value need one rank, 2 or more (query: ", in[0].shape.to_string(),
                               ")");
    }
    if (!(p.scale == p.scale)) return detail::invalid("scale is NaN");
    const TensorShape &q = in[0].shape, &k = in[1].shape, &v = in[2].shape;
    const std::size_t batch_rank = q.rank() - 2;
    for (std::size_t d = 0; d < batch_rank; ++d)
      if (k[d] != q[d] || v[d] != q[d])
        return detail::invalid("query ", q.to_string(), ", key ", k.to_string(), " and value ", v.to_string(),
                               " differ in their leading dimensions");
    const Sizes s = sizes(p, in);
    const std::uint32_t key_depth = p.key_rows ? k.dim_from_end(0) : k.dim_from_end(1);
    if (key_depth != s.depth)
      return detail::invalid("key ", k.to_string(), (p.key_rows ? " (rows)" : ""), " has depth ", key_depth,
                             " but query ", q.to_string(), " has ", s.depth);
    if (v.dim_from_end(1) != s.keys)
      return detail::invalid("value ", v.to_string(), " has ", v.dim_from_end(1), " rows but there are ", s.keys,
                             " keys");
    TensorShape scores(q.dims().first(batch_rank));
    scores.push_back(s.queries);
    scores.push_back(s.keys);
    if (in.size() > 3) {
      auto broadcast = detail::broadcast_shapes(scores, in[3].shape);
      if (!broadcast) return broadcast.status();
      if (*broadcast != scores)
        return detail::invalid("mask ", in[3].shape.to_string(), " does not broadcast to the scores ",
                               scores.to_string());
    }
    TensorShape y(q.dims().first(batch_rank));
    y.push_back(s.queries);
    y.push_back(s.value_depth);
    out[0] = TensorInfo{y, in[0].type, {}};
    return Status::ok();
  }
};

}  // namespace kiln::ops
