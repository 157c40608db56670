"""What a log says in words (advisor/knowledge/log_messages.py, advisor/extract/log_messages.py): messages numpy
and PyTorch printed in real runs (tests/extract/fixtures/make/message_logs.py), read as facts and weighed as
evidence for the mechanism they name; each beside a twin that prints nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import advisor
from advisor.diagnosis import read_pair
from advisor.extract import extract_facts

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _messages(run: Path):
    pair, _ = read_pair(run, None, {})
    return [f for f in extract_facts(pair).facts if f.kind == "log_message"]


def test_an_undefined_log_in_the_box_encoder_is_the_annotations_not_the_rate():
    (m,) = _messages(FIXTURES / "msg_box_targets_bad")
    assert (m.message_id, m.operation, m.count, m.about_targets) == ("numpy_invalid_value", "log", 1, True)
    assert m.code_path.endswith("boxes.py") and m.code_line.startswith("return np.stack([np.log(gw / aw)")
    report = advisor.diagnose(FIXTURES / "msg_box_targets_bad")
    assert [s.id for s in report.summary.symptoms] == ["nonfinite_loss"]
    top = report.causes[0]
    assert top.id == "label_errors" and top.confidence >= 0.5
    assert "xmin > xmax" in top.remedies[0]
    lr = next(c for c in report.causes + report.ruled_out if c.id == "lr_too_high")
    assert lr.confidence < 0.1 and "log-message-undefined-value-argues-against-lr" in lr.rules
    assert _messages(FIXTURES / "msg_box_targets_ok") == []
    assert not [c for c in advisor.diagnose(FIXTURES / "msg_box_targets_ok").causes if c.confidence >= 0.5]


def test_an_undefined_log_in_feature_code_is_the_operation():
    (m,) = _messages(FIXTURES / "msg_log_features_bad")
    assert (m.message_id, m.about_targets) == ("numpy_invalid_value", False)
    report = advisor.diagnose(FIXTURES / "msg_log_features_bad")
    assert report.causes[0].id == "nan_inf_source" and report.causes[0].confidence >= 0.5
    assert "np.log(raw)" in report.causes[0].evidence[0].text
    assert _messages(FIXTURES / "msg_log_features_ok") == []


def test_a_loss_that_broadcasts_its_target_is_a_loss_error():
    (m,) = _messages(FIXTURES / "msg_mse_broadcast_bad")
    assert (m.message_id, m.library, m.count) == ("torch_target_size", "torch", 1)
    assert m.operation == "torch.Size([442])" and "F.mse_loss" in m.code_line
    report = advisor.diagnose(FIXTURES / "msg_mse_broadcast_bad")
    assert report.causes[0].id == "loss_function_error" and report.causes[0].confidence >= 0.8
    assert _messages(FIXTURES / "msg_mse_broadcast_ok") == []
    assert not advisor.diagnose(FIXTURES / "msg_mse_broadcast_ok").causes


def test_fastchat_tokenization_mismatch_masks_every_label():
    """FastChat 0.2.36's preprocess() on a tokenizer its Llama offsets do not fit (fixtures/make/hf_masked_logs.py):
    its warning for each of 48 samples, then a transformers Trainer whose loss is 0 at every step. The message and
    the loss both name the preprocessing; the twin fine-tune without the warning names nothing."""
    (m,) = _messages(FIXTURES / "fastchat_tokenization_mismatch")
    assert (m.message_id, m.library, m.count, m.operation) == ("tokenization_mismatch", "fastchat", 48, "61 vs. 63")
    assert m.text == "WARNING: tokenization mismatch: 61 vs. 63. #turn = 2. (ignored)"
    report = advisor.diagnose(FIXTURES / "fastchat_tokenization_mismatch")
    top = report.causes[0]
    assert top.id == "preprocessing_mismatch" and top.confidence >= 0.9
    assert {"log-message-tokenization-mismatch", "train-loss-zero-from-the-start-every-label-masked"} <= set(top.rules)
    assert _messages(FIXTURES / "hf_labels_answer_masked") == []
    assert not advisor.diagnose(FIXTURES / "hf_labels_answer_masked").causes


def test_a_project_folder_named_like_labels_is_not_label_code(tmp_path):
    text = (FIXTURES / "msg_log_features_bad" / "train.log").read_text()
    (tmp_path / "train.log").write_text("/home/me/labelme-tools/feats.py:" + text.split(":", 1)[1])
    (m,) = _messages(tmp_path)
    assert m.code_path == "/home/me/labelme-tools/feats.py" and not m.about_targets


@pytest.mark.slow
def test_the_installed_numpy_and_torch_still_print_these_messages(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("sklearn")
    import importlib.util

    spec = importlib.util.spec_from_file_location("message_logs", FIXTURES / "make" / "message_logs.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    for name in make.SCRIPTS:
        make.run(name, "bad", tmp_path / name)
        assert len(_messages(tmp_path / name)) == 1, name
