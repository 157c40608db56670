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


def test_lightning_tuple_tag_is_read_as_a_list():
    """Lightning's save_hyperparameters writes every tuple as ``!!python/tuple`` (a real Lightning 2 file, made by
    tests/recipes/make/lightning_vit.py); its items are plain values, read as a list, and the rest of the file with it."""
    from pathlib import Path

    p = Path(__file__).parents[1] / "recipes" / "runs" / "lightning_vit_recipe_rate_few_epochs" / "lightning_logs" / "version_0"
    flat = flatten(load_mapping(p / "hparams.yaml"))
    assert flat["betas"] == [0.9, 0.999] and flat["lr"] == 3.125e-05 and flat["optimizer"] == "AdamW"


def test_tuple_tag_on_a_mapping_is_refused(tmp_path):
    p = tmp_path / "hparams.yaml"
    p.write_text("betas: !!python/tuple {a: 1}\n")
    with pytest.raises(HparamReadError, match="tag refused"):
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


def test_key_lines_of_a_large_json_file_are_exact(tmp_path):
    """10,000 keys in 100 sections: every key gets its own line (found in one pass, issue #17)."""
    data = {f"section_{s}": {f"key_{k}": k for k in range(100)} for s in range(100)}
    p = tmp_path / "hparams.json"
    p.write_text(json.dumps(data, indent=1))
    lines: dict[str, int] = {}
    load_mapping(p, lines=lines)
    text_lines = p.read_text().split("\n")
    assert len(lines) == 100 + 10_000
    assert lines["section_0.key_0"] == 3 and lines["section_99.key_99"] == len(text_lines) - 2
    for key in ("section_0", "section_42.key_7", "section_99"):
        assert f'"{key.rsplit(".", 1)[-1]}"' in text_lines[lines[key] - 1]


def test_key_lines_skip_keys_inside_lists_and_repeated_names(tmp_path):
    p = tmp_path / "ds_config.json"
    p.write_text('{\n "a": [{"lr": 1}, {"lr": 2}],\n "lr": 3,\n "opt": {\n  "lr": 4\n },\n "b\\"q": 5\n}\n')
    lines: dict[str, int] = {}
    data = load_mapping(p, lines=lines)
    assert data["lr"] == 3
    assert lines == {"a": 2, "lr": 3, "opt": 4, "opt.lr": 5, 'b"q': 7}


def test_yaml_key_lines_from_one_parse(tmp_path):
    p = tmp_path / "hparams.yaml"
    p.write_text("# comment\nsolver:\n  base_lr: 0.02\n  ims_per_batch: 16\nseed: 1\n")
    lines: dict[str, int] = {}
    load_mapping(p, lines=lines)
    assert lines == {"solver": 2, "solver.base_lr": 3, "solver.ims_per_batch": 4, "seed": 5}


@pytest.mark.parametrize("text", ["a: " + "[" * 100_000 + "]" * 100_000 + "\n",
                                  "".join(" " * i + f"k{i}:\n" for i in range(200)) + " " * 200 + "v: 1\n",
                                  "a: &a [*a]\n"], ids=["flow 100000 deep", "block 200 deep", "self alias"])
def test_deep_yaml_is_refused_with_a_reason_not_a_crash(tmp_path, text):
    p = tmp_path / "hparams.yaml"
    p.write_text(text)
    with pytest.raises(HparamReadError, match="nested more than 32 levels"):
        load_mapping(p)


def test_only_the_first_yaml_document_is_read(tmp_path):
    p = tmp_path / "default_config.yaml"
    p.write_text("lr: 0.1\nbatch_size: 32\n---\nlr: 'Learning rate'\n---\nlr: [0.1, 0.01]\n")
    notes: list[str] = []
    assert load_mapping(p, notes) == {"lr": 0.1, "batch_size": 32}
    assert notes == ["only the first YAML document is read (more follow from line 3)"]


@pytest.mark.parametrize("name,text", [("hparams.yaml", "lr: 0.1\nseed: {big}\n"), ("hparams.json", '{{"lr": 0.1, "seed": {big}}}')])
def test_an_integer_of_thousands_of_digits_does_not_take_the_file_down(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text.format(big="9" * 5000))
    assert load_mapping(p) == {"lr": 0.1, "seed": float("inf")}  # too long for int(): read as a float, noted later


def test_hparam_file_names_are_patterns():
    from advisor.read.hparams import is_hparam_file

    assert all(is_hparam_file(n) for n in ("hparams.yaml", "Config.JSON", "resnet50_cifar10_config.yaml",
                                           "ds_config_zero2.json", "deepspeed.json"))
    assert not any(is_hparam_file(n) for n in ("tokenizer_config.json", "generation_config.json", "trainer_state.json"))
