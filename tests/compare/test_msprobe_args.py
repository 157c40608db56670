"""msprobe's non-tensor arguments: read, compared, and cited at the source operator."""

from __future__ import annotations

from advisor.diagnosis import diagnose
from advisor.extract.op_compare import arg_differences
from advisor.read.dumps import read_dump


def test_non_tensor_arguments_are_read(shared_msprobe):
    run = read_dump(shared_msprobe / "r_tanh" / "step0" / "rank0")
    base = read_dump(shared_msprobe / "r_base" / "step0" / "rank0")
    assert run.args["Functional.gelu.0.forward"] == {"approximate": "tanh"}
    assert "Functional.gelu.0.forward" not in base.args
    assert run.args["Functional.batch_norm.0.forward"]["arg7"] == 1e-05  # eps, positional
    assert base.args["Functional.batch_norm.0.forward"] == run.args["Functional.batch_norm.0.forward"]


def test_argument_differences_in_words():
    assert arg_differences({"approximate": "tanh"}, {}) == [
        "approximate='tanh' in the run, not given (default) in the baseline"]
    assert arg_differences({"eps": 1e-2, "dim": -1}, {"eps": 1e-5, "dim": -1}) == [
        "eps=0.01 in the run, 1e-05 in the baseline"]
    assert arg_differences({"keepdim": True}, {"keepdim": 1}) == [
        "keepdim=True in the run, 1 in the baseline"]
    assert arg_differences({"eps": 1e-5}, {"eps": 1.0000000000001e-5}) == []


def test_the_differing_argument_is_cited_at_the_source(shared_msprobe):
    report = diagnose(shared_msprobe / "r_tanh", baseline=shared_msprobe / "r_base")
    top = report.causes[0]
    assert top.id == "operator_accuracy"
    cited = next(e for e in top.evidence if e.rule == "source-operator-argument-differs")
    assert "Functional.gelu.0.forward" in cited.text and "approximate='tanh'" in cited.text
