"""The report's tune section (``report --from tune.json``) and ``tune --format md``: a real
tune document (ResNet-18 on an H200, recorded by ``benchmarks/tune_gpu.py tune-record``)
rendered as Markdown and HTML tables and lists."""

from __future__ import annotations

import json
import lzma
import re
from pathlib import Path

import pytest

from trtcheck.report import build_report, with_verdict
from trtcheck.report.tune_text import tune_markdown
from trtcheck.results import Results, results_from_json

RECORD = (Path(__file__).resolve().parent / "data" / "tune-gpu-raw"
          / "h200-host-resnet18-tune.json.xz")


@pytest.fixture(scope="module")
def tune_doc() -> Results:
    """The first tune document of the record: pick window 1 ms, max batch 2, 3 instances,
    measured by run 3, with a runner-up, a calibration and 4 live runs."""
    record = json.loads(lzma.decompress(RECORD.read_bytes()))
    return results_from_json(json.dumps(record["tunes"][0]["tune_json"]))


def _tune_part(text: str, start: str, end: str) -> str:
    i = text.index(start)
    j = text.find(end, i)
    return text[i:] if j < 0 else text[i:j]


def test_the_markdown_tune_section_is_tables_and_lists(tune_doc):
    """Before: the text output's lines as bullets (``-   measured: ...``,
    ``-   - objective ...``)."""
    _, md, _, _ = build_report(with_verdict(tune_doc))
    sec = _tune_part(md, "## Tune", "\n---\n")
    assert not re.search(r"^-\s{2,}", sec, re.MULTILINE), sec
    assert "**Pick:** window 1 ms, max batch 2, 3 instances" in sec
    assert re.search(r"^\| measured \| window 1 ms, max batch 2, 3 instances \| 4\.99 ms "
                     r"\(inside\) \| 8\.39 ms \(inside\) \| 487 q/s \| 1\.41 \| 1434 requests \|$",
                     sec, re.MULTILINE), sec
    assert re.search(r"^\| predicted \| .* \| 6\.12 ms \\\[3\.92, 8\.32\\\] \|", sec, re.MULTILINE)
    assert re.search(r"^\| runner-up \(predicted\) \| window 0 ms, max batch 2, 4 instances \|",
                     sec, re.MULTILINE)
    assert "**Why**\n\n- objective p99: " in sec
    assert re.search(r"^\| 3 \| 1: 4\.83, 2: 5\.15, .* \| x1\.22 \| fitted \|$", sec, re.MULTILINE)
    # live runs numbered as tune's progress lines and notes count them (a repeat counts)
    assert re.search(r"^\| 5 \| confirm \| open:478 \| 1 \| 2 \| 3 \| 4\.99 \| 8\.39 \| 1\.41 \|$",
                     sec, re.MULTILINE)
    assert re.search(r"^\| 2-3 \| calibration at the rate, with a repeat \| open:478 \|", sec,
                     re.MULTILINE), sec
    assert "**Notes**\n\n- 4 instances share 1 GPU" in sec
    # every table row has as many cells as its header
    for block in re.findall(r"(?:^\|.*\|\n)+", sec, re.MULTILINE):
        rows = [r for r in block.splitlines() if r]
        widths = {len(re.split(r"(?<!\\)\|", r)) for r in rows}
        assert len(widths) == 1, block


def test_the_html_tune_section_is_tables_and_lists(tune_doc):
    html, _, _, _ = build_report(with_verdict(tune_doc))
    sec = _tune_part(html, 'id="tune"', "</section>")
    assert "<pre" not in sec
    assert "<h3>Pick: window 1 ms, max batch 2, 3 instances</h3>" in sec
    assert sec.count("<table>") == 3  # the pick, T(b) per instance count, the live runs
    assert "<td class=\"nw\">4.99 ms (inside)</td>" in sec and "<li>objective p99: " in sec


def test_tune_format_md_is_the_report_section(tune_doc):
    assert tune_doc.tune is not None
    md = tune_markdown(tune_doc.tune)
    assert md.startswith("## Tune\n\ntune resnet18 at http://127.0.0.1:58785: 478 req/s")
    assert "| measured | window 1 ms, max batch 2, 3 instances |" in md
    assert not re.search(r"^-\s{2,}", md, re.MULTILINE), md
