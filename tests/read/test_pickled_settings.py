"""training_args.bin (Trainer's torch.save of its TrainingArguments) read without unpickling."""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import pytest

from tests.optional import importorskip

from advisor.extract import extract_facts
from advisor.extract.base import RunPair
from advisor.inventory import RunFolder
from advisor.read.hparams import HparamReadError, load_mapping
from advisor.read.pickled_settings import PickledSettingsError, read_training_args

RUN = Path(__file__).parent / "hf_trainer_runs" / "bert_lr_high"
ARGS = RUN / "output" / "training_args.bin"


def test_fields_as_training_arguments_to_dict_gives_them():
    got = read_training_args(ARGS.read_bytes())
    assert got["learning_rate"] == 2.0
    assert got["num_train_epochs"] == 6
    assert got["per_device_train_batch_size"] == 32
    assert got["warmup_steps"] == 20
    assert got["weight_decay"] == 0.01
    # enum members (SchedulerType, OptimizerNames, IntervalStrategy) come out as their values
    assert got["lr_scheduler_type"] == "linear"
    assert got["optim"] == "adamw_torch_fused"
    assert got["eval_strategy"] == "epoch"
    assert got["report_to"] == []
    assert got["accelerator_config"]["even_batches"] is True  # a nested dataclass: its fields
    assert "hub_token" not in got and not any(k.startswith("_") for k in got)
    assert len(got) == 117


def test_same_as_torch_load_where_torch_is_installed():
    torch = pytest.importorskip("torch")
    importorskip("transformers", "PreTrainedModel", "TrainerCallback")
    ref = torch.load(ARGS, weights_only=False).to_dict()  # the test's own file, trusted
    got = read_training_args(ARGS.read_bytes())
    shared = set(ref) & set(got)
    assert set(got) - shared == {"distributed_state", "mixed_precision", "deepspeed_plugin", "fsdp_plugin_args"}
    assert set(ref) - shared == {"hub_token"}  # masked by to_dict, left out here
    assert {k: got[k] for k in shared} == {k: ref[k] for k in shared}


def test_settings_reach_the_hyperparameter_facts():
    ex = extract_facts(RunPair(run=RunFolder.scan(RUN)))
    hp = {f.name: f for f in ex.facts if f.kind == "hyperparameter"}
    assert hp["learning_rate"].value == 2.0
    assert hp["learning_rate"].raw_key == "learning_rate"
    assert hp["optimizer"].value == "adamw"
    assert hp["warmup_steps"].value == 20
    assert hp["framework"].value == "pytorch"
    used = [i for i in ex.inputs if i.path.endswith("training_args.bin")]
    assert used and all(i.status == "used" for i in used)


def _archive(pickled: bytes, name: str = "training_args/data.pkl") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(name, pickled)
    return buf.getvalue()


def test_a_pickle_that_calls_a_function_is_never_run(tmp_path: Path):
    marker = tmp_path / "ran"
    # {'learning_rate': 0.1, 'x': os.system('touch MARKER')} as protocol 0 opcodes
    pickled = f"(dp0\nS'learning_rate'\np1\nF0.1\nsS'x'\ncos\nsystem\n(S'touch {marker}'\ntRs.".encode()
    got = read_training_args(_archive(pickled))
    assert not marker.exists()
    assert got["learning_rate"] == 0.1
    assert got["x"] == f"touch {marker}"  # the call's argument as text, nothing called


def test_an_object_at_the_top_that_is_not_a_mapping_is_refused():
    with pytest.raises(PickledSettingsError, match="not a mapping"):
        read_training_args(_archive(pickle.dumps([1, 2, 3], protocol=2)))


def test_shared_values_cannot_blow_up():
    # each tuple holds the previous one twice: 2**25 values once copied out, 25 levels deep
    ops = [b"\x80\x02]q\x00."[:-1]]
    for i in range(1, 26):
        ops.append(b"h" + bytes([i - 1]) + b"h" + bytes([i - 1]) + b"\x86q" + bytes([i]))
    pickled = b"".join(ops) + b"."
    with pytest.raises(PickledSettingsError, match="shared too deeply"):
        read_training_args(_archive(pickled))


def test_not_a_torch_save_archive_is_a_clear_problem(tmp_path: Path):
    path = tmp_path / "training_args.bin"
    path.write_bytes(pickle.dumps({"learning_rate": 0.1}, protocol=2))  # a legacy (non-zip) save
    with pytest.raises(HparamReadError, match="not a zip archive"):
        load_mapping(path)
