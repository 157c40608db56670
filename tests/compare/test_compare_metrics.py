"""Metric values against straightforward float64 reference formulas; tolerances; NaN handling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from advisor.compare.metrics import Accumulator, accumulate, compare_arrays, ranges
from advisor.compare.tolerances import judge, tolerance_for


def mindstudio_kl(x: np.ndarray, y: np.ndarray) -> float:
    """KL divergence as MindStudio / CANN's accuracy comparison publishes it, written from its definition:
    1. P(x) = (x - min) / (max - min) per side (unchanged when max == min), floored at float32 eps,
    2. pdf = P / sum(P), 3. sum(pdf_run * log(pdf_run / pdf_baseline)); |result| below eps reads 0."""
    eps = np.finfo(np.float32).eps

    def pdf(v):
        v = v.astype(np.float64).ravel()
        lo, hi = v.min(), v.max()
        scaled = (v - lo) / (hi - lo) if hi != lo else v
        scaled = np.maximum(scaled, eps)
        return scaled / scaled.sum()

    p, q = pdf(x), pdf(y)
    kl = float((p * np.log(p / q)).sum())
    return 0.0 if abs(kl) < eps else kl


def reference(r: np.ndarray, b: np.ndarray) -> dict:
    r = r.astype(np.float64).ravel()
    b = b.astype(np.float64).ravel()
    d = r - b
    rel = np.abs(d) / np.maximum(np.abs(b), 1e-12)
    p = np.exp(b - b.max()); p /= p.sum()
    q = np.exp(r - r.max()); q /= q.sum()
    return {
        "cosine": float(r @ b / (np.linalg.norm(r) * np.linalg.norm(b))),
        "max_abs_err": float(np.abs(d).max()),
        "mean_abs_err": float(np.abs(d).mean()),
        "rmse": float(np.sqrt((d ** 2).mean())),
        "euclid_rel_dist": float(np.linalg.norm(d) / np.linalg.norm(b)),
        "accum_rel_err": float(rel.sum()),  # routine.md: the sum of the element-wise relative errors
        "accum_abs_err_ratio": float(np.abs(d).sum() / np.abs(b).sum()),
        "max_rel_err": float(rel.max()),
        "mean_rel_err": float(rel.mean()),
        "rel_err_over_1e3_ratio": float((rel > 1e-3).mean()),
        "rel_err_over_5e3_ratio": float((rel > 5e-3).mean()),
        "rel_err_within_1e3_ratio": float((rel <= 1e-3).mean()),  # msprobe's pass shares
        "rel_err_within_5e3_ratio": float((rel <= 5e-3).mean()),
        "softmax_kl": float(np.sum(p * (np.log(p) - np.log(q)))),
        "kl_div": mindstudio_kl(r, b),
        "std_run": float(r.std()), "std_baseline": float(b.std()), "std_diff": float(d.std()),
        "scaled_max_err": float(np.abs(d).max() / np.abs(b).max()),
        "norm_run": float(np.linalg.norm(r)), "mean_baseline": float(b.mean()),
    }


@pytest.fixture
def pair():
    rng = np.random.default_rng(0)
    b = (rng.standard_normal(10_007) * 3 + 100).astype(np.float32)  # a large mean: std must not cancel
    r = (b + rng.standard_normal(b.size).astype(np.float32) * np.float32(0.05)).astype(np.float32)
    return r, b


@pytest.mark.parametrize("chunk", [1000, 1 << 16])
def test_every_metric_matches_the_reference(pair, chunk):
    r, b = pair
    m = compare_arrays(r, b, chunk=chunk)
    ref = reference(r, b)
    for key, value in ref.items():
        if key == "softmax_kl":  # float32 exponentials: absolute resolution ~1e-7
            assert m.softmax_kl == pytest.approx(value, abs=1e-7)
            continue
        if key == "kl_div":
            assert m.kl_div == pytest.approx(value, rel=1e-9, abs=1e-12)
            continue
        assert getattr(m, key) == pytest.approx(value, rel=1e-9, abs=1e-15), key
    assert m.identical is False and m.compared == m.elements == r.size


def test_ranges_merged_equal_one_pass(pair):
    r, b = pair
    whole = accumulate(r, b, chunk=512).result()
    acc = Accumulator()
    for start, stop in ranges(r.size, 3, chunk=512):
        acc.merge(accumulate(r, b, start, stop, chunk=512))
    merged = acc.result()
    for key, value in whole.as_dict().items():
        if key == "softmax_kl":
            assert merged.softmax_kl == pytest.approx(value, abs=1e-7)
        elif isinstance(value, float):
            assert getattr(merged, key) == pytest.approx(value, rel=1e-12), key
        else:
            assert getattr(merged, key) == value, key


def test_kl_of_probability_tensors_is_that_of_their_softmax():
    p = np.array([0.7, 0.2, 0.1])
    q = np.array([0.6, 0.3, 0.1])
    m = compare_arrays(q, p)
    sp, sq = np.exp(p) / np.exp(p).sum(), np.exp(q) / np.exp(q).sum()
    assert m.softmax_kl == pytest.approx(float(np.sum(sp * np.log(sp / sq))), rel=1e-4)
    assert compare_arrays(p, p).softmax_kl == 0.0


def test_nan_and_inf_are_counted_per_side_and_never_pass():
    b = np.linspace(-1, 1, 1000).astype(np.float32)
    r = b.copy()
    r[10] = np.nan
    r[20] = np.inf
    m = compare_arrays(r, b)
    assert (m.nan_run, m.inf_run, m.nan_baseline, m.inf_baseline) == (1, 1, 0, 0)
    assert m.compared == 998 and m.max_abs_err == 0.0  # the finite rest is equal...
    assert judge(m, tolerance_for("float32", "float32"))[0] == "error"  # ...but the pair fails
    both = b.copy()
    both[5] = np.nan
    m2 = compare_arrays(both, both)
    assert m2.nonfinite_mismatch == 0 and judge(m2, tolerance_for("float32", "float32"))[0] == "error"


@pytest.mark.parametrize("dtype,rel,verdict", [
    ("float32", 1e-7, "pass"), ("float32", 2e-5, "warning"), ("float32", 1e-4, "error"),
    ("float16", 1e-4, "pass"), ("float16", 5e-3, "warning"), ("float16", 2e-2, "error"),
    ("bfloat16", 5e-3, "pass"), ("bfloat16", 2e-2, "warning"), ("bfloat16", 1e-1, "error"),
])
def test_tolerances_per_dtype(dtype, rel, verdict):
    rng = np.random.default_rng(1)
    b = rng.standard_normal(4096)
    noise = rng.standard_normal(4096)
    r = b + noise * (rel * np.linalg.norm(b) / np.linalg.norm(noise))
    m = compare_arrays(r, b)
    assert m.euclid_rel_dist == pytest.approx(rel, rel=1e-6)
    assert judge(m, tolerance_for(dtype, dtype))[0] == verdict


def test_tolerance_override_and_baseline_dtype_rules():
    assert tolerance_for("bfloat16", "float32").rel_dist_error == 5e-5  # held to the reference's dtype
    tol = tolerance_for("float32", "float32", {"compare.float32.rel_dist_error": 1e-3})
    assert tol.rel_dist_error == 1e-3 and tol.rel_dist_warn == 1e-5


def test_zero_tensors_and_integers():
    z = np.zeros(100, dtype=np.float32)
    m = compare_arrays(z, z)
    assert m.cosine == 1.0 and m.identical and m.integer_ratio_run is None
    ints = np.arange(-50, 50, dtype=np.float32)
    assert compare_arrays(ints, ints + 0.5).integer_ratio_run == 1.0
    assert compare_arrays(ints, ints + 0.5).integer_ratio_baseline == 0.0
    assert math.isinf(compare_arrays(np.ones(3), z[:3]).euclid_rel_dist)
    for r, b, side in ((np.ones(3), z[:3], "baseline"), (z[:3], np.ones(3), "run")):
        m = compare_arrays(r, b)  # routine.md: one all-zero side -> cosine undefined, and say so
        assert m.cosine is None
        assert judge(m, tolerance_for("float32", "float32")) == (
            "error", f"cosine undefined: the {side}'s tensor is all zero, the other's is not")


def test_float64_overflow_of_squares_does_not_loop():
    big = np.array([1e200, -1e200, 3.0])
    m = compare_arrays(big, big)
    assert m.identical and m.nan_run == 0 and m.max_abs_err == 0.0


def test_identical_chunks_take_the_short_path_with_the_same_results():
    rng = np.random.default_rng(3)
    b = rng.standard_normal(5000)
    r = b.copy()
    r[4000:] += 1e-3 * rng.standard_normal(1000)  # the first four chunks of 1000 are identical
    m = compare_arrays(r, b, chunk=1000)
    ref = reference(r, b)
    for key, value in ref.items():
        tol = {"abs": 1e-7} if key == "softmax_kl" else {"rel": 1e-9, "abs": 1e-12} if key == "kl_div" \
            else {"rel": 1e-9, "abs": 1e-15}
        assert getattr(m, key) == pytest.approx(value, **tol), key
    assert compare_arrays(b, b, chunk=1000).softmax_kl == 0.0


def test_engine_two_pass_kl_over_split_ranges_matches_the_reference(tmp_path):
    from advisor.compare.engine import compare_dumps
    from advisor.read.dumps import read_dump

    rng = np.random.default_rng(4)
    b = rng.standard_normal(700_000).astype(np.float32)  # above the split size: several ranges
    r = (b + np.float32(0.01) * rng.standard_normal(b.size).astype(np.float32)).astype(np.float32)
    for side, arr in (("run", r), ("base", b)):
        (tmp_path / side).mkdir()
        np.save(tmp_path / side / "0_x.forward.output.0.npy", arr)
        np.save(tmp_path / side / "1_y.forward.output.0.npy", b[:1000])
    comp = compare_dumps(read_dump(tmp_path / "run"), read_dump(tmp_path / "base"), workers=2)
    x, y = comp.rows
    ref = reference(r, b)
    assert x.metrics.softmax_kl == pytest.approx(ref["softmax_kl"], abs=1e-7) and x.metrics.softmax_kl > 1e-6
    assert x.metrics.kl_div == pytest.approx(ref["kl_div"], rel=1e-9) and x.metrics.kl_div > 0
    assert x.metrics.cosine == pytest.approx(ref["cosine"], rel=1e-12)
    assert y.metrics.identical and y.metrics.softmax_kl == 0.0
    off = compare_dumps(read_dump(tmp_path / "run"), read_dump(tmp_path / "base"), {"compare.kl": False})
    assert off.rows[0].metrics.softmax_kl is None and off.rows[1].metrics.softmax_kl == 0.0


@pytest.mark.parametrize("scale,identical_half", [
    (1e-4, False),   # small differences everywhere: the one-exponential (Taylor) path
    (0.5, False),    # large differences: the two-exponential path
    (1e-4, True),    # half the chunks bit-identical, the rest slightly off
    (0.5, True),     # half identical, the rest far off
])
def test_kl_paths_match_the_float64_formula(scale, identical_half):
    rng = np.random.default_rng(3)
    b = rng.standard_normal(40_000).astype(np.float32)
    r = (b + rng.standard_normal(b.size).astype(np.float32) * np.float32(scale)).astype(np.float32)
    if identical_half:
        r[:20_000] = b[:20_000]
    ref = reference(r, b)["softmax_kl"]
    for chunk in (1000, 1 << 16):
        m = compare_arrays(r, b, chunk=chunk)
        assert m.softmax_kl == pytest.approx(ref, rel=1e-4, abs=1e-13), (chunk, m.softmax_kl, ref)


def test_tolerance_overrides_are_checked_and_take_dtype_aliases():
    from advisor.compare.tolerances import option_problems

    assert tolerance_for("float16", "fp16", {"compare.fp16.rel_dist_error": 0.5}).rel_dist_error == 0.5
    assert option_problems({"compare.kl": False, "compare.kernel": "numpy", "compare.bf16.stat_warn": 0.1}) == []
    problems = option_problems({"compare.float32.rel_dist_eror": 1e-3, "compare.float8.stat_warn": 1.0,
                                "compare.float32.cosine_error": "high", "compare.kernal": "numpy"})
    assert len(problems) == 4
    assert "did you mean 'rel_dist_error'" in problems[0] and "unknown dtype 'float8'" in problems[1]
    assert "finite number" in problems[2] and "did you mean 'compare.kernel'" in problems[3]
    assert tolerance_for("float32", "float32", {"compare.float32.cosine_error": "high"}).cosine_error == 0.9999


def test_kl_is_mindstudios_minmax_form_in_the_run_to_baseline_direction():
    b = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    r = np.array([0.0, 1.5, 2.0, 2.5, 4.0])
    m = compare_arrays(r, b)
    assert m.kl_div == pytest.approx(mindstudio_kl(r, b), rel=1e-12)
    assert m.kl_div != pytest.approx(mindstudio_kl(b, r), rel=1e-3)  # KL(run || baseline), not the reverse
    # invariant to each side's offset and scale (min-max scaling), unlike the softmax form
    assert compare_arrays(r * 10 + 7, b).kl_div == pytest.approx(m.kl_div, rel=1e-9)
    assert compare_arrays(np.full(4, 3.0), np.full(4, 3.0)).kl_div == 0.0


def test_kl_on_the_msprobe_fixtures_matches_the_published_definition(shared_msprobe):
    torch = pytest.importorskip("torch")
    from advisor.compare.engine import compare_dumps
    from advisor.read.dumps import read_dump

    run, base = (shared_msprobe / n / "step0" / "rank0" for n in ("r_tanh", "r_base"))
    comp = compare_dumps(read_dump(run), read_dump(base), workers=1)
    checked = 0
    for row in comp.rows:
        if row.metrics is None or row.metrics.identical or not row.name.startswith("Functional.gelu"):
            continue
        x = torch.load(run / "dump_tensor_data" / f"{row.name}.pt", weights_only=True).double().numpy()
        y = torch.load(base / "dump_tensor_data" / f"{row.baseline_name}.pt", weights_only=True).double().numpy()
        assert row.metrics.kl_div == pytest.approx(mindstudio_kl(x, y), rel=1e-6, abs=1e-12), row.name
        checked += 1
    assert checked >= 1
