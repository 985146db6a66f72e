"""ONNX graphs of causal grouped-query attention, the peers of web/bench/webgpu-attention.mjs
in onnxruntime-web, written with the onnx package's helpers (Debian's python3-onnx).

    /usr/bin/python3 web/bench/attention_onnx.py --out DIR --heads 32 --kv-heads 4 --head-size 64 --tokens 1024

writes two models to DIR, for one sequence of T tokens (no cache), f32:
  unfused.onnx  the attention as plain operators: K and V repeated to the query heads
                (Reshape, Expand, Reshape), MatMul with K transposed, times 1/sqrt(D), plus a
                causal bias (0 or -inf, an input), Softmax, MatMul with V.
                inputs  q [1, Hq, T, D], k [1, Hkv, T, D], v [1, Hkv, T, D], bias [T, T]
                output  out [1, Hq, T, D]
  gqa.onnx      onnxruntime's GroupQueryAttention contrib operator (com.microsoft), causal.
                inputs  query [1, T, Hq D], key [1, T, Hkv D], value [1, T, Hkv D],
                        seqlens_k [1] (T - 1), total_sequence_length [] (T)
                output  output [1, T, Hq D] (and the present keys and values)
"""

import argparse
import math
import os
import sys

import onnx
from onnx import TensorProto, helper


def unfused(heads, kv_heads, head_size, tokens):
    group = heads // kv_heads
    f32 = TensorProto.FLOAT
    inputs = [
        helper.make_tensor_value_info("q", f32, [1, heads, tokens, head_size]),
        helper.make_tensor_value_info("k", f32, [1, kv_heads, tokens, head_size]),
        helper.make_tensor_value_info("v", f32, [1, kv_heads, tokens, head_size]),
        helper.make_tensor_value_info("bias", f32, [tokens, tokens]),
    ]
    outputs = [helper.make_tensor_value_info("out", f32, [1, heads, tokens, head_size])]
    constants = [
        helper.make_tensor("split_shape", TensorProto.INT64, [5], [1, kv_heads, 1, tokens, head_size]),
        helper.make_tensor("expanded_shape", TensorProto.INT64, [5], [1, kv_heads, group, tokens, head_size]),
        helper.make_tensor("heads_shape", TensorProto.INT64, [4], [1, heads, tokens, head_size]),
        helper.make_tensor("scale", f32, [], [1.0 / math.sqrt(head_size)]),
    ]
    nodes = []
    for name in ("k", "v"):
        nodes += [
            helper.make_node("Reshape", [name, "split_shape"], [f"{name}_split"]),
            helper.make_node("Expand", [f"{name}_split", "expanded_shape"], [f"{name}_expanded"]),
            helper.make_node("Reshape", [f"{name}_expanded", "heads_shape"], [f"{name}_heads"]),
        ]
    nodes += [
        helper.make_node("Transpose", ["k_heads"], ["k_t"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "k_t"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Add", ["scaled", "bias"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "v_heads"], ["out"]),
    ]
    graph = helper.make_graph(nodes, "unfused_attention", inputs, outputs, initializer=constants)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def gqa(heads, kv_heads, head_size, tokens):
    f32 = TensorProto.FLOAT
    inputs = [
        helper.make_tensor_value_info("query", f32, [1, tokens, heads * head_size]),
        helper.make_tensor_value_info("key", f32, [1, tokens, kv_heads * head_size]),
        helper.make_tensor_value_info("value", f32, [1, tokens, kv_heads * head_size]),
        helper.make_tensor_value_info("seqlens_k", TensorProto.INT32, [1]),
        helper.make_tensor_value_info("total_sequence_length", TensorProto.INT32, []),
    ]
    outputs = [
        helper.make_tensor_value_info("output", f32, [1, tokens, heads * head_size]),
        helper.make_tensor_value_info("present_key", f32, None),
        helper.make_tensor_value_info("present_value", f32, None),
    ]
    node = helper.make_node(
        "GroupQueryAttention",
        ["query", "key", "value", "", "", "seqlens_k", "total_sequence_length"],
        ["output", "present_key", "present_value"],
        domain="com.microsoft",
        num_heads=heads,
        kv_num_heads=kv_heads,
        scale=1.0 / math.sqrt(head_size),
    )
    graph = helper.make_graph([node], "group_query_attention", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def main():
    parser = argparse.ArgumentParser(description="ONNX graphs of causal grouped-query attention (f32, one sequence).")
    parser.add_argument("--out", required=True, help="a folder for unfused.onnx and gqa.onnx")
    parser.add_argument("--heads", type=int, required=True)
    parser.add_argument("--kv-heads", type=int, required=True)
    parser.add_argument("--head-size", type=int, required=True)
    parser.add_argument("--tokens", type=int, required=True)
    args = parser.parse_args()
    if min(args.heads, args.kv_heads, args.head_size, args.tokens) < 1 or args.heads % args.kv_heads:
        sys.exit("attention_onnx.py: the heads, KV heads, head size and tokens must be positive, the KV heads dividing the heads")
    os.makedirs(args.out, exist_ok=True)
    shape = (args.heads, args.kv_heads, args.head_size, args.tokens)
    for name, model in (("unfused.onnx", unfused(*shape)), ("gqa.onnx", gqa(*shape))):
        if name == "unfused.onnx":
            onnx.checker.check_model(model)  # the contrib operator is outside the checker's schemas
        path = os.path.join(args.out, name)
        with open(path + ".part", "wb") as f:
            f.write(model.SerializeToString())
        os.replace(path + ".part", path)


if __name__ == "__main__":
    main()
