"""tensors.jsonl written by hand (any writer, not only the capture hook): exact numbers,
and bad input that must give clear ``inputs`` entries, never a crash."""

from __future__ import annotations

import json
import math

import pytest

from advisor.extract.base import RunPair
from advisor.extract.dynamics import MAX_POINTS, extract
from advisor.inventory import RunFolder


def write(folder, records, extra_lines=()):
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "tensors.jsonl", "w") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
        for line in extra_lines:
            fh.write(line + "\n")
    return folder


def run(folder, **options):
    ex = extract(RunPair(run=RunFolder.scan(folder), options=options))
    by: dict[str, list] = {}
    for f in ex.facts:
        by.setdefault(f.kind, []).append(f)
    return ex, by


def weight(step, name, norm, numel=100, **kw):
    return {"step": step, "name": name, "kind": "weight", "numel": numel, "mean": 0.0, "std": norm / 10,
            "min": -1.0, "max": 1.0, "norm": norm, "zero_frac": 0.0, "nan": 0, "inf": 0, **kw}


def grad(step, name, norm, numel=100, **kw):
    return {"step": step, "name": name, "kind": "grad", "numel": numel, "norm": norm, "zero_frac": 0.0,
            "nan": 0, "inf": 0, **kw}


def test_exact_numbers_from_a_hand_written_file(tmp_path):
    recs = []
    for s in range(0, 50, 10):
        k = s // 10
        recs += [weight(s, "a.weight", 10.0 + k, shape=[10, 10], update_norm=0.1, update_grad_cos=-1.0),
                 grad(s, "a.weight", 1e-6 * 10 ** -k),
                 weight(s, "b.weight", 5.0 + k, shape=[10, 10], update_norm=0.5),
                 grad(s, "b.weight", 1.0 * 10 ** k)]
    _, by = run(write(tmp_path, recs))
    td = by["tensor_dynamics"][0]
    assert (td.steps_recorded, td.first_step, td.last_step, td.param_count) == (5, 0, 40, 2)
    assert (td.early_layer, td.late_layer) == ("a.weight", "b.weight")
    # per step: (1e-6 * 10^-k) / (10^k); median over k = 0..4 is k = 2: 1e-10
    assert td.early_to_late_grad_ratio == pytest.approx(1e-10)
    # global norm at step 0 is about 1, at step 40 about 1e4; growth over the median of the first three
    assert td.grad_norm_growth_ratio == pytest.approx(1e4 / 10.0, rel=1e-6)
    assert td.grad_norm_max_step == 40
    p = {f.name: f for f in by["param_dynamics"]}
    assert p["a.weight"].update_ratio_median == pytest.approx(0.1 / 12.0)
    assert p["a.weight"].update_grad_cos_median == -1.0
    assert p["b.weight"].weight_norm_growth_ratio == pytest.approx(9.0 / 5.0)
    assert p["a.weight"].fan_in == 10 and p["a.weight"].first_std_fan_in_ratio == pytest.approx(1.0 * math.sqrt(10))
    assert p["b.weight"].is_output_layer and not p["a.weight"].is_output_layer


def test_identical_parameters_found_and_constant_ones_ignored(tmp_path):
    recs = []
    for s in range(3):
        recs += [weight(s, "enc.weight", 3.0 + s), weight(s, "dec.weight", 3.0 + s),
                 weight(s, "x.weight", 3.0 + s, numel=50),  # same statistics, different size: not the same tensor
                 {**weight(s, "ln1.weight", 10.0), "std": 0.0}, {**weight(s, "ln2.weight", 10.0), "std": 0.0}]
    _, by = run(write(tmp_path, recs))
    assert [(t.name_a, t.name_b, t.steps_compared, t.is_changing) for t in by["tied_params"]] == [
        ("enc.weight", "dec.weight", 3, True)]


def test_missing_fields_non_numeric_values_and_junk_lines(tmp_path):
    recs = [weight(0, "a.weight", 1.0), weight(1, "a.weight", 1.5),
            {"name": "a.weight", "kind": "weight", "norm": 1.0},            # no step
            {"step": 2, "kind": "grad", "norm": 1.0},                        # no name
            {"step": 2, "name": "a.weight", "norm": 1.0},                    # no kind
            {"step": 2, "name": "a.weight", "kind": "bias", "norm": 1.0},    # unknown kind
            {"step": "two", "name": "a.weight", "kind": "grad"},              # step not a number
            {**grad(2, "a.weight", 1.0), "norm": "big"},                     # non-numeric value kept as missing
            {**grad(3, "a.weight", 1.0), "mean": [1, 2]}]
    folder = write(tmp_path, recs, extra_lines=["not json at all", "[1, 2, 3]", ""])
    ex, by = run(folder)
    (rec,) = ex.inputs
    assert rec.status == "used" and rec.kind == "tensors"
    assert rec.why == ("2 lines are not JSON objects (first at line 10); 1 records without a valid 'kind' skipped; "
                       "1 records without a valid 'name' skipped; 2 records without a valid 'step' skipped; "
                       "1 records with a kind other than weight, grad, activation skipped; "
                       "1 non-numeric 'mean' values ignored; 1 non-numeric 'norm' values ignored")
    td = by["tensor_dynamics"][0]
    assert td.records == 4 and td.trained_param_count == 1


def test_steps_out_of_order_are_sorted_and_last_duplicate_wins(tmp_path):
    recs = [weight(20, "a.weight", 3.0), weight(0, "a.weight", 1.0), weight(10, "a.weight", 2.0),
            weight(20, "a.weight", 4.0)]
    ex, by = run(write(tmp_path, recs))
    assert "2 records have a step below an earlier record's step" in ex.inputs[0].why
    p = by["param_dynamics"][0]
    assert (p.steps_recorded, p.weight_norm_first, p.weight_norm_last) == (3, 1.0, 4.0)


def test_nothing_usable_is_unreadable_with_the_reason(tmp_path):
    folder = write(tmp_path, [{"step": 1, "value": 3}], extra_lines=["garbage"])
    ex, by = run(folder)
    assert by == {} and ex.checks == []
    (rec,) = ex.inputs
    assert rec.status == "unreadable"
    assert rec.why.startswith("no usable tensor records (each line needs step, name and kind); 1 lines are not JSON")


def test_empty_file_and_overlong_line(tmp_path):
    ex, _ = run(write(tmp_path / "empty", []))
    assert ex.inputs[0].status == "unreadable"
    folder = write(tmp_path / "long", [weight(0, "a.weight", 1.0)], extra_lines=['{"pad": "' + "x" * (2 << 20) + '"}'])
    with open(folder / "tensors.jsonl", "a") as fh:
        fh.write(json.dumps(weight(1, "a.weight", 2.0)) + "\n")
    ex, by = run(folder)
    assert "1 lines longer than 1048576 bytes skipped" in ex.inputs[0].why
    assert by["param_dynamics"][0].steps_recorded == 2


def test_record_cap_stops_early_and_says_so(tmp_path):
    recs = [weight(s, "a.weight", 1.0 + s) for s in range(100)]
    ex, by = run(write(tmp_path, recs), **{"training_dynamics.max_records": 30})
    assert "read stopped after 30 records at line 30; later steps were not analysed" in ex.inputs[0].why
    assert by["tensor_dynamics"][0].last_step == 29


def test_long_series_is_decimated_but_keeps_first_step_and_first_nan(tmp_path):
    n = 3 * MAX_POINTS + 7
    with open(tmp_path / "tensors.jsonl", "w") as fh:
        for s in range(n):
            bad = s == 5001
            fh.write(json.dumps(grad(s, "a.weight", float("nan") if bad else 1.0 + s % 3, nan=1 if bad else 0)) + "\n")
    ex, by = run(tmp_path)
    td = by["tensor_dynamics"][0]
    assert (td.first_step, td.first_nonfinite_step, td.first_nonfinite_name, td.first_nonfinite_kind) == (
        0, 5001, "a.weight", "grad")
    assert td.records == n
    assert all(len(s.x) <= 1000 for s in ex.series)
    assert ex.markers[0].x == 5001.0


def test_baseline_side_is_read_and_not_counted_as_a_stage(tmp_path):
    write(tmp_path / "run", [weight(0, "a.weight", 1.0)])
    write(tmp_path / "base", [weight(0, "a.weight", 1.0)])
    ex = extract(RunPair(run=RunFolder.scan(tmp_path / "run"), baseline=RunFolder.scan(tmp_path / "base", "baseline")))
    assert sorted(f.side for f in ex.facts if f.kind == "tensor_dynamics") == ["baseline", "run"]
    assert [c.stage for c in ex.checks] == ["training_dynamics", "model_structure"]


def test_tie_with_an_embedding_is_marked(tmp_path):
    recs = []
    for s in range(3):
        recs += [weight(s, "wte.weight", 3.0 + s), weight(s, "lm_head.weight", 3.0 + s)]
    _, by = run(write(tmp_path, recs))
    (tie,) = by["tied_params"]
    assert (tie.name_a, tie.name_b, tie.involves_embedding) == ("wte.weight", "lm_head.weight", True)


def test_an_activation_without_module_type_that_outputs_only_zeros_reads_as_relu(tmp_path):
    # recorders other than advisor's hook often write no module type; exact zeros at that rate are the ReLU family's
    def act(step, name, zero):
        return {"step": step, "name": name, "kind": "activation", "numel": 4096, "mean": 0.0, "std": 0.0,
                "min": 0.0, "max": 1.0, "norm": 1.0, "zero_frac": zero, "nan": 0, "inf": 0}

    recs = [act(s, "net.1", 1.0) for s in (1, 2, 3)] + [act(s, "net.3", 0.48) for s in (1, 2, 3)]
    _, by = run(write(tmp_path / "r", recs))
    kinds = {a.name: a.is_relu_type for a in by["activation_stats"]}
    assert kinds == {"net.1": True, "net.3": False}          # half zeros: a healthy ReLU or anything else
