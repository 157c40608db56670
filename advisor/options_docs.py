"""docs/thresholds.md from the extractors' option groups (advisor/extract/options.py): every --threshold name, its
default and what it sets. A maintainer's tool, as advisor/rulebase/docs.py is for the rule pages:

    python -m advisor.options_docs            # write the page
    python -m advisor.options_docs --check    # exit 1 if it is out of date
"""

from __future__ import annotations

from dataclasses import fields

from advisor.extract.options import OPTION_GROUPS, defaults, known_options, prefix_of

#: what each group sets, where its dataclass's docstring does not say (CurveThresholds lives with the curves)
GROUP_TITLES = {"loss_curve": "loss_curve.*: the shape of a loss curve (extract/curves.py, extract/loss_curve.py)."}


def options_page() -> str:
    """docs/thresholds.md: every --threshold name, its default and what it sets, from the option groups."""
    lines = [
        "# Extractor thresholds (`--threshold NAME=VALUE`)",
        "",
        "Generated from `advisor/extract/options.py` by `python -m advisor.options_docs`; do not edit by hand.",
        "A name that is not listed gets a warning with the closest listed one. The comparison's tolerances",
        "(`compare.<dtype>.<metric>`, e.g. `compare.float16.cosine_error=0.99`) are described in",
        "[comparing-dumps.md](comparing-dumps.md).",
        "",
    ]
    helps, defs = known_options(), defaults()
    for group in OPTION_GROUPS:
        title = prefix_of(group)
        doc = GROUP_TITLES.get(title, (group.__doc__ or "").strip().split("\n")[0])
        lines += [f"## `{title}.*`", "", doc, ""]
        lines += ["| name | default | what it sets |", "|---|---|---|"]
        for f in fields(group):
            key = f"{title}.{f.name}"
            default = "unset" if defs[key] is None else f"`{defs[key]}`"
            what = helps[key].replace("|", "\\|")
            lines.append(f"| `{key}` | {default} | {what} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write docs/thresholds.md, or with --check say whether it is up to date (exit 1 if not)."""
    import sys
    from pathlib import Path

    args = sys.argv[1:] if argv is None else argv
    page = Path(__file__).resolve().parents[1] / "docs" / "thresholds.md"
    text = options_page()
    if "--check" in args:
        current = page.read_text(encoding="utf-8") if page.is_file() else ""
        if current != text:
            print(f"{page} is out of date: run python -m advisor.options_docs", file=sys.stderr)
            return 1
        return 0
    page.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
