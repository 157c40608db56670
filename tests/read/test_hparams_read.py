"""advisor.read.hparams: safe YAML/JSON loading and flattening, and what it refuses."""

from __future__ import annotations

import json

import pytest

from advisor.read.hparams import HparamReadError, file_priority, flatten, load_mapping


def test_nested_yaml_flattens_to_dotted_keys(tmp_path):
    p = tmp_path / "hparams.yaml"
    p.write_text("optimizer:\n  type: AdamW\n  lr: 3.0e-4\n  betas: [0.9, 0.98]\nbs: 32\n")
    flat = flatten(load_mapping(p))
    assert flat == {"optimizer.type": "AdamW", "optimizer.lr": 3.0e-4, "optimizer.betas": [0.9, 0.98], "bs": 32}


def test_anchor_bomb_is_refused(tmp_path):
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    p = tmp_path / "config.yaml"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(HparamReadError, match="aliases|expands"):
        load_mapping(p)


def test_python_tag_is_refused_not_constructed(tmp_path):
    p = tmp_path / "config.yaml"
    p.write_text("lr: !!python/object/apply:os.system ['touch pwned']\n")
    with pytest.raises(HparamReadError, match="tag refused"):
        load_mapping(p)
    assert not (tmp_path / "pwned").exists()


def test_top_level_list_and_deep_nesting_are_refused(tmp_path):
    p = tmp_path / "args.json"
    p.write_text("[1, 2]")
    with pytest.raises(HparamReadError, match="mapping"):
        load_mapping(p)
    deep: dict = {}
    cur = deep
    for _ in range(60):
        cur["k"] = {}
        cur = cur["k"]
    p.write_text(json.dumps(deep))
    with pytest.raises(HparamReadError, match="levels"):
        load_mapping(p)


def test_broken_json_names_the_position(tmp_path):
    p = tmp_path / "hparams.json"
    p.write_text('{"lr": 0.1,,}')
    with pytest.raises(HparamReadError, match="not valid JSON: .*line 1"):
        load_mapping(p)


def test_priority_puts_hparams_before_model_config():
    names = ["config.json", "args.json", "hparams.yaml", "training_args.json"]
    assert sorted(names, key=file_priority) == ["hparams.yaml", "training_args.json", "args.json", "config.json"]
