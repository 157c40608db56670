"""Extractors whose inputs a run lacks are neither imported nor run, and skipping them changes nothing.

The data, dynamics and operator-comparison extractors add nothing to a run without samples, tensor
statistics or dumps. The pipeline skips them there (advisor/extract/__init__.py, ``_when``), so a log-only
diagnosis does not import their modules or their fact kinds. The first test checks that skipping is exact:
the lazy pipeline gives the same extraction as calling every extractor, on runs with and without those inputs.
The second checks, in a fresh interpreter, which modules a log-only diagnosis imports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.extract import EXTRACTORS, extract_facts
from advisor.extract import (
    api_warnings,
    benchmark_gap,
    crashes,
    data_stats,
    dynamics,
    evaluation,
    hparams,
    library_versions,
    log_messages,
    loss_curve,
    loss_scale,
    model,
    model_family,
    op_compare,
)
from advisor.extract.base import RunPair
from advisor.extract.code import extract as code_extract
from advisor.inventory import RunFolder
from advisor.read.run import read_run

ROOT = Path(__file__).resolve().parents[2]
EAGER = (
    ("hparams", hparams.extract),
    ("data_stats", data_stats.extract),
    ("loss_curve", loss_curve.extract),
    ("benchmark_gap", benchmark_gap.extract),
    ("loss_scale", loss_scale.extract),
    ("crashes", crashes.extract),
    ("op_compare", op_compare.extract),
    ("dynamics", dynamics.extract),
    ("model", model.extract),
    ("model_family", model_family.extract),
    ("library_versions", library_versions.extract),
    ("api_warnings", api_warnings.extract),
    ("log_messages", log_messages.extract),
    ("evaluation", evaluation.extract),
    ("code", code_extract.extract),
)
RUNS = [
    ("examples/lr_too_high", None),  # samples and tensor statistics
    ("examples/lr_too_high/train.log", None),  # one log: all three skipped
    ("examples/gelu_port/run", "examples/gelu_port/baseline"),  # dumps on both sides
    ("examples/mindspore_port/run", "examples/mindspore_port/baseline"),
    ("tests/extract/config_samples/hf_output", None),
    ("tests/extract/fixtures/keras_log_only_healthy", None),
    ("tests/extract/data/code_runs/torch_zero_grad_missing", None),  # a training script
]


def _pair(run: str, baseline: str | None) -> RunPair:
    side = read_run(RunFolder.open(ROOT / run, "run"))
    base = read_run(RunFolder.open(ROOT / baseline, "baseline")) if baseline else None
    return RunPair(run=side, baseline=base, options={})


def test_pipeline_names_every_extractor_in_order() -> None:
    assert [name for name, _ in EXTRACTORS] == [name for name, _ in EAGER]


@pytest.mark.parametrize(("run", "baseline"), RUNS, ids=[r for r, _ in RUNS])
def test_skipping_absent_inputs_gives_the_same_extraction(run: str, baseline: str | None) -> None:
    lazy = extract_facts(_pair(run, baseline))
    eager = extract_facts(_pair(run, baseline), EAGER)
    assert lazy.model_dump(mode="json") == eager.model_dump(mode="json")
    assert lazy.facts  # the runs do give facts: the comparison is not of two empty extractions


def test_a_log_only_diagnosis_imports_no_data_dynamics_or_dump_code(tmp_path: Path) -> None:
    """Nor PyYAML (no YAML file; the rules come from the cache) nor jinja2 (the evidence texts of the shipped
    rules that fire here are filled without it)."""
    script = (
        "import json, sys\n"
        "from advisor.diagnosis import diagnose\n"
        "diagnose(sys.argv[1])\n"  # the first call may fill the rule cache (which reads every fact kind)
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('advisor.', 'yaml', 'jinja2')))))\n"
    )
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    args = [sys.executable, "-c", script, str(ROOT / "examples/lr_too_high/train.log")]
    subprocess.run(args, env=env, check=True, capture_output=True)  # fills the rule cache
    done = subprocess.run(args, env=env, check=True, capture_output=True, text=True)
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "advisor.extract.loss_curve" in loaded  # the log was read and its curve extracted
    skipped = {
        "advisor.extract.data_stats",
        "advisor.extract.dynamics",
        "advisor.extract.op_compare",
        "advisor.compare.engine",
        "advisor.facts.data",
        "advisor.facts.dynamics",
        "advisor.facts.ops",
        "yaml",
        "jinja2",
    }
    assert not loaded & skipped, sorted(loaded & skipped)
