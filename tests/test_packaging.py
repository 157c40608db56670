"""The wheel carries the rules and templates: build it, install it in a fresh venv, run it from elsewhere."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _see_dependencies_of_this_interpreter(py: Path) -> None:
    """Let the new venv import the dependencies installed where this test runs (no network).

    The running interpreter may itself be a venv (README's test command in a
    plain venv), whose packages ``system_site_packages`` would not see: its
    site-packages folders are listed in a .pth file of the new venv, after the
    venv's own folder, so the wheel's ``advisor`` comes first. Plain path lines
    only: an editable install of advisor there (a finder set up by a .pth
    file) stays invisible.
    """
    target = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                            check=True, capture_output=True, text=True).stdout.strip()
    dirs = dict.fromkeys([*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
                         + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else []))
    Path(target, "_advisor_test_deps.pth").write_text("".join(f"{d}\n" for d in dirs if Path(d).is_dir()))


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="paths of the venv differ on Windows")
def test_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    pytest.importorskip("build")
    pytest.importorskip("wheel")
    dist = tmp_path / "dist"
    # built from a copy of what ships: a stale build/ folder of the checkout (setuptools reuses it) cannot
    # leak into the wheel, and the test writes nothing into the checkout
    src = tmp_path / "src"
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for part in ("advisor", "rules", "templates"):
        shutil.copytree(ROOT / part, src / part, ignore=junk)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "-o", str(dist), str(src)],
                   check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = dist.glob("accuracy_advisor-*.whl")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    _see_dependencies_of_this_interpreter(py)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, capture_output=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    where = subprocess.run([str(py), "-c", "import advisor, pathlib; print(pathlib.Path(advisor.__file__).parent)"],
                           check=True, capture_output=True, text=True, cwd=outside, env=env).stdout.strip()
    assert Path(where).is_relative_to(env_dir), where
    from advisor import __version__

    assert wheel.name.startswith(f"accuracy_advisor-{__version__}-")  # one version source: advisor.__version__
    listed = subprocess.run([str(env_dir / "bin" / "advisor"), "rules", "list"], capture_output=True, text=True,
                            cwd=outside, env=env)
    assert listed.returncode == 0, listed.stderr
    from advisor.rulebase.load import load_rules

    n_rules = len(load_rules([ROOT / "rules"], trusted=True)[0])
    assert f"{n_rules} rules" in listed.stderr
    run = outside / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(f'{{"step": {i}, "loss": {2.0 / i}}}\n' for i in range(1, 50)))
    html = outside / "r.html"
    out = subprocess.run([str(env_dir / "bin" / "advisor"), "diagnose", str(run), "-o", str(html)],
                         capture_output=True, text=True, cwd=outside, env=env)
    assert out.returncode == 0, out.stderr
    assert "<svg" in html.read_text()
