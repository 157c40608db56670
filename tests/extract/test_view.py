"""RunView: each side's settings and class count are worked out once and shared; extractors read them there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder

EXTRACT = Path(__file__).resolve().parents[2] / "advisor" / "extract"


def _pair(tmp_path: Path, config: dict) -> RunPair:
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "train.log").write_text(
        "".join(f"step {i} loss {2.3 - 0.01 * i:.3f}\n" for i in range(50)), encoding="utf-8"
    )
    return RunPair(run=RunFolder.scan(tmp_path))


def test_settings_are_collected_once_and_shared(tmp_path, monkeypatch):
    from advisor.extract.view import settings as hparam_set

    calls = []
    real = hparam_set.collect

    def counting(run, out):
        calls.append(run.side)
        return real(run, out)

    monkeypatch.setattr(hparam_set, "collect", counting)
    (tmp_path / "data").mkdir()  # the data extractor needs the settings' sample count too
    np.savez(tmp_path / "data" / "train.npz", x=np.random.default_rng(0).normal(size=(40, 3)), y=np.arange(40) % 2)
    pair = _pair(tmp_path, {"lr": 0.1, "optimizer": "sgd", "nb_classes": 10, "num_train_samples": 40})
    facts = extract_facts(pair).facts
    assert calls == ["run"]  # not once per extractor that needs a setting
    assert any(f.kind == "data_split" or f.kind.startswith("data") for f in facts)
    view = pair.view(pair.run)
    assert view is pair.view(pair.run) and view.settings is view.settings
    assert view.settings.get("learning_rate") == 0.1
    assert any(f.kind == "hyperparameter" and f.name == "learning_rate" for f in facts)


def test_class_count_from_any_spelling_of_the_table(tmp_path):
    pair = _pair(tmp_path, {"lr": 0.1, "nb_classes": 10})
    assert pair.view(pair.run).class_count == (10, "config.json: nb_classes")
    curve = next(f for f in extract_facts(pair).facts if f.kind == "loss_curve")
    assert curve.class_count == 10


def test_class_count_from_the_labels_of_a_train_sample(tmp_path):
    (tmp_path / "data").mkdir()
    np.savez(tmp_path / "data" / "train.npz", x=np.zeros((30, 2)), y=np.arange(30) % 3)
    pair = _pair(tmp_path, {"lr": 0.1})
    n, where = pair.view(pair.run).class_count
    assert n == 3 and "distinct labels" in where


def test_flat_settings_hold_files_and_printed_settings(tmp_path):
    pair = _pair(tmp_path, {"model": {"name": "resnet50"}, "lr": 0.1})
    flat = pair.view(pair.run).flat_settings
    assert [(f.shown, f.name, f.printed) for f in flat] == [("config.json", "config.json", False)]
    assert flat[0].values == {"model.name": "resnet50", "lr": 0.1}


def test_extractors_do_not_interpret_settings_themselves():
    """Settings and model descriptions are interpreted through the view: only the view package (extract/view/: the
    view, its settings collection and the model inputs) flattens settings files or parses model descriptions; no
    extractor runs the settings collection but the hyper-parameter extractor, and none reads the merged logs past
    the view. The extractors are the modules of extract/ itself."""
    offenders = []
    for path in sorted(EXTRACT.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if re.search(r"from advisor\.read(\.hparams import| import hparams)", text):
            offenders.append(f"{path.name}: imports the settings reader")
        if path.name != "hparams.py" and re.search(r"from advisor\.extract\.view\.settings import", text):
            offenders.append(f"{path.name}: imports the hyper-parameter collection's internals")
        if ".merged_logs" in text:
            offenders.append(f"{path.name}: reads the merged logs past the view (RunView.curves)")
        if re.search(r"\b(md|mt)\.(parse|find|logged)_|model_(desc|text) import (parse|find)", text):
            offenders.append(f"{path.name}: parses model descriptions")
    assert offenders == []
