"""A team's own cause ids, declared once in ``causes.yaml`` beside their rule files.

A rule may conclude a cause id that is not in the catalogue (advisor/causes.py): a custom cause. Undeclared, it
draws an ``unknown-cause`` warning, since a misspelt catalogue id looks the same. Declared in a ``causes.yaml`` in
the folder of the rule file (or a folder above it, up to the folder given to ``--rules``), it is known: no
warning, and the report titles the cause with the declared title instead of the first rule's::

    # causes.yaml
    augmentation_off: Data augmentation switched off in the training config
    tokenizer_mismatch:
      title: The tokenizer is not the one the checkpoint was trained with

The file is read with the safe YAML loader; it is not a rule file and the rule loader skips it.
"""

from __future__ import annotations

import re
from pathlib import Path

from advisor.errors import Diagnostic

CAUSES_FILE_NAMES = ("causes.yaml", "causes.yml")
MAX_CAUSES_FILE_BYTES = 256 * 1024
_ID = re.compile(r"^[a-z][a-z0-9_]*$")


def is_causes_file(path: Path) -> bool:
    return path.name in CAUSES_FILE_NAMES


def causes_files_for(rule_file: Path, root: Path) -> list[Path]:
    """The causes.yaml files that apply to ``rule_file``: its folder's and every folder's above it up to ``root``."""
    out: list[Path] = []
    folder = rule_file.parent
    root = root.resolve()
    while True:
        out.extend(folder / n for n in CAUSES_FILE_NAMES if (folder / n).is_file())
        if folder.resolve() == root or folder.parent == folder:
            return out
        folder = folder.parent


def read_causes_file(path: Path) -> tuple[dict[str, str], list[Diagnostic]]:
    """{cause id: title} of one causes.yaml, and a diagnostic per problem (the rest of the file is still read)."""
    import yaml  # only when a causes.yaml exists: a diagnosis without one does not load PyYAML

    shown = str(path)
    try:
        raw = path.read_bytes()
        if len(raw) > MAX_CAUSES_FILE_BYTES:
            return {}, [
                Diagnostic(path=shown, code="causes-file", message=f"larger than {MAX_CAUSES_FILE_BYTES} bytes")
            ]
        data = yaml.safe_load(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return {}, [Diagnostic(path=shown, code="causes-file", message=f"cannot read the cause declarations: {first}")]
    if data is None:
        return {}, []
    if not isinstance(data, dict):
        return {}, [
            Diagnostic(
                path=shown,
                code="causes-file",
                message="causes.yaml must map each cause id to its title",
                expected="augmentation_off: Data augmentation switched off",
            )
        ]
    declared: dict[str, str] = {}
    diags: list[Diagnostic] = []
    for key, value in data.items():
        title = value.get("title") if isinstance(value, dict) else value
        if not isinstance(key, str) or not _ID.match(key):
            diags.append(Diagnostic(path=shown, code="causes-file", message=f"cause id {key!r} is not snake_case"))
        elif not isinstance(title, str) or not title.strip():
            diags.append(
                Diagnostic(path=shown, code="causes-file", message=f"cause '{key}' has no title", expected="text")
            )
        else:
            declared[key] = title.strip()
    return declared, diags
