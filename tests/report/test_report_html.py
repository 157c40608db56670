"""HTML and Markdown of a fixed Report: structure, sources, pictures, checklist, escaping, self-containment."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

from advisor.report.render import render

GOLDEN = Path(__file__).parent / "golden"
VOID = {"meta", "br", "img", "input", "hr", "link"}
SPACED = {"td", "th", "li", "p", "div", "tr", "pre"}  # cells and blocks: a space apart, as a browser shows them


class Node:
    def __init__(self, tag: str, attrs: dict, parent: "Node | None"):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, attrs, parent, [], []
        self.items: list = []  # text and child elements, in document order

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def all_text(self) -> str:
        parts = (i if isinstance(i, str) else f" {i.all_text()} " if i.tag in SPACED else i.all_text() for i in self.items)
        return " ".join("".join(parts).split())

    def find(self, tag: str | None = None, cls: str | None = None, id: str | None = None) -> list["Node"]:
        out = []
        for c in self.children:
            if (tag is None or c.tag == tag) and (cls is None or cls in c.classes) and (id is None or c.attrs.get("id") == id):
                out.append(c)
            out.extend(c.find(tag, cls, id))
        return out


class Tree(HTMLParser):
    """A strict little DOM: every element must be closed by its own end tag."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", {}, None)
        self.feed(text)
        self.close()
        assert self.cur is self.root, f"unclosed <{self.cur.tag}>"

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        self.cur.items.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        self.cur.items.append(node)

    def handle_endtag(self, tag):
        assert self.cur.tag == tag, f"</{tag}> closes <{self.cur.tag}>"
        self.cur = self.cur.parent

    def handle_data(self, data):
        self.cur.text.append(data)
        self.cur.items.append(data)

    def by_id(self, id: str) -> Node:
        found = self.root.find(id=id)
        assert len(found) == 1, f"{len(found)} elements with id {id}"
        return found[0]


def test_sections_in_reading_order_and_summary_first(report):
    html = render(report, "html")
    tree = Tree(html)
    sections = [n.attrs["id"] for n in tree.root.find("section")]
    assert sections == ["summary", "plots", "causes", "checklist", "inputs", "warnings"]
    summary = tree.by_id("summary")
    text = summary.all_text()
    assert "Most likely cause: Learning rate too high (lr_too_high)" in text
    assert "87% confidence" in text and "How sure: fairly sure, but check the runner-up causes too" in text
    assert "1 cause(s) at 50% or more; 4 of 10 checks ran (6 skipped); 2 input(s) unreadable" in text
    remedies = [li.all_text() for li in summary.find("ol")[0].find("li")]
    assert remedies == ["Lower the learning rate 3-10x.", "Add a warm-up of a few hundred steps.", "Clip gradients."]
    assert summary.find(cls="fill")[0].attrs["style"] == "width: 87%"


def test_every_cause_with_evidence_sources_rules_and_remedies(report):
    tree = Tree(render(report, "html"))
    lr = tree.by_id("cause-lr_too_high")
    items = [li.all_text() for li in lr.find("li", cls="for")]
    assert items[0].startswith("+train loss diverged from step 60; first NaN at step 90")
    assert "train.log:2-52 · rule loss-diverges (60%)" in items[0]
    assert "hparams.yaml · rule lr-above-band (70%)" in items[1]
    against = lr.find("li", cls="against")[0].all_text()
    assert "a warm-up of 100 steps was configured" in against and "rule warmup-present (-20%)" in against
    assert [li.all_text() for li in lr.find("ul", cls="remedies")[0].find("li")][-1] == "Run a learning-rate range test."
    weak = tree.by_id("cause-custom_cause")
    assert "weak" in weak.classes and "below the 50% threshold" in weak.all_text()
    assert "weak" not in lr.classes


def _figure(tree: Tree, chart: str) -> Node:
    return tree.by_id(f"plot-{chart}")


def test_pictures_are_inline_svg_with_anomalies_marked(report):
    tree = Tree(render(report, "html"))
    figures = tree.by_id("plots").find("figure")
    # loss first, then metric, lr, loss scale, ...: the order people look at them
    assert [f.attrs["id"] for f in figures] == ["plot-loss", "plot-metric", "plot-lr", "plot-loss_scale",
                                                "plot-op_error", "plot-class_hist", "plot-feature_range"]
    assert all(len(f.find("svg")) == 1 for f in figures)
    loss = _figure(tree, "loss")
    labels = [t.all_text() for t in loss.find("text", cls="mlabel")]
    # the extractor's NaN marker, the divergence start from the cause's facts, the loss-scale drops from their chart
    assert labels == ["loss scale drops (2x, first)", "train loss starts to rise", "first non-finite train loss"]
    assert "first non-finite eval loss" not in loss.all_text()  # its series is per epoch: not on the step axis
    assert "eval loss (eval_loss) is logged per epoch, not per step: not drawn here" in loss.all_text()
    dashed = [p for p in loss.find("polyline") if p.attrs.get("stroke-dasharray")]
    assert len(dashed) == 1 and dashed[0].find("title")[0].all_text() == "train loss (loss) (baseline)"
    # the train loss has NaN from step 90: the solid line stops there (one segment, 45 points)
    solid = [p for p in loss.find("polyline") if not p.attrs.get("stroke-dasharray")]
    assert len(solid) == 1 and len(solid[0].attrs["points"].split()) == 45
    scale = _figure(tree, "loss_scale")
    assert [m.find("title")[0].all_text() for m in scale.find("line", cls="marker")] == ["loss scale drop"] * 2
    assert "log" in scale.find("text", cls="axis")[1].all_text()
    ops = _figure(tree, "op_error")
    dots = ops.find("circle")
    assert len(dots) == 5  # the operator with a non-finite error has no point
    hot = [d for d in dots if d.attrs["fill"] == "#cf222e"]
    assert len(hot) == 1 and hot[0].find("title")[0].all_text().startswith("#3:")
    assert "source: Conv2d.conv2.0.forward" in ops.all_text()
    bars = _figure(tree, "class_hist")
    assert len(bars.find("rect")) == 1 + 3 + 2  # background + train (3 classes) + eval (2 classes)
    assert "eval classes: no samples of class 1" in bars.all_text()
    assert len(_figure(tree, "feature_range").find("path")) == 1  # the band
    marked = tree.by_id("plots").find("p", cls="anomalies")[0].all_text()
    assert "train loss starts to rise (loss, step 60)" in marked


def test_checklist_ran_and_skipped_with_how_to_collect(report):
    tree = Tree(render(report, "html"))
    items = tree.by_id("checklist").find("li")
    assert len(items) == 10
    assert [i.attrs["id"] for i in items if "ran" in i.classes] == [
        "check-hyperparameters", "check-input_data", "check-loss_curve", "check-network_wide_comparison"]
    loss = tree.by_id("check-loss_curve").all_text()
    assert loss.startswith("ran Loss curve") and "on train.log" in loss
    dyn = tree.by_id("check-training_dynamics")
    assert "skipped" in dyn.classes and "no input for this stage in the run" in dyn.all_text()
    code = dyn.find("pre", cls="code")[0]
    assert "".join(code.text) == "from advisor.capture import attach\ncap = attach(model, optimizer, 'run/', every=10)"
    fp = tree.by_id("check-floating_point_exceptions")
    assert [c.all_text() for c in fp.find("code")] == ["loss_scale"] and not fp.find("pre")


def test_inputs_used_and_unreadable_with_why(report):
    tree = Tree(render(report, "html"))
    bad = [li.all_text() for li in tree.by_id("inputs").find("ul", cls="unreadable")[0].find("li")]
    assert bad == ["metrics.csv (metrics): line 3: expected 4 columns, found 2 <script>alert(1)</script>",
                   "baseline/dump/manifest.json (dump): not valid JSON at line 1, column 2"]
    rows = [tr.all_text() for tr in tree.by_id("inputs").find("tbody")[0].find("tr")]
    assert rows == ["train.log log used read as keyvalue", "hparams.yaml hparams used",
                    "notes.txt other ignored not a known artifact"]


def test_hostile_text_is_escaped_everywhere(report):
    html = render(report, "html")
    assert "<script" not in html.lower() and "<img" not in html
    # title, evidence, remedy, unreadable why, warning, chart title, series label, marker label
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 8
    assert "&lt;img src=x onerror=alert(2)&gt;" in html


def test_self_contained_phone_and_print(report):
    html = render(report, "html")
    assert re.findall(r"https?://[^\s\"']+", html) == ["http://www.w3.org/2000/svg"] * html.count("<svg")
    for bad in ("<link", "@import", "url(", "@font-face"):
        assert bad not in html
    assert not re.search(r"<[a-z]+[^>]*\s(src|href)=\"(?!#)", html)  # no fetched resource, only in-page links
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert "@media (max-width: 600px)" in html and "@media print" in html


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("ADVISOR_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; rerun with ADVISOR_UPDATE_GOLDEN=1 if meant"


def test_markdown_golden(report):
    _golden("report.md", render(report, "md"))


def test_markdown_has_the_same_content(report):
    md = render(report, "md")
    assert "**Most likely cause: Learning rate too high (lr_too_high)** (87% confidence)" in md
    assert "| 1 | Learning rate too high (`lr_too_high`) | 87% | high |" in md
    assert "- train loss diverged from step 60; first NaN at step 90 — rule `loss-diverges`, train.log:2-52" in md
    assert "- against: a warm-up of 100 steps was configured — rule `warmup-present`, hparams.yaml" in md
    assert "### 2. Custom &lt;script&gt;alert(1)&lt;/script&gt; cause (`custom_cause`, 30%, below the 50% threshold)" in md
    assert "log line said &lt;img src=x onerror=alert(2)&gt; \\| pipe" in md  # a pipe cannot break a table
    assert "- train loss starts to rise (loss, step 60)" in md
    assert "| Training dynamics (weights, gradients, activations) | skipped | no input for this stage in the run |" in md
    assert ("  ```python\n  from advisor.capture import attach\n  cap = attach(model, optimizer, 'run/', every=10)\n"
            "  ```") in md
    assert "- `metrics.csv`: line 3: expected 4 columns, found 2 &lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert "- `dump/manifest.json` (baseline): not valid JSON at line 1, column 2" in md
    assert "<script" not in md and "<img" not in md


def test_runner_up_causes_are_named_in_the_summary(report):
    runner = report.causes[0].model_copy(update={"id": "gradient_explosion", "title": "Gradients explode",
                                                 "confidence": 0.6})
    report.causes.insert(1, runner)
    tree = Tree(render(report, "html"))
    also = tree.by_id("summary").find("p", cls="also")[0]
    assert also.all_text() == "Also likely: Gradients explode (60%)"
    assert also.find("a")[0].attrs["href"] == "#cause-gradient_explosion"
    assert "\nAlso likely: Gradients explode (60%).\n" in render(report, "md")
    report.causes.pop(1)
    assert "Also likely" not in render(report, "html") + render(report, "md")


def test_an_empty_run_still_renders_every_part():
    from advisor.report.model import CheckReport, Report, Summary

    empty = Report(advisor_version="0.0-test", run="runs/empty", summary=Summary(
        verdict="no_input", headline="Nothing to diagnose: no readable artifact in runs/empty",
        certainty="no evidence either way"),
        checks=[CheckReport(stage="loss_curve", title="Loss curve", status="skipped", enable="keep `train.log`")])
    tree = Tree(render(empty, "html"))
    assert [n.attrs["id"] for n in tree.root.find("section")] == ["summary", "causes", "checklist", "inputs"]
    assert "No cause found by the rules that could run." in tree.by_id("causes").all_text()
    assert "No readable artifact was found." in tree.by_id("inputs").all_text()
    assert tree.by_id("check-loss_curve").find("code")[0].all_text() == "train.log"
    md = render(empty, "md")
    assert "No cause found." in md and "- **Loss curve**: keep `train.log`" in md
