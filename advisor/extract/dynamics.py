"""``tensors.jsonl`` -> training-dynamics facts (stages: training_dynamics, model_structure).

The file is streamed once; each (tensor, kind) series keeps at most
``MAX_POINTS`` points (every second point is dropped when full, so memory is
bounded for a file of any size; the first point and the first NaN/Inf are
always kept). The numbers are then summarised with numpy in float64:

- per parameter (``param_dynamics``): changed or not, gradient present / zero,
  update ratio ||Δw||/||w||, cos(Δw, gradient), weight-norm growth, and the
  statistics at its first record (all zero, identical rows, std against the
  fan-in scale);
- per module output (``activation_stats``): share of zeros, share saturated;
- run-wide (``tensor_dynamics``): global gradient-norm growth, early/late
  layer gradient ratio, update-ratio median, first NaN/Inf;
- pairs of parameters identical at every step (``tied_params``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from advisor.chart_data import Marker
from advisor.extract.base import CheckRun, Extraction, RunPair
from advisor.extract.options import DynamicsOptions, read_group
from advisor.extract.dynamics_charts import dynamics_series
from advisor.facts.base import Source
from advisor.facts.dynamics import ActivationStats, FrozenWeights, ParamDynamics, TensorDynamics, TiedParams
from advisor.inventory import InputRecord
from advisor.read.run import RunRead, TensorsFile
from advisor.read.tensors import TensorReadLog

#: points kept per (tensor, kind) series
MAX_POINTS = 4096
#: distinct steps counted at most (steps_recorded saturates there)
MAX_STEPS_COUNTED = 1_000_000
#: above this many parameters (activations), only those with something notable become facts
MAX_FACTS = 300
#: cos(update, gradient) above this counts as moving uphill
ASCENT_COS = 0.5
#: cos(update not along the gradient, weights) above this counts as pushing the weights away from zero
AWAY_COS = 0.9
#: records of a parameter needed for its second-half growth rate
LATE_GROWTH_RECORDS = 6
SATURATING_TYPES = {"Sigmoid", "Hardsigmoid", "Tanh", "Hardtanh", "Softsign", "LogSigmoid"}
RELU_TYPES = {"ReLU", "ReLU6"}
#: fields kept per kind, in this order
FIELDS = {
    "weight": (
        "norm",
        "mean",
        "std",
        "min",
        "max",
        "zero_frac",
        "update_norm",
        "update_grad_cos",
        "numel",
        "update_resid_weight_cos",
    ),
    "grad": ("norm", "zero_frac", "numel"),
    "activation": ("zero_frac", "sat_frac", "nonfinite"),
}


@dataclass
class _Track:
    """One (tensor, kind) series, decimated when it grows past MAX_POINTS."""

    kind: str
    order: int
    steps: list[int] = field(default_factory=list)
    rows: list[tuple] = field(default_factory=list)
    seen: int = 0
    stride: int = 1
    shape: list[int] | None = None
    row_std: float | None = None
    first_std: float | None = None
    requires_grad: bool | None = None
    in_optimizer: bool | None = None
    module_type: str | None = None

    def add(self, step: int, row: tuple, keep: bool) -> None:
        self.seen += 1
        if not keep and (self.seen - 1) % self.stride:
            return
        self.steps.append(step)
        self.rows.append(row)
        if len(self.steps) > MAX_POINTS:
            self.steps = self.steps[:1] + self.steps[2::2]
            self.rows = self.rows[:1] + self.rows[2::2]
            self.stride *= 2

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(steps, values) sorted by step; for a repeated step the last record wins."""
        steps = np.asarray(self.steps, dtype=np.int64)
        vals = np.asarray(self.rows, dtype=np.float64).reshape(len(self.rows), -1)
        order = np.argsort(steps, kind="stable")
        steps, vals = steps[order], vals[order]
        last = np.r_[steps[1:] != steps[:-1], True] if steps.size else np.zeros(0, bool)
        return steps[last], vals[last]


def _f(v: float | None) -> float:
    return np.nan if v is None else v


def _median(a: np.ndarray) -> float | None:
    a = a[np.isfinite(a)]
    return float(np.median(a)) if a.size else None


def _py(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(v) else float(v)


@dataclass
class _Scan:
    tracks: dict[tuple[str, str], _Track] = field(default_factory=dict)
    first_bad: tuple[int, int, str, str] | None = None  # (step, line, name, kind)
    first_bad_weight: tuple[int, int, str] | None = None  # (step, line, name) of the first non-finite weight
    steps: set[int] = field(default_factory=set)  # distinct steps, counted up to MAX_STEPS_COUNTED
    first_step: int | None = None
    last_step: int | None = None


def _scan(tensors: TensorsFile, log: TensorReadLog, max_records: int) -> _Scan:
    scan = _Scan()
    for rec in tensors.records(log, max_records):
        kind, name, step = rec["kind"], rec["name"], rec["step"]
        bad = (rec["nan"] or 0) > 0 or (rec["inf"] or 0) > 0
        if bad and (scan.first_bad is None or (step, rec["line"]) < scan.first_bad[:2]):
            scan.first_bad = (step, rec["line"], name, kind)
        if (
            bad
            and kind == "weight"
            and (scan.first_bad_weight is None or (step, rec["line"]) < scan.first_bad_weight[:2])
        ):
            scan.first_bad_weight = (step, rec["line"], name)
        if len(scan.steps) < MAX_STEPS_COUNTED:
            scan.steps.add(step)
        if scan.first_step is None or step < scan.first_step:
            scan.first_step = step
        if scan.last_step is None or step > scan.last_step:
            scan.last_step = step
        tr = scan.tracks.get((name, kind))
        if tr is None:
            tr = scan.tracks[(name, kind)] = _Track(kind=kind, order=len(scan.tracks))
        if kind == "activation":
            row = (_f(rec["zero_frac"]), _f(rec["sat_frac"]), 1.0 if bad else 0.0)
            tr.module_type = rec.get("module_type", tr.module_type)
        else:
            row = tuple([np.nan if rec[k] is None else rec[k] for k in FIELDS[kind]])
        if kind == "weight":
            tr.module_type = rec.get("module_type", tr.module_type)
            if tr.seen == 0 or step < tr.steps[0]:
                tr.shape, tr.row_std, tr.first_std = rec.get("shape"), rec["row_std"], rec["std"]
            tr.requires_grad = rec.get("requires_grad", tr.requires_grad)
            tr.in_optimizer = rec.get("in_optimizer", tr.in_optimizer)
        tr.add(step, row, keep=bad or tr.seen == 0)
    return scan


@dataclass
class ParamTrace:
    """One parameter's dynamics over the run: its fact, its gradient's RMS per step and its weights' statistics per
    recorded step (what the checks and the report's weight charts read)."""

    fact: ParamDynamics
    grad_steps: np.ndarray
    grad_rms: np.ndarray
    key: bytes | None  # exact identity of the weight statistics, for tied-parameter detection
    notable: bool
    late_growth_ratio: float | None = None  # weight norm at the last / middle record
    #: the weights' std at each recorded step (for the report's weight chart)
    weight_steps: np.ndarray | None = None
    weight_std: np.ndarray | None = None
    #: the weights' mean, min and max at each recorded step (the report's distribution view)
    weight_spread: np.ndarray | None = None


def _param(name: str, index: int, w: _Track | None, g: _Track | None) -> ParamTrace:
    shape = w.shape if w is not None else None
    mtype = w.module_type if w is not None else None
    is_embedding = _is_embedding(name, mtype)
    is_matrix = len(shape) >= 2 if shape is not None else name.endswith("weight")
    fan_in = int(np.prod(shape[1:])) if shape is not None and len(shape) >= 2 and not is_embedding else None
    out = dict(
        name=name,
        layer_index=index,
        is_matrix=is_matrix,
        fan_in=fan_in,
        steps_recorded=0,
        module_type=mtype,
        is_embedding=is_embedding,
    )
    key = None
    late_ratio = None
    wsteps = wstd = wspread = None
    if w is not None:
        steps, v = w.arrays()
        norm, mean, std, mn, mx, zero, upd, cos, numel, resid_cos = v.T
        wsteps, wstd = steps, std
        wspread = np.stack([mean, mn, mx])
        stats = v[:, :5]
        out.update(
            steps_recorded=int(steps.size),
            first_record_step=int(steps[0]),
            requires_grad=w.requires_grad,
            in_optimizer=w.in_optimizer,
            numel=_int(numel[0]),
        )
        updated = upd[np.isfinite(upd)]
        same = bool(np.array_equal(stats, np.broadcast_to(stats[0], stats.shape), equal_nan=True))
        if steps.size >= 2 or updated.size:
            out["is_unchanged"] = same and not bool(np.any(updated != 0))
        with np.errstate(divide="ignore", invalid="ignore"):
            out["update_ratio_median"] = _median(np.where(norm > 0, upd / norm, np.nan))
            out["weight_norm_growth_ratio"] = _py(norm[-1] / norm[0]) if norm[0] > 0 else None
        out["update_grad_cos_median"] = _median(cos)
        out["update_resid_weight_cos_median"] = _median(resid_cos)
        out["weight_norm_first"], out["weight_norm_last"] = _py(norm[0]), _py(norm[-1])
        mid = steps.size // 2
        if steps.size >= LATE_GROWTH_RECORDS and steps[-1] > steps[mid] and norm[mid] > 0 and norm[-1] > 0:
            late_ratio = float(norm[-1] / norm[mid])
            out["weight_norm_late_growth_per_step"] = _py(math.log(late_ratio) / (steps[-1] - steps[mid]))
        first_std = w.first_std
        out["first_std"] = _py(first_std)
        out["first_is_all_zero"] = bool(zero[0] == 1.0) if np.isfinite(zero[0]) else None
        if first_std is not None and fan_in:
            out["first_std_fan_in_ratio"] = _py(first_std * math.sqrt(fan_in))
        if first_std and w.row_std is not None and shape is not None and shape[0] >= 2:
            out["first_row_spread_ratio"] = _py(w.row_std / first_std)
        if steps.size >= 2 and np.any(std > 0):  # constant tensors (zero biases, unit scales) are trivially equal
            key = np.r_[numel[:1], steps.astype(np.float64), stats.ravel()].tobytes()
    grad_steps = np.zeros(0, np.int64)
    grad_rms = np.zeros(0)
    if g is not None:
        grad_steps, gv = g.arrays()
        gnorm, gnumel = gv[:, 0], gv[:, 2]
        numel = out.get("numel") or _int(gnumel[0])
        out["numel"] = numel
        out["has_grad"] = True
        out["is_grad_always_zero"] = bool(np.all(gnorm == 0))
        grad_rms = gnorm / math.sqrt(numel) if numel else np.full(gnorm.shape, np.nan)
        out["grad_rms_median"] = _median(grad_rms)
    fact = ParamDynamics(**out)
    notable = bool(
        fact.is_unchanged
        or not fact.has_grad
        or fact.is_grad_always_zero
        or fact.first_is_all_zero
        or (fact.update_grad_cos_median or 0) > ASCENT_COS
        or (fact.first_row_spread_ratio is not None and fact.first_row_spread_ratio < 0.1)
        or (fact.first_std_fan_in_ratio is not None and not 0.05 < fact.first_std_fan_in_ratio < 5)
    )
    return ParamTrace(fact, grad_steps, grad_rms, key, notable, late_ratio, wsteps, wstd, wspread)


def _is_embedding(name: str, module_type: str | None) -> bool:
    if module_type is not None:
        return "Embedding" in module_type
    low = name.lower()
    return any(k in low for k in ("emb", "wte", "wpe"))


def _int(v: float) -> int | None:
    return int(v) if np.isfinite(v) else None


#: share of exact zeros in an activation's output from which, with no module type written, it is read as ReLU-like
RELU_ZERO_FRAC = 0.9


def _activation(name: str, tr: _Track) -> ActivationStats:
    steps, v = tr.arrays()
    zero, sat, bad = v.T
    mtype = tr.module_type
    return ActivationStats(
        name=name,
        module_type=mtype,
        steps_recorded=int(steps.size),
        is_saturating_type=(mtype in SATURATING_TYPES) if mtype else bool(np.any(np.isfinite(sat))),
        # without a module type: a name that says ReLU, or outputs exactly zero for most units at most steps
        # (of the common activations only the ReLU family outputs exact zeros at that rate; dropout zeroes p)
        is_relu_type=(mtype in RELU_TYPES) if mtype else ("relu" in name.lower() or _median(zero) >= RELU_ZERO_FRAC),
        zero_frac_median=_median(zero),
        zero_frac_last=_py(zero[-1]),
        sat_frac_median=_median(sat),
        sat_frac_last=_py(sat[-1]),
        nonfinite_steps=int(np.sum(bad > 0)),
    )


def _global_grad(params: list[ParamTrace]) -> tuple[np.ndarray, np.ndarray]:
    """Global gradient norm per step: sqrt of the sum over parameters of norm^2 (finite ones)."""
    if not params:
        return np.zeros(0, np.int64), np.zeros(0)
    steps = np.concatenate([p.grad_steps for p in params])
    sq = np.concatenate([(p.grad_rms**2) * (p.fact.numel or 0) for p in params])
    ok = np.isfinite(sq)
    uniq, inv = np.unique(steps[ok], return_inverse=True)
    total = np.zeros(uniq.size)
    np.add.at(total, inv, sq[ok])
    return uniq, np.sqrt(total)


def _early_late(params: list[ParamTrace]) -> tuple[str | None, str | None, float | None]:
    live = [p for p in params if p.fact.is_matrix and p.fact.has_grad and not p.fact.is_grad_always_zero]
    if len(live) < 2:
        return None, None, None
    early, late = live[0], live[-1]
    common, ie, il = np.intersect1d(early.grad_steps, late.grad_steps, return_indices=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(late.grad_rms[il] > 0, early.grad_rms[ie] / late.grad_rms[il], np.nan)
    return early.fact.name, late.fact.name, _median(ratio)


def _tied(params: list[ParamTrace]) -> list[TiedParams]:
    groups: dict[bytes, list[ParamTrace]] = {}
    for p in params:
        if p.key is not None:
            groups.setdefault(p.key, []).append(p)
    out = []
    for members in groups.values():
        for other in members[1:]:
            a = members[0].fact
            out.append(
                TiedParams(
                    name_a=a.name,
                    name_b=other.fact.name,
                    numel=a.numel,
                    steps_compared=a.steps_recorded,
                    is_changing=a.is_unchanged is False,
                    involves_embedding=a.is_embedding or other.fact.is_embedding,
                )
            )
    return out


def _frozen(params: list[ParamTrace]) -> FrozenWeights | None:
    """The frozen share of the recorded weights; None when none is frozen or the flag was not written."""
    known = [p.fact for p in params if p.fact.requires_grad is not None and p.fact.numel]
    frozen = [f for f in known if f.requires_grad is False]
    if not frozen:
        return None
    total = sum(f.numel or 0 for f in known)
    count = sum(f.numel or 0 for f in frozen)
    return FrozenWeights(
        frozen_params=count,
        total_params=total,
        frozen_share=count / total if total else 0.0,
        frozen_tensors=len(frozen),
        frozen_names=", ".join(f.name for f in frozen[:5]) + (", ..." if len(frozen) > 5 else ""),
        includes_output_layer=any(f.is_output_layer for f in frozen),
    )


def _mark_positions(params: list[ParamTrace]) -> None:
    """Where each parameter sits against the trained ones (between two, before the first) and which matrix is the
    output layer: what the freezing and the output checks read."""
    changed = np.array([p.fact.is_unchanged is False for p in params], dtype=bool)
    before = np.r_[False, np.cumsum(changed)[:-1] > 0] if params else changed
    after = np.r_[np.cumsum(changed[::-1])[::-1][1:] > 0, False] if params else changed
    for p, b, a in zip(params, before, after):
        if b and a:
            p.fact = p.fact.model_copy(update={"is_between_trained": True})
        elif a and not b:
            p.fact = p.fact.model_copy(update={"is_before_trained": True})
    matrices = [p for p in params if p.fact.is_matrix]
    if matrices:
        last = matrices[-1]
        last.fact = last.fact.model_copy(update={"is_output_layer": True})


def _gradient_summary(scan: _Scan, params: list[ParamTrace], gsteps: np.ndarray, gnorm: np.ndarray) -> dict:
    """The run-level gradient and update figures of TensorDynamics: counts, the global gradient norm's course, the
    early/late layer ratio, update ratios and directions."""
    tracks = scan.tracks
    matrices = [p for p in params if p.fact.is_matrix]
    finite = np.isfinite(gnorm)
    td: dict = dict(
        records=sum(t.seen for t in tracks.values()),
        steps_recorded=len(scan.steps),
        first_step=scan.first_step,
        last_step=scan.last_step,
        param_count=sum(1 for p in params if p.fact.steps_recorded),
        trained_param_count=sum(1 for p in params if p.fact.is_unchanged is False),
        unchanged_param_count=sum(1 for p in params if p.fact.is_unchanged),
        grad_param_count=sum(1 for p in params if p.fact.has_grad),
    )
    if finite.any():
        fs, fn = gsteps[finite], gnorm[finite]
        imax = int(np.argmax(fn))
        head = float(np.median(fn[:3]))
        td.update(
            grad_norm_first=float(fn[0]),
            grad_norm_max=float(fn[imax]),
            grad_norm_max_step=int(fs[imax]),
            grad_norm_last=float(fn[-1]),
            grad_norm_growth_ratio=float(fn[imax] / head) if head > 0 else None,
        )
    td["early_layer"], td["late_layer"], td["early_to_late_grad_ratio"] = _early_late(params)
    # parameters that never changed (frozen, disconnected) say nothing about the step size
    ratios = np.array([_f(p.fact.update_ratio_median) for p in matrices if p.fact.is_unchanged is False])
    td["update_ratio_median"] = _median(ratios)
    td["update_ratio_max"] = float(np.nanmax(ratios)) if np.isfinite(ratios).any() else None
    cos = [p.fact.update_grad_cos_median for p in params if p.fact.update_grad_cos_median is not None]
    td["params_with_update_cos"] = len(cos)
    td["ascent_param_count"] = sum(1 for c in cos if c > ASCENT_COS)
    td["ascent_param_share"] = td["ascent_param_count"] / len(cos) if cos else None
    away = [
        p.fact.update_resid_weight_cos_median for p in matrices if p.fact.update_resid_weight_cos_median is not None
    ]
    td["params_with_resid_cos"] = len(away)
    td["away_from_zero_param_count"] = sum(1 for c in away if c > AWAY_COS)
    td["away_from_zero_param_share"] = td["away_from_zero_param_count"] / len(away) if away else None
    return td


def _weight_summary(scan: _Scan, params: list[ParamTrace]) -> dict:
    """The run-level weight figures of TensorDynamics: the largest norm growth, the late growth across layers, the
    first non-finite value."""
    matrices = [p for p in params if p.fact.is_matrix]
    td: dict = {}
    growth = [(p.fact.weight_norm_growth_ratio, p.fact.name) for p in matrices if p.fact.weight_norm_growth_ratio]
    if growth:
        td["weight_norm_growth_ratio_max"], td["weight_norm_growth_param"] = max(growth)
    late = [p for p in params if p.fact.weight_norm_late_growth_per_step is not None and p.fact.is_unchanged is False]
    if late:
        rates = np.array([p.fact.weight_norm_late_growth_per_step for p in late])
        td["late_growth_param_count"] = len(late)
        td["late_growth_per_step_median"] = float(np.median(rates))
        td["late_growth_per_step_min"] = float(rates.min())
        if td["late_growth_per_step_median"] > 0:
            td["late_growth_uniformity"] = float(rates.min() / td["late_growth_per_step_median"])
        td["late_growth_ratio_median"] = float(np.median([p.late_growth_ratio for p in late]))
    if scan.first_bad is not None:
        td["first_nonfinite_step"], _, td["first_nonfinite_name"], td["first_nonfinite_kind"] = scan.first_bad
    if scan.first_bad_weight is not None:
        td["first_nonfinite_weight_step"], _, td["first_nonfinite_weight"] = scan.first_bad_weight
        td["weight_nonfinite_at_first_record"] = scan.first_bad_weight[0] == scan.first_step
    return td


def summarize(scan: _Scan, side: str, shown: str) -> Extraction:
    """Facts, series and markers from one scanned tensors.jsonl."""
    out = Extraction()
    tracks = scan.tracks
    src = Source(path=shown)
    names: list[str] = []
    for (name, kind), _tr in sorted(tracks.items(), key=lambda kv: kv[1].order):
        if kind in ("weight", "grad") and name not in names:
            names.append(name)
    params = [_param(n, i, tracks.get((n, "weight")), tracks.get((n, "grad"))) for i, n in enumerate(names)]
    _mark_positions(params)
    acts = [
        _activation(n, tr) for (n, k), tr in sorted(tracks.items(), key=lambda kv: kv[1].order) if k == "activation"
    ]
    if acts:
        acts[-1] = acts[-1].model_copy(update={"is_last_module": True})
    gsteps, gnorm = _global_grad(params)
    td = _gradient_summary(scan, params, gsteps, gnorm) | _weight_summary(scan, params)
    summary = TensorDynamics(**td, side=side, source=src)
    out.facts.append(summary)

    keep_all = len(params) <= MAX_FACTS
    special = {summary.early_layer, summary.late_layer}
    for p in params:
        if keep_all or p.notable or p.fact.is_output_layer or p.fact.name in special:
            out.facts.append(p.fact.model_copy(update={"side": side, "source": src}))
    keep_all = len(acts) <= MAX_FACTS
    for a in acts:
        if keep_all or a.nonfinite_steps or (a.zero_frac_median or 0) > 0.5 or (a.sat_frac_median or 0) > 0.2:
            out.facts.append(a.model_copy(update={"side": side, "source": src}))
    out.facts.extend(t.model_copy(update={"side": side, "source": src}) for t in _tied(params))
    frozen = _frozen(params)
    if frozen is not None:
        out.facts.append(frozen.model_copy(update={"side": side, "source": src}))
    out.series.extend(dynamics_series(params, summary, gsteps, gnorm, side))
    if summary.first_nonfinite_step is not None:
        out.markers.append(
            Marker(
                chart="grad_norm",
                x=float(summary.first_nonfinite_step),
                kind="nonfinite",
                label=f"first NaN/Inf: {summary.first_nonfinite_kind} of {summary.first_nonfinite_name}",
            )
        )
    return out


def _from_folder(folder: RunRead, pair: RunPair, out: Extraction) -> None:
    max_records = int(read_group(DynamicsOptions, pair.options).max_records)
    for tensors in folder.tensor_files:
        shown = tensors.shown
        log = TensorReadLog()
        try:
            scan = _scan(tensors, log, max_records)
        except OSError as exc:
            out.inputs.append(
                InputRecord(
                    path=shown,
                    kind="tensors",
                    status="unreadable",
                    side=folder.side,
                    why=f"cannot read: {exc.strerror or exc}",
                )
            )
            continue
        problems = log.problems()
        if not scan.tracks:
            why = "no usable tensor records (each line needs step, name and kind)"
            out.inputs.append(
                InputRecord(
                    path=shown, kind="tensors", status="unreadable", side=folder.side, why="; ".join([why] + problems)
                )
            )
            continue
        out.merge(summarize(scan, folder.side, shown))
        out.inputs.append(
            InputRecord(path=shown, kind="tensors", status="used", side=folder.side, why="; ".join(problems) or None)
        )
        if folder.side == "run":
            out.checks.append(CheckRun(stage="training_dynamics", inputs=[shown]))
            if any(k == "weight" for _, k in scan.tracks):
                out.checks.append(
                    CheckRun(
                        stage="model_structure",
                        inputs=[shown],
                        note="weights shared, frozen or disconnected; optimizer direction",
                    )
                )


def extract(pair: RunPair) -> Extraction:
    out = Extraction()
    for folder in pair.sides():
        _from_folder(folder, pair, out)
    return out
