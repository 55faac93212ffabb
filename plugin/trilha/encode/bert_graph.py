"""A BERT sentence-transformers folder as an ONNX graph, written without torch or optimum.

The packaged all-MiniLM-L6-v2 is a BERT: its weights (``model.safetensors``) are read here with
numpy alone and laid out as the ONNX graph that optimum's export makes of it, op for op (word +
token type + position embeddings and a layer norm; per layer, the Q/K/V products, attention with
both factors scaled by the fourth root of the head size, a padding bias of the float32 minimum,
the output product, residual layer norms and the erf GELU), so ONNX Runtime computes the same
vectors: against that export the packaged model's vectors differ by at most ~1e-6 (cosine
1.000000) on SciFact's texts. :func:`export` writes the folder the encoder runs
(:mod:`trilha.encode.onnx_encoder`): the source's tokenizer and configuration files and
``onnx/model.onnx``. Folders this does not describe (:func:`supports` is False) are exported
through optimum, which needs torch.
"""

from __future__ import annotations

import json
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from trilha.encode.onnx_folder import ONNX_FILE, read_json
from trilha.errors import ModelLoadError

WEIGHTS_FILE = "model.safetensors"
#: safetensors' dtype names of the tensors a BERT checkpoint holds.
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
#: Files and folders of the source that the export does not copy (weights, other exports).
_NOT_COPIED = ("*.safetensors", "*.bin", "*.onnx", "*.h5", "*.msgpack", "onnx", "openvino")


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Every tensor of a ``.safetensors`` file as a numpy array: an 8-byte little-endian header
    size, a JSON header naming each tensor's dtype, shape and byte range, then the bytes."""
    try:
        data = path.read_bytes()
        (size,) = struct.unpack_from("<Q", data)
        header = json.loads(data[8 : 8 + size])
    except (OSError, struct.error, ValueError) as e:
        raise ModelLoadError(f"cannot read the weights {path}: {e}") from e
    start = 8 + size
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ModelLoadError(f"{path}: tensor {name!r} is {entry['dtype']}, not read here")
        begin, end = entry["data_offsets"]
        raw = np.frombuffer(data, dtype, (end - begin) // np.dtype(dtype).itemsize, start + begin)
        out[name] = raw.reshape(entry["shape"])
    return out


@dataclass(frozen=True)
class BertShape:
    """The sizes of a BERT encoder, from its ``config.json``."""

    hidden: int
    layers: int
    heads: int
    eps: float


def _shape(folder: Path) -> BertShape | None:
    """The folder's BERT sizes when its config describes a plain BERT encoder, else None."""
    config = read_json(folder, "config.json")
    plain = (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
    )
    sizes = [config.get(k) for k in ("hidden_size", "num_hidden_layers", "num_attention_heads")]
    if not plain or not all(isinstance(s, int) and s > 0 for s in sizes):
        return None
    hidden, layers, heads = (int(s) for s in sizes)  # type: ignore[arg-type]
    if hidden % heads:
        return None
    return BertShape(hidden, layers, heads, float(config.get("layer_norm_eps", 1e-12)))


def supports(folder: Path) -> bool:
    """Whether ``folder`` is a BERT sentence-transformers folder this module exports: a plain
    BERT config, its weights as ``model.safetensors`` and a ``tokenizer.json``."""
    return (
        (folder / WEIGHTS_FILE).exists()
        and (folder / "tokenizer.json").exists()
        and _shape(folder) is not None
    )


class _Graph:
    """Nodes and initialisers of the graph being written."""

    def __init__(self, weights: dict[str, npt.NDArray[Any]]) -> None:
        from onnx import helper, numpy_helper

        self._helper, self._array = helper, numpy_helper.from_array
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
        self.weights = {k.removeprefix(prefix): v for k, v in weights.items()}
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []

    def tensor(self, name: str) -> npt.NDArray[np.float32]:
        if name not in self.weights:
            raise ModelLoadError(f"the BERT weights lack the tensor {name!r}")
        return np.asarray(self.weights[name], dtype=np.float32)

    def constant(self, name: str, array: npt.NDArray[Any]) -> str:
        self.initializers.append(self._array(np.ascontiguousarray(array), name))
        return name

    def weight(self, name: str) -> str:
        return self.constant(name, self.tensor(name))

    def node(self, op: str, inputs: list[str], output: str, domain: str = "", **attrs: Any) -> str:
        self.nodes.append(self._helper.make_node(op, inputs, [output], domain=domain, **attrs))
        return output

    def dense(self, x: str, name: str, out: str) -> str:
        """``x @ W.T + b`` of the linear layer ``name`` (product, then bias, as exported)."""
        return self.node("Add", [self.weight(name + ".bias"), self.product(x, name, out)], out)

    def product(self, x: str, name: str, out: str) -> str:
        """``x @ W.T`` of the linear layer ``name``."""
        transposed = self.constant(name + ".wt", self.tensor(name + ".weight").T)
        return self.node("MatMul", [x, transposed], out + ".mm")

    def norm(self, x: str, name: str, eps: float, out: str) -> str:
        inputs = [x, self.weight(name + ".weight"), self.weight(name + ".bias")]
        return self.node("LayerNormalization", inputs, out, axis=-1, epsilon=eps)


def _attention(g: _Graph, x: str, p: str, shape: BertShape, scale: str, bias: str) -> str:
    heads, size = shape.heads, shape.hidden // shape.heads
    split = g.constant(f"{p}.split", np.array([0, 0, heads, size], dtype=np.int64))
    merge = g.constant(f"{p}.merge", np.array([0, 0, shape.hidden], dtype=np.int64))
    q, k, v = (
        g.node("Reshape", [g.dense(x, f"{p}.attention.self.{n}", f"{p}.{n}"), split], f"{p}.{n}.h")
        for n in ("query", "key", "value")
    )
    q = g.node("Mul", [g.node("Transpose", [q], f"{p}.qt", perm=[0, 2, 1, 3]), scale], f"{p}.qs")
    k = g.node("Mul", [g.node("Transpose", [k], f"{p}.kt", perm=[0, 2, 3, 1]), scale], f"{p}.ks")
    v = g.node("Transpose", [v], f"{p}.vt", perm=[0, 2, 1, 3])
    scores = g.node("Add", [g.node("MatMul", [q, k], f"{p}.qk"), bias], f"{p}.scores")
    weights = g.node("Softmax", [scores], f"{p}.probs", axis=-1)
    context = g.node("MatMul", [weights, v], f"{p}.ctx")
    context = g.node("Transpose", [context], f"{p}.ctx.t", perm=[0, 2, 1, 3])
    return g.node("Reshape", [context, merge], f"{p}.ctx.m")


def _layer(g: _Graph, x: str, layer: int, shape: BertShape, scale: str, bias: str) -> str:
    p = f"encoder.layer.{layer}"
    context = _attention(g, x, p, shape, scale, bias)
    attended = g.dense(context, f"{p}.attention.output.dense", f"{p}.ao")
    residual = g.node("Add", [attended, x], f"{p}.r1")
    x = g.norm(residual, f"{p}.attention.output.LayerNorm", shape.eps, f"{p}.x1")
    name = f"{p}.intermediate.dense"
    inner = g.product(x, name, f"{p}.fi")
    activated = g.node("BiasGelu", [inner, g.weight(name + ".bias")], f"{p}.g", "com.microsoft")
    outer = g.dense(activated, f"{p}.output.dense", f"{p}.fo")
    residual = g.node("Add", [outer, x], f"{p}.r2")
    return g.norm(residual, f"{p}.output.LayerNorm", shape.eps, f"{p}.out")


def build(weights: dict[str, npt.NDArray[Any]], shape: BertShape) -> bytes:
    """The serialised ONNX model of the BERT encoder in ``weights``: inputs ``input_ids``,
    ``attention_mask`` and ``token_type_ids`` (batch, tokens), output ``last_hidden_state``."""
    from onnx import TensorProto, helper

    g = _Graph(weights)
    one = g.constant("one", np.array([1], dtype=np.int64))
    zero = g.constant("zero", np.array([0], dtype=np.int64))
    length = g.node("Gather", [g.node("Shape", ["input_ids"], "ids.shape"), one], "length", axis=0)
    table = g.weight("embeddings.position_embeddings.weight")
    positions = g.node("Slice", [table, zero, length, zero], "pos")
    table = g.weight("embeddings.word_embeddings.weight")
    words = g.node("Gather", [table, "input_ids"], "words", axis=0)
    table = g.weight("embeddings.token_type_embeddings.weight")
    types = g.node("Gather", [table, "token_type_ids"], "types", axis=0)
    summed = g.node("Add", [g.node("Add", [words, types], "wt"), positions], "emb")
    x = g.norm(summed, "embeddings.LayerNorm", shape.eps, "x")
    # padding: the float32 minimum added to its scores (batch, 1, 1, tokens), 0 elsewhere
    axes = g.constant("mask.axes", np.array([1, 2], dtype=np.int64))
    mask = g.node("Unsqueeze", ["attention_mask", axes], "mask.4d")
    padded = g.node("Equal", [mask, g.constant("mask.zero", np.array(0, dtype=np.int64))], "pad")
    lowest = g.constant("mask.min", np.array(np.finfo(np.float32).min, dtype=np.float32))
    keep = g.constant("mask.keep", np.array(0.0, dtype=np.float32))
    bias = g.node("Where", [padded, lowest, keep], "mask.bias")
    # q and k each scaled by sqrt(1/sqrt(head size)), computed in float32 as the export does
    root = np.sqrt(np.float32(1.0) / np.sqrt(np.float32(shape.hidden // shape.heads)))
    scale = g.constant("scale", np.asarray(root, dtype=np.float32))
    for layer in range(shape.layers):
        x = _layer(g, x, layer, shape, scale, bias)
    x = g.node("Identity", [x], "last_hidden_state")
    tokens = ["batch", "tokens"]
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, tokens)
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    states: list[str | int] = [*tokens, shape.hidden]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, states)
    graph = helper.make_graph(g.nodes, "bert", inputs, [output], g.initializers)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 9  # readable by every ONNX Runtime trilha supports (>= 1.18)
    return bytes(model.SerializeToString())


def export(source: Path, folder: Path) -> None:
    """Write ``source``'s encoder into ``folder`` as the ONNX encoder runs it: the source's
    tokenizer, configuration and module files, and ``onnx/model.onnx`` built from its weights."""
    shape = _shape(source)
    if shape is None:
        raise ModelLoadError(f"{source} is not a BERT folder this exporter reads")
    model = build(read_safetensors(source / WEIGHTS_FILE), shape)
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns(*_NOT_COPIED), dirs_exist_ok=True)
    (folder / ONNX_FILE).parent.mkdir(parents=True, exist_ok=True)
    (folder / ONNX_FILE).write_bytes(model)
