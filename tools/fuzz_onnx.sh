#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fuzzes the ONNX importer with libFuzzer for SECONDS (default 600) with clang's AddressSanitizer and
# UndefinedBehaviorSanitizer, starting from the models kiln ships and a sample of the ONNX test
# models. Needs clang, libfuzzer-14-dev (or clang's own runtime), libprotobuf-dev, libonnx-dev.
# Findings (crash-*, leak-*, timeout-*) are written to build-fuzz/.
set -eu
cd "$(dirname "$0")/.."
seconds="${1:-600}"
out=build-fuzz
mkdir -p "$out/corpus" "$out/kiln"
# The fuzzer needs only RefBackend; kiln's config header says so.
sed -e 's/@KILN_VERSION@/"fuzz"/' -e 's/@KILN_WITH_NEON@/0/' -e 's/@KILN_WITH_CL@/0/' include/kiln/config.hpp.in > "$out/kiln/config.hpp"
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DONNX_ML=1 -DONNX_NAMESPACE=onnx -Iinclude -I"$out" \
  tests/onnx/fuzz_import.cpp src/import/onnx/*.cpp \
  -lonnx_proto -lprotobuf -o "$out/fuzz_import"
cp examples/digits/digits_cnn.onnx "$out/corpus/"
for model in tests/models/*/model.onnx; do cp "$model" "$out/corpus/$(basename "$(dirname "$model")").onnx"; done
for case in conv_with_strides_padding gemm_all_attributes reshape_negative_dim slice_neg_steps resize_upsample_sizes_nearest \
            split_variable_parts_2d maxpool_2d_pads transpose_all_permutations_3 softmax_axis_1 pad; do
  model=/usr/share/libonnx-testdata/data/node/test_$case/model.onnx
  [ -f "$model" ] && cp "$model" "$out/corpus/$case.onnx"
done
cd "$out"
./fuzz_import -max_total_time="$seconds" -rss_limit_mb=4096 -max_len=262144 -print_final_stats=1 corpus
