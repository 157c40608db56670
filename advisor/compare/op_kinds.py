"""Which operators may give other outputs from the same inputs, run to run.

Used to read a dump pair as a rerun (two runs of one configuration) or a port
(another device, framework or build): a rerun is bit-identical up to its first
nondeterministic or random operator; an operator that is deterministic by
construction and computes other outputs from bit-identical inputs is computing
something else: an accuracy difference of the port, not a random error.

The lists are documented framework behaviour:

- PyTorch, "Reproducibility" and ``torch.use_deterministic_algorithms``: the
  operations that are nondeterministic on CUDA (atomics-based ``scatter_add_``,
  ``index_add_``, ``index_put_(accumulate=True)``, ``put_``, ``embedding_bag``
  and ``embedding`` backward, ``ctc_loss`` / ``nll_loss`` backward, pooling and
  interpolation backward, ``cumsum``, ``histc``, ``bincount``, convolution
  backward via cuDNN, and cuBLAS matmuls without a fixed workspace
  (split-K reductions)).
- MindSpore "deterministic computation" (``deterministic='ON'``): atomic-add
  reductions and the same kinds of scatter / gather-gradient kernels.
- Random operators (dropout, ``rand*``, ``bernoulli``, ``multinomial``,
  ``normal``) differ by construction unless their generator is seeded alike.

Elementwise operators, activations, normalisations and softmax are
deterministic on every backend (their outputs depend only on their inputs).
"""

from __future__ import annotations

import re
from typing import Literal

OpKind = Literal["random", "nondeterministic", "gpu_nondeterministic", "deterministic"]

#: random by construction
RANDOM = re.compile(
    r"dropout|bernoulli|multinomial|randn?\b|randint|randperm|rand_like|randn_like|normal_|uniform_|"
    r"\bnormal\b|\buniform\b|rrelu|gumbel",
    re.IGNORECASE,
)
#: atomics-based accumulation: nondeterministic order of floating-point additions
ATOMIC = re.compile(
    r"scatter|index_?add|index_?put|index_?reduce|\bput_|embedding_?bag|atomic|segment_?(sum|mean)|"
    r"unsorted_?segment|histc|bincount|cum_?sum|ctc_?loss",
    re.IGNORECASE,
)
#: nondeterministic in backward passes only (gradient accumulation with atomics / cuDNN algorithms)
BACKWARD_ATOMIC = re.compile(
    r"embedding|conv|pool|interpolate|upsample|grid_sample|nll_loss|gather|index_select|"
    r"cross_entropy|linear|matmul|mm\b|bmm",
    re.IGNORECASE,
)
#: accelerator kernels that may pick split-K / atomic-add / algorithm-dependent reductions (deterministic on CPU)
GPU_REDUCTION = re.compile(
    r"matmul|linear|\bmm\b|bmm|addmm|baddbmm|conv|einsum|attention|sdpa|"
    r"scaled_dot_product|sum|reduce",
    re.IGNORECASE,
)


def op_kind(op: str, op_type: str | None = None, device: str | None = None) -> OpKind:
    """Kind of one dumped operator call (``op`` as dumped, ``op_type`` as recorded, ``device`` if known)."""
    text = f"{op_type or ''} {op}"
    if RANDOM.search(text):
        return "random"
    if ATOMIC.search(text):
        return "nondeterministic"
    backward = ".backward" in op or op.endswith("backward") or "backward" in (op_type or "").lower()
    if backward and BACKWARD_ATOMIC.search(text):
        return "nondeterministic"
    if GPU_REDUCTION.search(text):
        return "deterministic" if (device or "").lower() == "cpu" else "gpu_nondeterministic"
    return "deterministic"


__all__ = ["OpKind", "op_kind"]
