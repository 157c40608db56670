"""Remedies that fit the model family: no "use ReLU" for a transformer.

A rule's remedies are written for the models its mechanism is usually met in: saturated sigmoid/tanh units and
vanishing gradients in deep MLPs and RNNs, where another activation, He initialisation or normalisation is the
fix (Glorot and Bengio 2010; He et al. 2015). A transformer (BERT, GPT, LLaMA-style, T5, ViT) already uses
GELU/ReLU feed-forward layers, layer normalisation and residual connections (Vaswani et al. 2017); when its
gradients vanish or its units saturate the usual levers are the learning rate against the recipe, the warm-up
and the placement of layer normalisation (Xiong et al. 2020, "On Layer Normalization in the Transformer
Architecture"; Liu et al. 2020, "Understanding the Difficulty of Training Transformers"). ``FAMILY_REMEDIES``
replaces, for a family group and a cause, the remedies that name what the family does not have.
"""

from __future__ import annotations

import re

#: recipe-table family ids (advisor/knowledge/recipes.py) of transformer models
TRANSFORMERS = frozenset({"bert", "ms_bert", "gpt", "llm", "t5", "vit"})

#: remedies that change the activation function or add what a transformer already has
_ACTIVATION_REMEDY = re.compile(r"\bReLU\b|sigmoid/tanh|residual connections|Xavier|He initiali[sz]ation", re.I)

_TRANSFORMER_FIX = (
    "In a transformer the activation is not the lever: compare the learning rate with the family's recipe (a "
    "fine-tune runs at 1e-5 to 5e-5 for BERT-size models), keep the recipe's warm-up, and keep layer "
    "normalisation before each sub-layer (pre-LN) and gradient clipping as the recipe has them."
)

#: (family group, cause) -> the remedy that replaces the ones the family does not need
FAMILY_REMEDIES: dict[tuple[str, str], str] = {
    ("transformer", "gradient_vanishing"): _TRANSFORMER_FIX,
    ("transformer", "activation_saturation"): _TRANSFORMER_FIX,
}

REFERENCES = (
    "https://arxiv.org/abs/1706.03762",
    "https://arxiv.org/abs/2002.04745",
    "https://arxiv.org/abs/2004.08249",
)


def group_of(family: str | None) -> str | None:
    return "transformer" if family in TRANSFORMERS else None


def fit_remedies(cause: str, remedies: list[str], family: str | None) -> list[str]:
    """The remedies of ``cause`` for a run of ``family``: those naming what the family lacks replaced."""
    fix = FAMILY_REMEDIES.get((group_of(family) or "", cause))
    if fix is None:
        return remedies
    kept = [r for r in remedies if not _ACTIVATION_REMEDY.search(r)]
    return [fix, *kept]
