"""Causes that produce the evidence of other causes: the root first, the derived ones say what they derive from.

An expert reading "learning rate 33x its band" next to "activations saturated" and "gradients vanish" names the
rate: a step that large drives pre-activations into a sigmoid's or tanh's flat region (saturation), where the
gradient is near zero (vanishing), and blows up what is not bounded (divergence, exploding gradients). The
saturation rules are right about what they saw, but what they saw is the rate's doing, and their remedy
(another activation) treats the symptom. ``DERIVES`` lists, for each cause whose evidence another cause can
produce, those roots, from the mechanisms of docs/causes.md:

- exploding gradients: a step too large for the curvature (Goodfellow et al., Deep Learning, 2016, 8.2.4 and
  10.11.1), a weight initialisation whose scale grows layer by layer (Glorot and Bengio 2010; He et al. 2015),
  inputs far from unit scale, which scale every first-layer gradient with them (LeCun et al., Efficient
  BackProp, 1998);
- saturated activations and vanishing gradients: the same three push pre-activations out of the linear region
  (Glorot and Bengio 2010; LeCun et al. 1998), and saturation itself makes the gradient vanish;
- a learning rate that looks too low (a loss that falls slowly): unscaled inputs and saturated or badly
  initialised units slow learning at any rate (LeCun et al. 1998);
- an optimizer that looks miswired (updates that grow the weights along themselves): an adaptive optimizer moves
  every coordinate by about the learning rate per step whatever the gradient (Kingma and Ba 2015, 2.1), so at a
  rate far above its band its updates swamp the gradient's direction.

A derived cause counts as derived in a run only where the root was found by its own rules at least as
confidently (``ROOT_MIN`` or more, and not below the derived one): then its evidence is explained by the root,
and it keeps only its prior's weight (advisor/explain.py); in a run with no symptom (no prior), it keeps the
chance that its evidence is not the root's doing, its confidence x (1 - the root's).
"""

from __future__ import annotations

#: derived cause -> the causes that produce its evidence (checked in this order)
DERIVES: dict[str, tuple[str, ...]] = {
    "gradient_explosion": ("lr_too_high", "weight_init_bad", "not_normalized"),
    "activation_saturation": ("lr_too_high", "weight_init_bad", "not_normalized"),
    "gradient_vanishing": ("lr_too_high", "weight_init_bad", "not_normalized", "activation_saturation"),
    "lr_too_low": ("not_normalized", "activation_saturation", "weight_init_bad"),
    "optimizer_error": ("lr_too_high",),
}
#: the rules' calibrated confidence a root needs before it explains another cause's evidence
ROOT_MIN = 0.5

REFERENCES = (
    "https://www.deeplearningbook.org/contents/optimization.html",
    "https://proceedings.mlr.press/v9/glorot10a.html",
    "https://arxiv.org/abs/1502.01852",
    "http://yann.lecun.com/exdb/publis/pdf/lecun-98b.pdf",
    "https://arxiv.org/abs/1412.6980",
)


def root_of(cause: str, rule_confidence: dict[str, float]) -> str | None:
    """The cause that explains ``cause``'s evidence in a run whose rules gave ``rule_confidence``; None if none."""
    own = rule_confidence.get(cause)
    if own is None:
        return None
    for root in DERIVES.get(cause, ()):
        p = rule_confidence.get(root)
        if p is not None and p >= ROOT_MIN and p >= own:
            return root
    return None
