"""The command's own process imports with the garbage collector off and freezes what it imported (cli_common.py)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from advisor import cli, cli_common

ROOT = Path(__file__).resolve().parents[1]


def test_a_caller_of_main_keeps_its_collector_as_it_was() -> None:
    assert not cli_common.OWN_PROCESS
    frozen = gc.get_freeze_count()
    with cli_common.long_lived_imports():
        assert gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_the_command_process_imports_without_collections_then_collects_again(monkeypatch) -> None:
    monkeypatch.setattr(cli_common, "OWN_PROCESS", True)
    frozen = gc.get_freeze_count()
    try:
        with cli_common.long_lived_imports():
            assert not gc.isenabled()
            kept = [[] for _ in range(100)]  # objects made while importing
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen + len(kept)
    finally:
        gc.unfreeze()
        gc.enable()


def test_python_m_advisor_diagnoses_with_the_collector_on_afterwards(tmp_path: Path) -> None:
    script = (
        "import gc, json, runpy, sys\n"
        "sys.argv = ['advisor', 'diagnose', sys.argv[1], '--format', 'json', '-o', sys.argv[2]]\n"
        "try:\n"
        "    runpy.run_module('advisor', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    print(json.dumps([exc.code, gc.isenabled(), gc.get_freeze_count()]))\n"
    )
    out = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), ADVISOR_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-c", script, str(ROOT / "examples/lr_too_high"), str(out)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    code, enabled, frozen = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == cli.EXIT_OK and enabled and frozen > 10_000
    assert json.loads(out.read_text())["causes"][0]["id"] == "lr_too_high"
