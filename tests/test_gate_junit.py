"""`gate --junit-xml` output validates as a JUnit XML report.

Always against our own schema, tests/data/junit-xsd/junit-report.xsd (the format's structural
rules; README beside it); also against the Jenkins xUnit plugin's junit-10.xsd when
$TRTCHECK_JUNIT_XSD points to a copy of it."""

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
OUR_XSD = REPO / "tests" / "data" / "junit-xsd" / "junit-report.xsd"

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
def xsd() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(OUR_XSD))


@pytest.fixture(scope="module")
def jenkins_xsd() -> Path:
    env = os.environ.get("TRTCHECK_JUNIT_XSD", "")
    if not env:
        pytest.skip("TRTCHECK_JUNIT_XSD is not set: point it at the Jenkins xUnit plugin's "
                    "junit-10.xsd to also validate against it")
    path = Path(env)
    if not path.is_file():
        pytest.fail(f"TRTCHECK_JUNIT_XSD={env} is not a file")
    return path


def _gate_junit(tmp_path: Path, label: str = "ort-fp32") -> tuple[int, Path]:
    res = g.write(g.results({1: 2.0, 8: 9.0}, n=300, seed=1, label=label), tmp_path / "r.json")
    base = g.write(g.results({1: 2.0, 8: 9.0}, n=300, seed=2, label=label), tmp_path / "b.json")
    pol = tmp_path / "p.yaml"
    pol.write_text(POLICY)
    junit = tmp_path / "gate.xml"
    with pytest.raises(SystemExit) as ei:
        main(["gate", str(res), "-p", str(pol), "-b", str(base), "--junit-xml", str(junit)])
    return ei.value.code, junit


def test_junit_validates_against_the_junit_schema(xsd, tmp_path, capsys):
    code, junit = _gate_junit(tmp_path)
    assert code == 1
    xsd.validate(str(junit))
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
    xsd.validate(str(junit))


def test_junit_validates_against_jenkins_junit_10_xsd(jenkins_xsd, tmp_path, capsys):
    _, junit = _gate_junit(tmp_path)
    xmlschema.XMLSchema(str(jenkins_xsd)).validate(str(junit))


@pytest.mark.parametrize("bad", [
    # properties belong to the suite, never to a test case
    '<testsuite name="s" tests="1"><testcase name="c"><properties>'
    '<property name="a" value="b"/></properties></testcase></testsuite>',
    # properties come before the test cases
    '<testsuite name="s" tests="1"><testcase name="c"/><properties/></testsuite>',
    '<testsuite tests="1"><testcase name="c"/></testsuite>',  # a suite has a name
    '<testsuite name="s" tests="1"><testcase name="c"><verdict/></testcase></testsuite>',
    '<testsuite name="s" tests="1" time="3 s"><testcase name="c"/></testsuite>',
    '<testsuite name="s" tests="-1"/>',
    '<testsuite name="s" tests="1"><testcase name="c"><failure msg="x"/></testcase>'
    '</testsuite>',
    '<testcase name="c"/>',  # the root is testsuites or testsuite
])
def test_our_schema_rejects_what_a_ci_server_would(xsd, bad):
    assert not xsd.is_valid(bad)


def test_our_schema_accepts_the_documented_shapes(xsd):
    xsd.validate('<testsuites name="all" tests="2" failures="1" time="1.5">'
                 '<testsuite name="s" tests="2" failures="1" errors="0" skipped="1" time="0.25"'
                 ' timestamp="2026-01-01T00:00:00" hostname="h">'
                 '<properties><property name="a" value="b"/></properties>'
                 '<testcase name="c" classname="k" time="0.1"><skipped message="m"/></testcase>'
                 '<testcase name="d"><failure message="m" type="t">details</failure>'
                 '<error message="e"/><system-out>o</system-out><system-err>e</system-err>'
                 '</testcase><system-out>o</system-out></testsuite></testsuites>')


def test_xmllint_accepts_it_when_installed(xsd, tmp_path, capsys):
    """The same check with libxml2's validator, as a CI job would run it by hand."""
    if shutil.which("xmllint") is None:
        pytest.skip("xmllint is not installed: apt-get install -y libxml2-utils to run it")
    _, junit = _gate_junit(tmp_path)
    proc = subprocess.run(["xmllint", "--noout", "--schema", str(OUR_XSD), str(junit)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
