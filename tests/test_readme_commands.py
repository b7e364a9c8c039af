"""The README's test command is what CI runs (``.ci/run``), line for line, and the install
story names only what exists."""

from __future__ import annotations

import re

from tests.conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
#: read as text: tomllib is Python 3.11+, and these are single lines
PYPROJECT = (REPO / "pyproject.toml").read_text(encoding="utf-8")


def _readme_block_after(heading: str) -> list[str]:
    start = README.index(heading)
    block = re.search(r"```bash\n(.*?)```", README[start:], re.S)
    assert block, f"no bash block after {heading!r}"
    return [ln for ln in block.group(1).splitlines() if ln.strip()]


def test_ci_runs_the_readme_test_command_line_for_line():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    body = ci.split("# --- README: run the tests ---\n", 1)[1].split("# --- end ---", 1)[0]
    assert [ln for ln in body.splitlines() if ln.strip()] == \
        _readme_block_after("**Install and run the tests**")


def test_the_test_command_runs_in_parallel_and_fetches_triton():
    lines = _readme_block_after("**Install and run the tests**")
    text = "\n".join(lines)
    assert "libb64-0d" in text and "chromium" in text
    assert "engines/fetch_triton.py --perf-analyzer" in text
    assert lines[-1].endswith("python -m pytest -n auto")
    test_extra = re.search(r"^test = \[(.*)\]$", PYPROJECT, re.M)
    assert test_extra and '"pytest-xdist' in test_extra.group(1)


def test_install_story_claims_no_package_index_and_no_placeholder_url():
    assert re.search(r'^name = "trtcheck-tool"$', PYPROJECT, re.M) and "trtcheck-tool" in README
    assert "published on PyPI" not in README and "example.invalid" not in README
    assert "example.invalid" not in PYPROJECT
    assert re.search(r'^license = "Apache-2.0"$', PYPROJECT, re.M)
    assert re.search(r'^license-files = \["LICENSE"\]$', PYPROJECT, re.M)
    assert (REPO / "LICENSE").read_text().lstrip().startswith("Apache License")
    assert "Version 2.0, January 2004" in (REPO / "LICENSE").read_text()
    for doc in [README, *(p.read_text() for p in (REPO / "docs").glob("*.md"))]:
        # no install line fetches trtcheck-tool from an index
        assert not re.search(r"pip install[^\n`]*[\"' ]trtcheck-tool", doc)


def _lower_bounds() -> dict[str, str]:
    """``name -> X`` for every ``"name>=X"`` of the base install and the test and rtx
    extras in pyproject.toml (names normalised as pip does)."""
    deps = PYPROJECT.split("dependencies = [", 1)[1].split("]\n", 1)[0]
    for extra in ("test", "rtx"):
        deps += re.search(rf"^{extra} = \[(.*)\]$", PYPROJECT, re.M).group(1)
    out = {}
    for name, low in re.findall(r'"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?>=([0-9][^",;<]*)', deps):
        out[re.sub(r"[-_.]+", "-", name).lower()] = low
    return out


def test_constraints_min_pins_every_lower_bound():
    pins = {}
    for line in (REPO / "constraints-min.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    from packaging.version import Version  # pytest's own dependency

    lows = _lower_bounds()
    assert sorted(pins) == sorted(lows)
    assert {n: Version(v) for n, v in pins.items()} == {n: Version(v) for n, v in lows.items()}
