"""A compared dump tree laid out: the step x rank table, what it shows, and the detail of one pair.

Text (stdout), CSV (one row per step x rank pair), JSON (the table, the
reading, the pairing and the shown pair's full tensor table) and HTML (the
comparison page with a "Steps and ranks" section on top). Nothing here
computes: the cells and the reading come from ``ranks.py``.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from advisor.atomic import open_atomic, write_text_atomic
from advisor.compare.table import CompareTable, build_table, format_cell, json_value, summary_text, to_html, write_json
from advisor.compare.ranks import Cell
from advisor.compare.tree_compare import TreeResult
from advisor.read.safe import csv_text, shown

#: the CSV's columns: every field of a cell
CELL_COLUMNS = list(Cell.__dataclass_fields__)


def shown_table(tree: TreeResult) -> CompareTable | None:
    res = tree.shown_pair()
    if res is None:
        return None
    return build_table(res.comparison, res.localisation, res.cell.run, res.cell.baseline)


def tree_dict(tree: TreeResult) -> dict[str, Any]:
    res = tree.shown_pair()
    return {
        "run": tree.run_root,
        "baseline": tree.baseline_root,
        "divergence": asdict(tree.divergence) if tree.divergence else None,
        "pairing": {
            "pairs": len(tree.pairing.pairs),
            "note": tree.pairing.note,
            "unpaired_run": [leaf.rel for leaf in tree.pairing.unpaired_run],
            "unpaired_baseline": [leaf.rel for leaf in tree.pairing.unpaired_baseline],
        },
        "cells": [{k: json_value(v) for k, v in asdict(c).items()} for c in tree.cells],
        "shown_pair": {"step": res.cell.step, "rank": res.cell.rank} if res else None,
    }


def tree_text(tree: TreeResult, limit: int = 30) -> str:
    d = tree.divergence
    lines = [
        f"advisor compare: {len(tree.cells)} step x rank pairs"
        + (f" ({tree.pairing.note})" if tree.pairing.note else "")
    ]
    if d is not None:
        lines.append(d.sentence)
        if d.pairs_not_compared:
            lines.append(f"{d.pairs_not_compared} pairs could not be compared (see the table)")
    for leaf in tree.pairing.unpaired_run[:10]:
        lines.append(f"no baseline counterpart: run {leaf.rel}")
    for leaf in tree.pairing.unpaired_baseline[:10]:
        lines.append(f"no run counterpart: baseline {leaf.rel}")
    lines.append("")
    lines.append(f"{'step':>5} {'rank':>5} {'errors':>6} {'cosine':>9}  first deviating operator (kind)")
    rows = _step_rows(tree, limit)
    lines.extend(rows)
    table = shown_table(tree)
    res = tree.shown_pair()
    if table is not None and res is not None:
        lines.append("")
        lines.append(f"detail of {res.run.label}:")
        lines.append(summary_text(table, limit).rstrip("\n"))
    return "\n".join(lines) + "\n"


#: pairs of one step that deviate at the same operator are shown as one line from this many on
GROUP_FROM = 4


def rank_span(ranks: list[int]) -> str:
    """[0, 1, 2, 3, 5, 7, 8] -> '0-3, 5, 7-8'."""
    parts: list[str] = []
    for r in sorted(ranks):
        if parts and "-" in parts[-1] and int(parts[-1].split("-")[1]) == r - 1:
            parts[-1] = f"{parts[-1].split('-')[0]}-{r}"
        elif parts and "-" not in parts[-1] and int(parts[-1]) == r - 1:
            parts[-1] = f"{parts[-1]}-{r}"
        else:
            parts.append(str(r))
    return ", ".join(parts)


def _step_rows(tree: TreeResult, limit: int) -> list[str]:
    """Per step: 'all N ranks match', or the deviating pairs (those at one operator on many ranks as one
    line), then how many match; at most ``limit`` rows of pairs."""
    out: list[str] = []
    steps: dict[int | None, list[Cell]] = {}
    for c in tree.cells:
        steps.setdefault(c.step, []).append(c)
    shown_rows = 0
    for step, cells in steps.items():
        label = "" if step is None else str(step)
        odd = [c for c in cells if c.problem or c.first_op]
        if not odd:
            out.append(f"{label:>5} {'':>5} {'':>6} {'':>9}  all {len(cells)} ranks match")
            continue
        groups: dict[tuple[str | None, str | None], list[Cell]] = {}
        for c in odd:
            groups.setdefault((c.problem, None) if c.problem else (c.first_op, c.first_kind), []).append(c)
        for (what, kind), members in groups.items():
            if shown_rows >= limit:
                out.append(f"{'':>5} {'':>5} ... more deviating pairs (-o FILE.csv lists every pair)")
                return out
            ranks = [c.rank for c in members if c.rank is not None]
            text = f"not compared: {what}" if kind is None and members[0].problem else f"{what} ({kind})"
            if len(members) >= GROUP_FROM and len(ranks) == len(members):
                errors = sum(c.errors for c in members)
                cosines = [c.cosine for c in members if c.cosine is not None]
                low = format_cell(min(cosines)) if cosines else ""
                out.append(
                    f"{label:>5} {'*':>5} {errors:>6} {low:>9}  {text} on {len(members)} ranks: {rank_span(ranks)}"
                )
                shown_rows += 1
                continue
            for c in members:
                if shown_rows >= limit:
                    break
                rank = "" if c.rank is None else str(c.rank)
                out.append(f"{label:>5} {rank:>5} {c.errors:>6} {format_cell(c.cosine):>9}  {text}")
                shown_rows += 1
        if len(cells) > len(odd):
            out.append(f"{label:>5} {'':>5} {'':>6} {'':>9}  the other {len(cells) - len(odd)} ranks match")
    return out


def write_tree(tree: TreeResult, path: str) -> None:
    """The tree to ``path`` by its suffix: .csv the step x rank table, .json everything, .html the page."""
    ext = Path(path).suffix.lower()
    table = shown_table(tree)
    if ext in (".html", ".htm"):
        res = tree.shown_pair()
        page = to_html(table, tree=tree_dict(tree), shown_label=res.run.label if res else "") if table else ""
        write_text_atomic(path, shown(page))
        return
    with open_atomic(path) as raw:
        out = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        if ext == ".json":
            fields = tree_dict(tree)
            out.write("{\n")
            for key, value in fields.items():
                out.write(f" {json.dumps(key)}: {json.dumps(value)},\n")
            out.write(' "pair": ')
            if table is not None:
                write_json(table, out)
            else:
                out.write("null\n")
            out.write("}\n")
        else:
            w = csv.DictWriter(out, fieldnames=CELL_COLUMNS, lineterminator="\n")
            w.writeheader()
            for c in tree.cells:
                rec = {k: json_value(v) for k, v in asdict(c).items()}
                w.writerow({k: csv_text("" if v is None else v) for k, v in rec.items()})
        out.flush()
        out.detach()


__all__ = ["tree_text", "write_tree", "tree_dict", "CELL_COLUMNS"]
