"""The report summary counts every finding the report shows, by
severity (it said "6 warning(s)" beside 9 shown warnings: serving warnings were left out,
and an error-level lint was called a warning)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from trtcheck.testing import synthetic_results as g

from trtcheck.report import build_report  # noqa: E402
from trtcheck.report.sec_summary import count_sentence  # noqa: E402
from trtcheck.results import Finding  # noqa: E402
from trtcheck.results.model import load_results  # noqa: E402
from conftest import synthetic_serve_json  # noqa: E402


@pytest.fixture(scope="module")
def serve_results(tmp_path_factory):
    return load_results(synthetic_serve_json(
        tmp_path_factory.mktemp("fixes5-counts") / "serve.json"))


def _shown(html: str) -> dict[str, int]:
    found = re.findall(r'class="finding (error|warning|info)"', html)
    return {s: found.count(s) for s in ("error", "warning", "info")}


def _sentence(md: str) -> str:
    m = re.search(r"^(.* in this report\.)$", md, flags=re.M)
    assert m, md[:2000]
    return m.group(1)


def test_summary_counts_serving_warnings_and_errors(serve_results):
    res = serve_results.model_copy(deep=True)
    synth = g.results({1: 2.0, 8: 9.0}, n=15, seed=1, sigma=0.4)  # few, noisy samples
    res.bench = synth.bench
    res.inspection = synth.inspection.model_copy(update={"lints": [
        Finding(code="qa-error", severity="error", message="an error-level lint"),
        Finding(code="qa-warn", severity="warning", message="a warning lint")]})
    res.serve.configs[0].warnings.append(
        Finding(code="qa-serve", severity="warning", message="a config warning", where="c0"))
    res.serve.warnings.append(
        Finding(code="qa-run", severity="warning", message="a run warning", where="run"))
    html, md, _, _ = build_report(res)
    shown = _shown(html)
    assert shown["error"] == 1 and shown["warning"] >= 4, shown
    expected = count_sentence(
        [Finding(code="x", severity=s, message="m") for s, n in shown.items()
         for _ in range(n)])
    assert _sentence(md) == expected, (shown, _sentence(md))
    assert f"<p>{expected}</p>" in html
    assert expected.startswith("1 error, ")


def test_sentence_wording():
    f = [Finding(code="a", severity="warning", message="m")]
    assert count_sentence([]) == "No findings in this report."
    assert count_sentence(f) == "1 warning in this report."
    assert count_sentence(f * 2 + [Finding(code="e", severity="error", message="m"),
                                   Finding(code="i", severity="info", message="m")]) == \
        "1 error, 2 warnings and 1 note in this report."
