"""Every node output of an ONNX model, run once with ONNX Runtime, as a plain-layout dump (issue 27).

A benchmark exported to ONNX (``torch.onnx.export``, tf2onnx, a vendor's converter) is compared with the
port the same way as a PyTorch benchmark: ``dump_onnx`` writes one ``.npy`` per node output, in the graph's
order (ONNX graphs are topologically sorted: that is an execution order), and a ``manifest.json`` naming each
tensor and its ONNX operator type; ``advisor compare`` and ``diagnose`` read it as any plain dump.

Names follow the exporter's scopes. ``torch.onnx.export`` names a node ``/encoder/layer.0/fc1/Gemm``: the
module path (``encoder.layer.0.fc1``) and the operator. The last node of a run of nodes with one module path
produces that module's output, so its tensor is named as advisor's capture hook names the module's output
(``encoder.layer.0.fc1.forward.output.0``) and a PyTorch dump of the same model matches it by name; the
other nodes of the group (a LayerNorm or GELU that an older opset splits into ReduceMean, Sub, Pow ...) are
named ``{module}/{op}.forward.output.{k}`` and compared by position. Nodes without a scope keep their own
name.

The model file is read with ``onnx`` (no code in it is run) and then executed by ``onnxruntime`` on the
inputs given; both are optional dependencies (``pip install onnx onnxruntime``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from advisor.capture.writer import safe_file_name


def _module_and_op(node_name: str) -> tuple[str | None, str]:
    """'/encoder/layer.0/fc1/Gemm' -> ('encoder.layer.0.fc1', 'Gemm'); 'Gemm_3' -> (None, 'Gemm_3')."""
    parts = [p for p in node_name.split("/") if p]
    if node_name.startswith("/") and len(parts) >= 2:
        return ".".join(parts[:-1]), parts[-1]
    return None, node_name or "node"


def tensor_names(nodes: list[Any]) -> list[list[str]]:
    """For each node, the dump names of its outputs (see the module docstring)."""
    scopes = [_module_and_op(n.name)[0] for n in nodes]
    # the scope of the next computing node after each node (Constant nodes do not end a group): one pass back
    next_scope: list[str | None] = [None] * len(nodes)
    upcoming: str | None = None
    for i in range(len(nodes) - 1, -1, -1):
        next_scope[i] = upcoming
        if nodes[i].op_type != "Constant":
            upcoming = scopes[i]
    out: list[list[str]] = []
    for i, node in enumerate(nodes):
        module, op = _module_and_op(node.name)
        last_of_group = module is not None and next_scope[i] != module
        names = []
        for k, _ in enumerate(node.output):
            if last_of_group:
                names.append(f"{module}.forward.output.{k}")
            elif module is not None:
                names.append(f"{module}/{op}.forward.output.{k}")
            else:
                names.append(f"{node.name or node.op_type + '_' + str(i)}.forward.output.{k}")
        out.append(names)
    return out


def dump_onnx(model_path: str | os.PathLike, inputs: Mapping[str, Any], out_dir: str | os.PathLike) -> Path:
    """Run the ONNX model at ``model_path`` once on ``inputs`` (graph input name -> array) and write every node
    output to ``out_dir`` (created; it must not hold a dump already) as ``NNNN_name.npy`` plus ``manifest.json``.
    Returns the folder. Raises ValueError for inputs the graph does not have, or a folder that is not empty."""
    import numpy as np
    import onnx
    import onnxruntime as ort

    model = onnx.load(os.fspath(model_path))
    graph = model.graph
    initializers = {t.name for t in graph.initializer}
    wanted = [i.name for i in graph.input if i.name not in initializers]
    missing = [n for n in wanted if n not in inputs]
    extra = [n for n in inputs if n not in wanted]
    if missing or extra:
        raise ValueError(f"the graph's inputs are {wanted}; missing {missing}, not in the graph {extra}")
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"'{out}' is not empty: give a new folder for the dump")
    out.mkdir(parents=True, exist_ok=True)
    nodes = list(graph.node)
    names = tensor_names(nodes)
    listed = {o.name for o in graph.output}
    for node in nodes:  # every node output becomes a graph output (type left to the runtime)
        for t in node.output:
            if t and t not in listed:
                graph.output.append(onnx.ValueInfoProto(name=t))
                listed.add(t)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    fetch = [o.name for o in session.get_outputs()]
    values = dict(zip(fetch, session.run(fetch, {k: np.asarray(v) for k, v in inputs.items()})))
    entries: list[dict[str, str]] = []
    for i, node in enumerate(nodes):
        if node.op_type == "Constant":  # a value of the graph, not a computation
            continue
        for k, t in enumerate(node.output):
            if not t or t not in values:
                continue
            value = np.asarray(values[t])
            if value.dtype.hasobject:  # a sequence or map output: not a tensor
                continue
            name = names[i][k]
            file = f"{len(entries):04d}_{safe_file_name(name)}.npy"
            np.save(out / file, value, allow_pickle=False)
            entries.append({"name": name, "file": file, "op_type": node.op_type, "onnx_output": t})
    manifest = {"framework": "onnxruntime", "device": "cpu", "tensors": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return out
