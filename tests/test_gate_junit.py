"""`gate --junit-xml` validates against the Jenkins xUnit plugin's Surefire schema
junit-10.xsd (MIT; provenance in the README beside the file)."""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from trtcheck.testing import synthetic_results as g
import pytest
import xmlschema

from trtcheck.cli import main

REPO = Path(__file__).resolve().parent.parent
XSD_PLACES = tuple(Path(p) for p in (
    os.environ.get("TRTCHECK_JUNIT_XSD", ""),
    REPO / "tests" / "data" / "junit-xsd" / "junit-10.xsd",
    REPO.parent / "shared" / "data" / "junit-xsd" / "junit-10.xsd") if str(p))

POLICY = """\
settings:
  on_inconclusive: warn
budgets:
  - bench.batch[1].median_ms <= 100 ms              # passes
  - bench.batch[8].median_ms <= 1 ms                # fails
  - inspection.parameter_bytes <= 1 MiB             # fails
baseline:
  - metric: bench.batch[*].median_ms
    max_regression: 50%
"""


@pytest.fixture(scope="module")
def xsd() -> Path:
    for p in XSD_PLACES:
        if p.name == "junit-10.xsd" and p.is_file():
            return p
    pytest.fail("junit-10.xsd not found at " + " or ".join(map(str, XSD_PLACES))
                + "; it is the Jenkins xUnit plugin's src/main/resources/org/jenkinsci/plugins/"
                "xunit/types/model/xsd/junit-10.xsd (MIT)")


def _gate_junit(tmp_path: Path, label: str = "ort-fp32") -> tuple[int, Path]:
    res = g.write(g.results({1: 2.0, 8: 9.0}, n=300, seed=1, label=label), tmp_path / "r.json")
    base = g.write(g.results({1: 2.0, 8: 9.0}, n=300, seed=2, label=label), tmp_path / "b.json")
    pol = tmp_path / "p.yaml"
    pol.write_text(POLICY)
    junit = tmp_path / "gate.xml"
    with pytest.raises(SystemExit) as ei:
        main(["gate", str(res), "-p", str(pol), "-b", str(base), "--junit-xml", str(junit)])
    return ei.value.code, junit


def test_junit_validates_against_junit_10_xsd(xsd, tmp_path, capsys):
    code, junit = _gate_junit(tmp_path)
    assert code == 1
    xmlschema.XMLSchema(str(xsd)).validate(str(junit))
    suite = ET.parse(junit).getroot()
    assert suite.find("properties") is not None
    cases = suite.findall("testcase")
    assert cases and all(c.find("properties") is None for c in cases)
    assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases) >= 2
    out = [c.find("system-out").text for c in cases]
    assert all(t.startswith("verdict: ") and "\nrule: " in t for t in out)
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["exit_code"] == "1" and "trtcheck.schema_version" in props


def test_untrusted_labels_keep_the_file_valid(xsd, tmp_path, capsys):
    code, junit = _gate_junit(tmp_path, label="x</testcase>\x07&\"<properties/>")
    assert code == 1
    xmlschema.XMLSchema(str(xsd)).validate(str(junit))


def test_xmllint_accepts_it_when_installed(xsd, tmp_path, capsys):
    """The acceptance check by hand (`apt-get install libxml2-utils`)."""
    if shutil.which("xmllint") is None:
        pytest.fail("xmllint not installed (apt-get install libxml2-utils)")
    _, junit = _gate_junit(tmp_path)
    proc = subprocess.run(["xmllint", "--noout", "--schema", str(xsd), str(junit)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
