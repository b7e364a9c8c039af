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


def test_no_findings_is_never_said_under_a_verdict_with_reasons():
    """A tune document whose pick was measured outside its interval: the verdict lists a
    warning and no section shows a finding box. Before: "No findings in this report."
    under "Ready with warnings"."""
    import json
    import lzma

    from trtcheck.report import with_verdict
    from trtcheck.results import results_from_json

    record = Path(__file__).resolve().parent / "data" / "tune-gpu-raw" / \
        "h200-host-resnet18-tune.json.xz"
    doc = json.loads(lzma.decompress(record.read_bytes()))["tunes"][0]["tune_json"]
    doc["tune"]["pick"]["measured"]["p99_inside"] = False
    res = with_verdict(results_from_json(json.dumps(doc)))
    assert res.verdict is not None and res.verdict.status == "ready_with_warnings"
    html, md, _, _ = build_report(res)
    assert "No findings" not in md and "No findings" not in html
    sentence = ("The verdict above lists 1 warning (the pick's measured P99 fell outside "
                "its prediction interval); the sections below show no other findings.")
    assert sentence in md
    assert md.index("## Verdict") < md.index(sentence)  # "above" holds
    # the same document measured inside its interval: ready, and no findings to name
    doc["tune"]["pick"]["measured"]["p99_inside"] = True
    ready = with_verdict(results_from_json(json.dumps(doc)))
    assert ready.verdict is not None and ready.verdict.status == "ready"
    assert "No findings in this report." in build_report(ready)[1]
