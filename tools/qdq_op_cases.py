#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Single-op QDQ models (input -> QuantizeLinear -> DequantizeLinear -> op -> QuantizeLinear ->
DequantizeLinear) of the int8 ops whose arithmetic kiln defines itself (Softmax, ReduceMean/Sum/Max,
MatMul of two activations), u8 and s8, each with ONNX Runtime's output (graph optimisations off, so
that ONNX Runtime follows the QDQ definition in float), in the layout `kiln check` reads:

    /opt/kiln-bench-venv/bin/python tools/qdq_op_cases.py /tmp/qdq_ops
    for m in /tmp/qdq_ops/*; do build/tools/kiln/kiln check $m/model.onnx $m --rtol 0 --atol 0; done

The largest difference is the per-op bar of issue 16: one output unit (decision 0014 rounds ties
up where ONNX Runtime rounds them to even). Needs PyPI's onnxruntime and onnx; not run by CI.
"""
import os
import sys

import numpy as np
import onnx
import onnx.helper as h
import onnx.numpy_helper as nh
import onnxruntime as ort

out = sys.argv[1]
rng = np.random.default_rng(3)

def model(name, op_nodes, inputs, out_shape, y_q, extra_inits=(), elem=onnx.TensorProto.UINT8):
    """NAME/model.onnx: each (name, shape, (scale, zero point)) input quantised, `op_nodes` (reading
    NAME_dq, writing r), the result quantised with y_q; NAME/test_data_set_0 with ORT's output."""
    nodes, inits = [], list(extra_inits)
    zdt = np.uint8 if elem == onnx.TensorProto.UINT8 else np.int8
    graph_inputs = []
    for iname, shape, (s, z) in inputs:
        graph_inputs.append(h.make_tensor_value_info(iname, onnx.TensorProto.FLOAT, shape))
        inits += [nh.from_array(np.float32(s), f"{iname}_s"), nh.from_array(zdt(z), f"{iname}_z")]
        nodes += [h.make_node("QuantizeLinear", [iname, f"{iname}_s", f"{iname}_z"], [f"{iname}_q"]),
                  h.make_node("DequantizeLinear", [f"{iname}_q", f"{iname}_s", f"{iname}_z"], [f"{iname}_dq"])]
    nodes += op_nodes
    s, z = y_q
    inits += [nh.from_array(np.float32(s), "y_s"), nh.from_array(zdt(z), "y_z")]
    nodes += [h.make_node("QuantizeLinear", ["r", "y_s", "y_z"], ["y_q"]),
              h.make_node("DequantizeLinear", ["y_q", "y_s", "y_z"], ["y"])]
    graph_output = h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, out_shape)
    g = h.make_graph(nodes, name, graph_inputs, [graph_output], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(folder, "model.onnx"))
    feeds = {iname: (2 * rng.standard_normal(shape)).astype(np.float32) for iname, shape, _ in inputs}
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(m.SerializeToString(), options, providers=["CPUExecutionProvider"])
    y = session.run(None, feeds)[0]
    files = [(f"input_{i}.pb", nh.from_array(feeds[iname], iname)) for i, (iname, _, _) in enumerate(inputs)]
    for file, tensor in files + [("output_0.pb", nh.from_array(y, "y"))]:
        with open(os.path.join(folder, "test_data_set_0", file), "wb") as f:
            f.write(tensor.SerializeToString())
    print(name, "unit", s)

AXES = [nh.from_array(np.array([1], np.int64), "axes")]
# u8 activations are centred on zero point 128, s8 on 0; Softmax's output as ONNX Runtime fixes it.
for t, elem, z0, zs in (("u8", onnx.TensorProto.UINT8, 128, 0), ("s8", onnx.TensorProto.INT8, 0, -128)):
    model(f"softmax_{t}", [h.make_node("Softmax", ["x_dq"], ["r"], axis=-1)],
          [("x", [64, 1000], (0.05, z0))], [64, 1000], (1 / 256, zs), elem=elem)
    model(f"softmax_axis1_{t}", [h.make_node("Softmax", ["x_dq"], ["r"], axis=1)],
          [("x", [4, 37, 9], (0.11, z0))], [4, 37, 9], (0.0031, zs), elem=elem)
    model(f"reducemean_{t}", [h.make_node("ReduceMean", ["x_dq"], ["r"], axes=[1, 2], keepdims=1)],
          [("x", [2, 7, 7, 64], (0.03, z0))], [2, 1, 1, 64], (0.0021, z0 - 3), elem=elem)
    model(f"reducesum_{t}", [h.make_node("ReduceSum", ["x_dq", "axes"], ["r"], keepdims=0)],
          [("x", [3, 5, 17], (0.03, z0))], [3, 17], (0.07, z0 + 5), extra_inits=AXES, elem=elem)
    model(f"reducemax_{t}", [h.make_node("ReduceMax", ["x_dq"], ["r"], axes=[-1], keepdims=1)],
          [("x", [3, 5, 17], (0.03, z0))], [3, 5, 1], (0.02, z0 - 9), elem=elem)
    model(f"matmul_{t}", [h.make_node("MatMul", ["a_dq", "b_dq"], ["r"])],
          [("a", [2, 16, 32], (0.04, z0 + 3)), ("b", [2, 32, 24], (0.05, z0 - 4))], [2, 16, 24], (0.12, z0 + 1),
          elem=elem)
    model(f"matmul_bcast_{t}", [h.make_node("MatMul", ["a_dq", "b_dq"], ["r"])],
          [("a", [3, 1, 7, 33], (0.04, z0)), ("b", [4, 33, 5], (0.05, z0))], [3, 4, 7, 5], (0.09, z0), elem=elem)
