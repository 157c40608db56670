"""The standalone comparison as a table: one row per tensor pair, the source operator on top.

``build_table`` turns a ``Comparison`` and its ``Localisation`` into a
``CompareTable`` (plain data); ``to_csv``, ``to_json`` and ``to_html`` only
format it (HTML through the autoescaped template ``templates/compare.html.j2``).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Iterator, Sequence
from typing import Any, TextIO, overload

from advisor.atomic import open_atomic, write_text_atomic
from advisor.chart_data import Marker, Series
from advisor.compare.chart import op_error_series
from advisor.compare.engine import Comparison, Row
from advisor.compare.localise import Localisation
from advisor.compare.accumulator import PairMetrics
from advisor.read.safe import csv_text, shown

METRIC_COLUMNS = [f for f in PairMetrics.__dataclass_fields__]
COLUMNS = [
    "name",
    "baseline_name",
    "op",
    "op_type",
    "role",
    "order",
    "position",
    "verdict",
    "reason",
    "mode",
    "matched_by",
    "dtype_run",
    "dtype_baseline",
    "shape_run",
    "shape_baseline",
    "stat_rel_diff",
] + METRIC_COLUMNS


@dataclass
class CompareTable:
    run: str
    baseline: str
    mode: str
    source: str | None
    source_reason: str | None
    propagated: list[str]
    independent_sources: list[str]
    first_difference: str | None
    nonfinite_source: str | None
    fp16_overflow: str | None
    integer_valued: str | None
    counts: dict[str, int]
    rows: Sequence[dict[str, Any]]
    unmatched_run: list[str] = field(default_factory=list)
    unmatched_baseline: list[str] = field(default_factory=list)
    problems: list[dict[str, str]] = field(default_factory=list)
    #: the per-operator error along the execution order, the source marked (drawn in the HTML table only)
    chart: tuple[list[Series], list[Marker]] | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "chart"}


def json_value(v: Any) -> Any:
    """A cell's value as JSON holds it: NaN as null, infinities as "inf"/"-inf", tuples as lists."""
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, tuple):
        return list(v)
    return v


def row_record(r: Row) -> dict[str, Any]:
    rec: dict[str, Any] = {c: json_value(getattr(r, c, None)) for c in COLUMNS[:16]}
    metrics = r.metrics.as_dict() if r.metrics else {}
    for c in METRIC_COLUMNS:
        rec[c] = json_value(metrics.get(c))
    return rec


class TableRows(Sequence[dict[str, Any]]):
    """The table's rows as records (``row_record``), made when read: a comparison of 10^5 tensors keeps its
    ``Row`` objects, not a second copy of every value as a dict of 50 columns."""

    def __init__(self, rows: list[Row]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [row_record(r) for r in self._rows[i]]
        return row_record(self._rows[i])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (row_record(r) for r in self._rows)


def build_table(comp: Comparison, loc: Localisation, run: str, baseline: str) -> CompareTable:
    src = loc.source.op if loc.source else None
    # the source operator's outputs on top, then its inputs, then everything in execution order
    rows = sorted(comp.rows, key=lambda r: (r.op != src, r.order, r.role != "input", r.name))
    top = [r for r in rows if r.op == src and r.role == "output"]
    rows = top + [r for r in rows if not (r.op == src and r.role == "output")]
    worst = loc.source.worst_output() if loc.source else None
    counts = {v: sum(r.verdict == v for r in comp.rows) for v in ("pass", "warning", "error", "skipped")}
    return CompareTable(
        run=run,
        baseline=baseline,
        mode=comp.mode,
        source=loc.source.op if loc.source else None,
        source_reason=worst.reason if worst else None,
        propagated=[v.op for v in loc.propagated],
        independent_sources=[v.op for v in loc.independent_sources],
        first_difference=loc.first_difference.op if loc.first_difference else None,
        nonfinite_source=loc.nonfinite_source.op if loc.nonfinite_source else None,
        fp16_overflow=loc.fp16_overflow.op if loc.fp16_overflow else None,
        integer_valued=loc.integer_valued.op if loc.integer_valued else None,
        counts=counts,
        rows=TableRows(rows),
        unmatched_run=[r.name for r in comp.unmatched_run],
        unmatched_baseline=[r.name for r in comp.unmatched_baseline],
        problems=[{"side": s, "file": f, "why": w} for s, f, w in comp.problems],
        chart=op_error_series(loc, "run vs baseline"),
    )


def write_csv(table: CompareTable, out: TextIO) -> None:
    w = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for rec in table.rows:
        w.writerow(
            {
                k: csv_text(json.dumps(v) if isinstance(v, list) else ("" if v is None else v))  # no formulas
                for k, v in rec.items()
            }
        )


def to_csv(table: CompareTable) -> str:
    buf = io.StringIO()
    write_csv(table, buf)
    return buf.getvalue()


def write_json(table: CompareTable, out: TextIO) -> None:
    """The table as JSON: one key per line, one row per line (each by json's C encoder: a table of 10^5 rows
    takes seconds, where an indented dump of the whole takes minutes and holds the text twice in memory)."""
    fields = table.as_dict()
    rows = fields.pop("rows")
    out.write("{\n")
    for key, value in fields.items():
        out.write(f" {json.dumps(key)}: {json.dumps(value)},\n")
    out.write(' "rows": [')
    for i, rec in enumerate(rows):
        out.write(("\n  " if i == 0 else ",\n  ") + json.dumps(rec))
    out.write("\n ]\n}\n" if rows else "]\n}\n")


def to_json(table: CompareTable) -> str:
    buf = io.StringIO()
    write_json(table, buf)
    return buf.getvalue()


def format_cell(v: Any) -> str:
    """A cell's value as short text: blank for None, yes/no, floats to 4 significant digits, lists as 2×3."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        return "×".join(str(x) for x in v)
    return str(v)


def summary_text(table: CompareTable, limit: int = 30) -> str:
    """The table as the short text ``advisor compare`` prints without ``-o``: counts, the source operator,
    the first findings, then at most ``limit`` rows that do not pass."""
    lines = [
        f"advisor compare: {table.mode} mode, {table.counts['error']} error, {table.counts['warning']} warning, "
        f"{table.counts['pass']} pass, {table.counts['skipped']} skipped"
    ]
    if table.source:
        lines.append(
            f"source operator: {table.source} ({table.source_reason}); "
            f"{len(table.propagated)} operators after it only inherit the error"
        )
        if table.independent_sources:
            lines.append("independent sources: " + ", ".join(table.independent_sources))
    else:
        skipped = table.counts["skipped"]
        lines.append(
            "no operator deviates beyond tolerance"
            + (f" among those compared ({skipped} not compared: see below)" if skipped else "")
        )
    for label, value in (
        ("first difference", table.first_difference),
        ("first NaN/Inf from finite inputs", table.nonfinite_source),
        ("first output beyond fp16 range", table.fp16_overflow),
        ("first integer-valued float output", table.integer_valued),
    ):
        if value:
            lines.append(f"{label}: {value}")
    for p in table.problems:
        lines.append(f"not compared ({p['side']}): {p['file']}: {p['why']}")
    if table.unmatched_run or table.unmatched_baseline:
        lines.append(
            f"unmatched: {len(table.unmatched_run)} run tensors, {len(table.unmatched_baseline)} baseline tensors"
        )
    shown = [r for r in table.rows if r["verdict"] != "pass"][:limit]
    if shown:
        lines.append("")
        lines.append(f"{'verdict':8} {'cosine':>9} {'max_abs_err':>11} {'rel_dist':>9}  tensor  (reason)")
        for r in shown:
            lines.append(
                f"{r['verdict']:8} {format_cell(r['cosine']):>9} {format_cell(r['max_abs_err']):>11} "
                f"{format_cell(r['euclid_rel_dist']):>9}  {r['name']}  ({r['reason']})"
            )
    return "\n".join(lines) + "\n"


def to_html(table: CompareTable, tree: dict[str, Any] | None = None, shown_label: str = "") -> str:
    """The comparison page; ``tree`` (``tree_table.tree_dict``): a dump tree's step x rank section on top, the
    table below being the pair ``shown_label``."""
    import jinja2

    templates = Path(__file__).resolve().parents[2] / "templates"
    if not (templates / "compare.html.j2").is_file():  # installed: templates ship as advisor.templates
        templates = Path(__file__).resolve().parents[1] / "templates"
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)), autoescape=True, undefined=jinja2.StrictUndefined
    )
    env.filters["fmt"] = format_cell
    shown = [
        "name",
        "op_type",
        "position",
        "verdict",
        "reason",
        "dtype_run",
        "dtype_baseline",
        "shape_run",
        "cosine",
        "max_abs_err",
        "euclid_rel_dist",
        "max_rel_err",
        "mean_rel_err",
        "rel_err_within_1e3_ratio",
        "rel_err_within_5e3_ratio",
        "accum_rel_err",
        "accum_abs_err_ratio",
        "rmse",
        "kl_div",
        "nan_run",
        "inf_run",
        "stat_rel_diff",
    ]
    plot = None
    if table.chart is not None and table.chart[0]:
        from advisor.report.model import Chart
        from advisor.report.plots import build

        series, markers = table.chart
        plot = build(
            Chart(id="op_error", title="Per-operator error along execution order", series=series, markers=markers)
        )
    return env.get_template("compare.html.j2").render(
        table=table, columns=shown, plot=plot, tree=tree, shown_label=shown_label
    )


def write(table: CompareTable, path: str) -> None:
    """The table to ``path`` by its suffix (.json, .html, else CSV), streamed row by row (JSON, CSV) into a
    temporary file renamed over ``path`` at the end: an old table stays whole if the disk is full."""
    ext = Path(path).suffix.lower()
    if ext in (".html", ".htm"):  # autoescaped, but escapes do not cover terminal control characters
        write_text_atomic(path, shown(to_html(table)))
        return
    with open_atomic(path) as raw:
        out = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        (write_json if ext == ".json" else write_csv)(table, out)
        out.flush()
        out.detach()
