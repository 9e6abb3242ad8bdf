#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fuzzes an importer with libFuzzer for SECONDS (default 600) with clang's AddressSanitizer and
# UndefinedBehaviorSanitizer:
#   sh tools/fuzz.sh onnx [SECONDS]    the ONNX importer (tests/onnx/fuzz_import.cpp), from the models
#                                      kiln ships and a sample of the ONNX test models; needs
#                                      libprotobuf-dev, libonnx-dev
#   sh tools/fuzz.sh tflite [SECONDS]  the TensorFlow Lite importer (tests/tflite/fuzz_import.cpp),
#                                      from the TFLite fixtures and the saved regressions; needs
#                                      libflatbuffers-dev, flatbuffers-compiler
# Both need clang and libfuzzer-14-dev (or clang's own runtime). Findings (crash-*, leak-*,
# timeout-*) are written to build-fuzz/FORMAT/.
set -eu
cd "$(dirname "$0")/.."
format="${1:?usage: sh tools/fuzz.sh onnx|tflite [SECONDS]}"
seconds="${2:-600}"
out="build-fuzz/$format"
mkdir -p "$out/corpus" "$out/kiln"
# The fuzzers need only RefBackend; kiln's config header says so.
sed -e 's/@KILN_VERSION@/"fuzz"/' -e 's/@KILN_WITH_NEON@/0/' -e 's/@KILN_WITH_CL@/0/' include/kiln/config.hpp.in > "$out/kiln/config.hpp"
fuzz() {
  clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Iinclude -I"$out" \
    "$@" -o "$out/fuzz_import"
}
case "$format" in
  onnx)
    fuzz -DONNX_ML=1 -DONNX_NAMESPACE=onnx tests/onnx/fuzz_import.cpp src/import/onnx/*.cpp -lonnx_proto -lprotobuf
    cp examples/digits/digits_cnn.onnx "$out/corpus/"
    for model in tests/models/*/model.onnx; do cp "$model" "$out/corpus/$(basename "$(dirname "$model")").onnx"; done
    for case in conv_with_strides_padding gemm_all_attributes reshape_negative_dim slice_neg_steps \
                resize_upsample_sizes_nearest split_variable_parts_2d maxpool_2d_pads transpose_all_permutations_3 \
                softmax_axis_1 pad; do
      model=/usr/share/libonnx-testdata/data/node/test_$case/model.onnx
      [ -f "$model" ] && cp "$model" "$out/corpus/$case.onnx"
    done
    max_len=262144
    ;;
  tflite)
    flatc --cpp --scoped-enums --gen-name-strings -o "$out" src/import/tflite/tflite_subset.fbs
    fuzz -Isrc/import/tflite tests/tflite/fuzz_import.cpp src/import/tflite/*.cpp
    for model in tests/fixtures/tflite/*/model.tflite; do cp "$model" "$out/corpus/$(basename "$(dirname "$model")").tflite"; done
    cp tests/tflite/fuzz_regressions/* "$out/corpus/" 2>/dev/null || true
    max_len=400000
    ;;
  *) echo "usage: sh tools/fuzz.sh onnx|tflite [SECONDS]" >&2; exit 2 ;;
esac
cd "$out"
./fuzz_import -max_total_time="$seconds" -rss_limit_mb=4096 -max_len="$max_len" -print_final_stats=1 corpus
