"""The extractors' typed options (advisor/extract/options.py): each group is a dataclass with its defaults and
help; the names a user may set are derived from the groups, an extractor reads its group converted, and a runner
is passed as what it is (RunPair.runner), not as an option."""

from __future__ import annotations

from dataclasses import fields

from advisor.extract.curves import CurveThresholds
from advisor.extract.options import (
    OPTION_GROUPS,
    BenchmarkOptions,
    CompareOptions,
    DynamicsOptions,
    OpCompareOptions,
    group_options,
    known_options,
    read_group,
)
from advisor.options import unknown_options


def test_every_group_field_is_a_known_option_with_help():
    known = known_options()
    for group in OPTION_GROUPS:
        for f in fields(group):
            assert any(key.endswith(f".{f.name}") for key in known), (group, f.name)
    assert known["benchmark.score_band"].startswith("a final score difference")
    assert "loss_curve.spike_z" in known and "op_compare.scheduler" in known
    assert "op_compare.runner" not in known  # a runner is no setting


def test_a_group_reads_its_values_converted_and_nothing_else():
    options = {"benchmark.score_band": 1, "training_dynamics.max_records": 10.0, "loss_curve.spike_z": 8,
               "op_compare.same_config": False, "compare.baseline_kind": "port"}
    assert read_group(BenchmarkOptions, options).score_band == 1.0
    assert isinstance(read_group(BenchmarkOptions, options).score_band, float)
    assert read_group(DynamicsOptions, options).max_records == 10 and isinstance(
        read_group(DynamicsOptions, options).max_records, int)
    assert read_group(CurveThresholds, options) == CurveThresholds(spike_z=8.0)
    assert read_group(OpCompareOptions, options).same_config is False
    assert read_group(OpCompareOptions, {}).same_config is None
    assert group_options(CompareOptions, options) == {"baseline_kind": "port"}
    assert read_group(CompareOptions, {}) == CompareOptions(kl=True, kernel="auto", baseline_kind="auto")


def test_a_typo_is_named_against_the_derived_names():
    (warning,) = unknown_options({"benchmark.score_bnd": 0.05})
    assert "'benchmark.score_bnd' is not read by any extractor (did you mean 'benchmark.score_band'?)" in warning
    assert unknown_options({"benchmark.score_band": 0.05, "training_dynamics.max_records": 100}) == []
    (runner,) = unknown_options({"op_compare.runner": object()})
    assert "is not read by any extractor" in runner


def test_the_thresholds_page_is_generated_from_the_groups():
    """docs/thresholds.md lists every name a user may set, its default and what it sets; it is the page
    `python -m advisor.options_docs` writes (run it after changing a group)."""
    from pathlib import Path

    from advisor.options_docs import main, options_page

    page = Path(__file__).resolve().parents[2] / "docs" / "thresholds.md"
    text = page.read_text(encoding="utf-8")
    assert text == options_page(), "run python -m advisor.options_docs"
    assert all(f"`{name}`" in text for name in known_options())
    assert main(["--check"]) == 0
