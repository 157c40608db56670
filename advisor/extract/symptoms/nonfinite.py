"""Detectors of non-finite values: a NaN/Inf train loss (before any update, or after how many), a run stopped on
one, a NaN/Inf eval loss beside a finite train loss, a NaN/Inf gradient norm, a dynamic loss scale that fell to 1."""

from __future__ import annotations

from advisor.facts.symptom import Symptom

from advisor.extract.symptoms.evidence import RunEvidence, num, on_curve, updates_before, where


def train_loss(ev: RunEvidence) -> list[Symptom]:
    """The first train loss that turned NaN/Inf: from its first value before any update, or after N updates."""
    train = next((c for c in ev.curves if c.split == "train" and c.first_nonfinite_step is not None), None)
    if train is None or train.first_nonfinite_step is None:
        return []
    step = train.first_nonfinite_step
    updates = updates_before(train, step)
    first_is_bad = train.first_value is None or train.first_step == step
    at_start = first_is_bad and (updates == 0 or (train.x_unit != "step" and train.first_step in (0, 1)))
    name = train.metric_name or "loss"
    if at_start:
        text = (
            f"The train loss ({name}) is NaN or infinite from its first value{where(train, step)}, before any update."
        )
    else:
        after = f" (after {updates} update{'s' if updates != 1 else ''})" if updates is not None else ""
        verb = "is NaN or infinite from its first logged value," if first_is_bad else "became NaN or infinite"
        text = f"The train loss ({name}) {verb}{where(train, step)}{after}."
    return [
        on_curve(
            train,
            name="nonfinite_loss_at_start" if at_start else "nonfinite_loss",
            text=text,
            step=step,
            x_unit=train.x_unit,
            updates_before=0 if at_start else updates,
        )
    ]


#: zeros a train loss must log beside a NaN gradient norm to be a NaN the logger left out
HIDDEN_NAN_MIN_ZEROS = 2


def hidden_as_zero(ev: RunEvidence) -> list[Symptom]:
    """A train loss that ends logged as exactly 0 while the gradient norm is NaN/Inf: the transformers Trainer's
    ``logging_nan_inf_filter`` (on by default) leaves NaN/Inf losses out of the mean it logs, and a window of only
    NaN steps logs 0. The loss is NaN, not 0."""
    train = ev.train()
    grads = next((g for g in ev.grads if g.nonfinite_count >= HIDDEN_NAN_MIN_ZEROS and g.is_nonfinite_at_end), None)
    if train is None or grads is None or train.zero_count < HIDDEN_NAN_MIN_ZEROS or train.last_value != 0.0:
        return []
    step = grads.first_nonfinite_step
    name = train.metric_name or "loss"
    return [
        on_curve(
            train,
            name="nonfinite_loss",
            text=f"The train loss ({name}) is logged as exactly 0 at {train.zero_count} values while the gradient norm "
            f"is NaN or infinite ({grads.nonfinite_count} times{', the first' + where(train, step) if step is not None else ''}): a "
            "logger that leaves NaN losses out of its mean (the transformers Trainer's logging_nan_inf_filter, on "
            "by default) logs 0 for a window of NaN steps. The loss is NaN.",
            step=step,
            x_unit=train.x_unit,
            updates_before=updates_before(train, step) if step is not None else None,
        )
    ]


def crash(ev: RunEvidence) -> list[Symptom]:
    """The run stopped on a non-finite loss (a framework's NaN check, a FloatingPointError)."""
    c = next((c for c in ev.crashes if c.is_nonfinite), None)
    if c is None:
        return []
    at = f" after step {c.step}" if c.step is not None else ""
    return [
        Symptom(
            name="nonfinite_loss",
            text=f"The run stopped on a non-finite loss{at}.",
            step=c.step,
            x_unit="step" if c.step is not None else None,
            source=c.source,
        )
    ]


def eval_loss(ev: RunEvidence) -> list[Symptom]:
    """An eval loss that is NaN/Inf, said beside whether the train loss stays finite."""
    evals = next((c for c in ev.curves if c.split == "eval" and c.first_nonfinite_step is not None), None)
    if evals is None:
        return []
    name = evals.metric_name or "eval loss"
    train_ok = any(c.split == "train" and c.points for c in ev.curves)
    return [
        on_curve(
            evals,
            name="nonfinite_eval_loss",
            text=f"The eval loss ({name}) is NaN or infinite{where(evals, evals.first_nonfinite_step)}"
            + (" while the train loss stays finite." if train_ok else "."),
            step=evals.first_nonfinite_step,
            x_unit=evals.x_unit,
        )
    ]


def gradients(ev: RunEvidence) -> list[Symptom]:
    """A gradient norm that is NaN/Inf while the loss stays finite (AMP skips such steps; a bug does not)."""
    g = next((g for g in ev.grads if g.first_nonfinite_step is not None), None)
    if g is None:
        return []
    tail = " and stays so" if g.is_nonfinite_at_end else ", then finite again"
    return [
        Symptom(
            name="nonfinite_gradients",
            text=f"The gradient norm is NaN or infinite at step {g.first_nonfinite_step} ({g.nonfinite_count} "
            f"time{'s' if g.nonfinite_count != 1 else ''}){tail}, while the loss stays finite.",
            step=g.first_nonfinite_step,
            x_unit="step",
            source=g.source,
        )
    ]


def loss_scale(ev: RunEvidence) -> list[Symptom]:
    """A dynamic loss scale that fell to 1: gradients overflow at every scale the scaler tried."""
    t = next((t for t in ev.loss_scales if t.reached_one and not t.is_constant), None)
    if t is None:
        return []
    start = f" from {num(t.initial_value)}" if t.initial_value is not None else ""
    return [
        Symptom(
            name="loss_scale_collapses",
            text=f"The dynamic loss scale fell to {num(t.final_value if t.final_value is not None else 1.0)}{start} "
            f"after {t.reductions} reductions: the gradients overflow at every scale.",
            level=t.final_value,
            reference=t.initial_value,
            source=t.source,
        )
    ]
