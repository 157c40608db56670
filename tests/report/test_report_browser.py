"""The HTML report of a real run, opened in headless Chromium at desktop and phone width.

Skips when Debian's ``chromium`` is not installed (``apt-get install chromium``;
.ci/run installs it). Screenshots go to test-artifacts/report/ (git-ignored).
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

import advisor
from advisor.report.render import render

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "examples" / "lr_too_high"
ARTIFACTS = ROOT / "test-artifacts" / "report"
CHROMIUM = next((p for p in (shutil.which("chromium"), "/usr/bin/chromium") if p and Path(p).exists()), None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--disable-extensions", "--mute-audio"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")

# Headless Chromium keeps windows at least 500px wide, so the report is shown in an iframe of the
# wanted width (its own viewport: media queries apply). Only in the test's copy of the report, a
# script measures the layout after load and writes it into the page, which --dump-dom prints.
# The report itself has no script.
PROBE = """<script>
addEventListener('load', () => {
  const box = s => { const e = document.querySelector(s); if (!e) return null;
    const r = e.getBoundingClientRect(), st = getComputedStyle(e);
    return {w: r.width, h: r.height, top: r.top + scrollY, visible: st.display !== 'none' && st.visibility !== 'hidden'}; };
  const out = {viewport: innerWidth, scroll_width: document.documentElement.scrollWidth,
    summary: box('#summary'), checklist: box('#checklist'), loss: box('#plot-loss svg'), causes: box('#causes'),
    svgs: [...document.querySelectorAll('#plots svg')].map(s => s.getBoundingClientRect().width),
    svg_marks: [...document.querySelectorAll('#plot-loss text.mlabel')].map(t => t.textContent),
    tiny_text: [...document.querySelectorAll('body *')].filter(e => e.children.length === 0 && e.textContent.trim()
      && e.getClientRects().length && parseFloat(getComputedStyle(e).fontSize) < 10 && !e.closest('svg')).length,
    overflowing: [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > innerWidth + 1
      && !e.closest('.scroll')).map(e => e.tagName + '.' + e.className).slice(0, 5)};
  const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out);
  parent.document.body.appendChild(pre);
});
</script>"""


def _chromium(tmp: Path, *args: str, width: int, height: int) -> subprocess.CompletedProcess:
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'profile'}", f"--window-size={width},{height}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def _png_pixels(path: Path, max_rows: int) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes) with zlib: width, height, and the RGB bytes
    of the first ``max_rows`` rows (plain Python: the top of the page is what needs checking)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w, h, bpp = 8, b"", 0, 0, 3
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(min(h, max_rows)):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line[j] for j in range(stride) if j % bpp < 3))  # RGB only
        prev = line
    return w, h, rows


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    if not RUN.is_dir():
        pytest.skip("examples/lr_too_high is missing")
    tmp = tmp_path_factory.mktemp("browser")
    html = render(advisor.diagnose(str(RUN)), "html")
    report = tmp / "report.html"
    report.write_text(html, encoding="utf-8")
    probed = tmp / "probed.html"
    probed.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(report, ARTIFACTS / "lr_too_high.html")
    return tmp, report, probed
WIDTHS = (1100, 375)  # desktop, phone
GAP = 20


def _frames(tmp: Path, html: str, height: int, name: str) -> Path:
    """One page holding the report side by side in iframes of each width (srcdoc: same origin as the page),
    so one browser start lays out both."""
    page = tmp / f"{name}.html"
    doc = html.replace("&", "&amp;").replace('"', "&quot;")
    frames = "".join(f'<iframe style="border:0;width:{w}px;height:{height}px;margin-right:{GAP}px;background:#fff;'
                     f'vertical-align:top" srcdoc="{doc}"></iframe>' for w in WIDTHS)
    page.write_text(f'<!DOCTYPE html><html><body style="margin:0;background:#888;white-space:nowrap">{frames}'
                    f'</body></html>', encoding="utf-8")
    return page


WINDOW = sum(WIDTHS) + GAP * len(WIDTHS)


@pytest.fixture(scope="module")
def layout(page) -> dict[int, dict]:
    tmp, _, probed = page
    html = _frames(tmp, probed.read_text(encoding="utf-8"), 900, "probe")
    res = _chromium(tmp, "--dump-dom", "--virtual-time-budget=3000", html.as_uri(), width=WINDOW, height=900)
    found = re.findall(r'<pre id="probe">(.*?)</pre>', res.stdout, re.S)
    assert len(found) == len(WIDTHS), f"layout probes missing (rc={res.returncode}): {res.stderr[-500:]}"
    out = [json.loads(m.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
           for m in found]
    return {lay["viewport"]: lay for lay in out}


@pytest.mark.parametrize("width", WIDTHS)
def test_summary_plots_and_checklist_are_laid_out(layout, width):
    lay = layout[width]
    content = min(width, 1040) - 32  # body max-width minus its padding
    for part in ("summary", "checklist", "causes", "loss"):
        box = lay[part]
        assert box and box["visible"] and box["h"] > 50, (part, box)
        # two pictures a row on a desktop, one on a phone; text blocks take the full width
        assert box["w"] > (0.4 if part == "loss" and width > 900 else 0.85) * content, (part, box)
    assert lay["summary"]["top"] < lay["loss"]["top"] < lay["checklist"]["top"]  # the summary comes first
    assert len(lay["svgs"]) >= 4 and min(lay["svgs"]) > (0.4 if width > 900 else 0.85) * content
    assert "first non-finite train loss" in lay["svg_marks"]
    assert lay["scroll_width"] <= width, f"horizontal scrolling at {width}px: {lay['overflowing']}"
    assert lay["overflowing"] == [] and lay["tiny_text"] == 0


def test_screenshot_is_not_blank(page):
    tmp, report, _ = page
    height = 1800
    shot = ARTIFACTS / "lr_too_high.png"  # desktop on the left, phone on the right
    shot.unlink(missing_ok=True)
    html = _frames(tmp, report.read_text(encoding="utf-8"), height, "shot")
    res = _chromium(tmp, f"--screenshot={shot}", html.as_uri(), width=WINDOW, height=height)
    assert shot.exists(), res.stderr[-500:]
    w, h, rows = _png_pixels(shot, 640)  # the summary, and the first pictures on a desktop
    assert (w, h) == (WINDOW, height)
    left = 0
    for width in WIDTHS:
        part = [r[left * 3:(left + width) * 3] for r in rows[::4]]
        left += width + GAP
        colours, inked = set(), 0
        for row in part:
            px = [row[i:i + 3] for i in range(0, len(row), 3 * 3)]
            colours.update(px)
            inked += sum(p != b"\xff\xff\xff" for p in px)
        assert len(colours) > 50, (width, len(colours))  # text, curves, the red summary border and gauge
        share = inked / (len(part) * len(part[0]) // 9)
        assert 0.03 < share < 0.9, (width, share)
