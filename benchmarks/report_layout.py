"""Report layout in a real browser: does anything overflow its card at 1024 and 1400 px?

Renders a report (from ``--from results.json``, or the report.html given), opens it in
headless Chromium (Debian's ``chromium`` package: ``apt-get install -y chromium``) at each
width, and

* runs a script in the page that measures every element of every ``<section>`` card and
  lists those reaching past the card's edges (an element inside its own horizontal
  scroll box, such as a wide table, is allowed to be wider: it scrolls inside the card);
  the page itself must not scroll sideways;
* takes a screenshot per width (``report-<width>.png``) to look at.

Prints one row per width (page height, overflows, tables that scroll sideways inside
their card, tallest section) and writes JSON to
``benchmarks/results/report_layout-<machine>.json`` (or ``--json FILE``).

    python benchmarks/report_layout.py REPORT_DIR_OR_HTML [--widths 1024,1400] [--out DIR]
        [--machine dev-cpu]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CHECK_JS = r"""
<script>
window.addEventListener('load', function () {
  var problems = [];
  var root = document.documentElement;
  var docW = root.clientWidth;
  if (root.scrollWidth > docW + 1) {
    problems.push({what: 'page', section: '', right: root.scrollWidth, limit: docW, text: 'the page scrolls sideways'});
  }
  var sections = document.querySelectorAll('section');
  var heights = [];
  for (var i = 0; i < sections.length; i++) {
    var card = sections[i];
    var cr = card.getBoundingClientRect();
    heights.push({id: card.id, height: Math.round(cr.height)});
    if (cr.right > docW + 1) {
      problems.push({what: 'section', section: card.id, right: Math.round(cr.right), limit: docW, text: ''});
    }
    if (card.scrollWidth > card.clientWidth + 1) {
      problems.push({what: 'section-scrolls', section: card.id, right: card.scrollWidth, limit: card.clientWidth, text: 'the card itself scrolls sideways'});
    }
    var els = card.querySelectorAll('*');
    for (var j = 0; j < els.length; j++) {
      var el = els[j];
      var r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      var p = el.parentElement, inScrollBox = false;
      while (p && p !== card) {
        var ox = getComputedStyle(p).overflowX;
        if (ox === 'auto' || ox === 'scroll' || ox === 'hidden') { inScrollBox = true; break; }
        p = p.parentElement;
      }
      if (inScrollBox) continue;
      if (r.right > cr.right + 1 || r.left < cr.left - 1) {
        problems.push({what: el.tagName.toLowerCase(), section: card.id, right: Math.round(r.right),
                       limit: Math.round(cr.right), text: (el.textContent || '').trim().slice(0, 60)});
      }
    }
  }
  var scrolling = [];
  var tables = document.querySelectorAll('section table');
  for (var k = 0; k < tables.length; k++) {
    var t = tables[k];
    if (t.getClientRects().length === 0) continue;  // in a closed <details>: not laid out
    if (t.scrollWidth > t.clientWidth + 1) {
      var head = t.querySelector('tr');
      scrolling.push({section: t.closest('section').id, width: t.scrollWidth, visible: t.clientWidth,
                      header: ((head || t).textContent || '').trim().replace(/\s+/g, ' ').slice(0, 60)});
    }
  }
  var out = document.createElement('pre');
  out.id = 'trtcheck-layout-check';
  out.textContent = 'LAYOUT-CHECK' + JSON.stringify({width: docW, height: root.scrollHeight,
                                                     problems: problems, scrolling_tables: scrolling,
                                                     sections: heights}) + 'END-LAYOUT-CHECK';
  document.body.appendChild(out);
});
</script>
"""

_RESULT_RE = re.compile(r'<pre id="trtcheck-layout-check">LAYOUT-CHECK(.*?)END-LAYOUT-CHECK</pre>',
                        re.S)


def find_chromium() -> str | None:
    """Path of a Chromium binary (``chromium``, ``chromium-browser``, ``google-chrome``), or
    ``None``."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _chromium(binary: str, args: list[str], timeout_s: float = 120.0) -> str:
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--mute-audio", "--no-first-run", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"chromium exited {proc.returncode}: {proc.stderr[-500:]}")
    return proc.stdout


def check_layout(html_path: Path, width: int, binary: str | None = None,
                 height: int = 1200) -> dict[str, Any]:
    """Open ``html_path`` at ``width`` px in headless Chromium and measure overflows.

    Returns:
        ``{"width", "height" (page height, px), "problems": [{what, section, right,
        limit, text}], "scrolling_tables": [{section, width, visible, header}] (tables
        wider than their box, which scroll sideways inside the card: allowed, but a
        reader must scroll to see their last columns), "sections": [{id, height}]}``.

    Raises:
        RuntimeError: Chromium is missing or fails, or the page gave no result.
    """
    binary = binary or find_chromium()
    if binary is None:
        raise RuntimeError("chromium not found: apt-get install -y chromium")
    html = html_path.read_text(encoding="utf-8")
    probe = html.replace("</body>", CHECK_JS + "</body>", 1)
    with tempfile.TemporaryDirectory(prefix="trtcheck-layout-") as d:
        page = Path(d) / "report.html"
        page.write_text(probe, encoding="utf-8")
        dom = _chromium(binary, ["--dump-dom", "--virtual-time-budget=10000",
                                 f"--window-size={width},{height}", page.as_uri()])
    m = _RESULT_RE.search(dom)
    if m is None:
        raise RuntimeError("the layout check script gave no result")
    import html as _html

    return json.loads(_html.unescape(m.group(1)))


def screenshot(html_path: Path, width: int, out_png: Path, height: int,
               binary: str | None = None) -> Path:
    """Save a screenshot of ``html_path`` at ``width`` x ``height`` px as ``out_png``."""
    binary = binary or find_chromium()
    if binary is None:
        raise RuntimeError("chromium not found: apt-get install -y chromium")
    _chromium(binary, [f"--screenshot={out_png}", f"--window-size={width},{height}",
                       "--virtual-time-budget=10000", html_path.resolve().as_uri()])
    return out_png


def main(argv: list[str] | None = None) -> int:
    # imported here: the tests load this file by path for check_layout and find_chromium
    from _harness import add_machine_argument, result_path, write_json

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", help="report.html, a report folder, or a results.json to render")
    ap.add_argument("--widths", default="1024,1400")
    ap.add_argument("--out", default=None, help="folder for the screenshots")
    ap.add_argument("--json", default=None, help="result file [default: the naming rule]")
    add_machine_argument(ap)
    a = ap.parse_args(argv)
    src = Path(a.report)
    tmp = None
    if src.is_dir():
        src = src / "report.html"
    elif src.suffix == ".json":
        from trtcheck.report import render_report
        from trtcheck.results import load_results

        tmp = Path(tempfile.mkdtemp(prefix="trtcheck-layout-report-"))
        render_report(load_results(src), tmp / "report")
        src = tmp / "report" / "report.html"
    out_dir = Path(a.out) if a.out else src.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for w in (int(x) for x in a.widths.split(",")):
        res = check_layout(src, w)
        shot = screenshot(src, w, out_dir / f"report-{w}.png", height=res["height"])
        tallest = max(res["sections"], key=lambda s: s["height"], default={"id": "-",
                                                                            "height": 0})
        rows.append({"width_px": w, "page_height_px": res["height"],
                     "overflows": len(res["problems"]), "problems": res["problems"],
                     "scrolling_tables": res["scrolling_tables"],
                     "sections": res["sections"], "tallest_section": tallest,
                     "screenshot": str(shot)})
    print(f"{'width px':>8} {'page height px':>14} {'overflows':>9} {'scrolling tables':>16}"
          "  tallest section")
    for r in rows:
        t = r["tallest_section"]
        print(f"{r['width_px']:>8} {r['page_height_px']:>14} {r['overflows']:>9} "
              f"{len(r['scrolling_tables']):>16}  {t['id']} ({t['height']} px)")
        for st in r["scrolling_tables"][:10]:
            print(f"         scrolls: table in #{st['section']}: {st['width']} px in "
                  f"{st['visible']} px {st['header']!r}")
        for p in r["problems"][:10]:
            print(f"         overflow: <{p['what']}> in #{p['section']}: right {p['right']} "
                  f"> {p['limit']} {p['text']!r}")
    write_json(Path(a.json) if a.json else result_path("report_layout", a.machine),
               {"report": str(a.report), "rows": rows})
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if any(r["overflows"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
