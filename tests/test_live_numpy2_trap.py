"""``serve --url`` against a python-backend model that builds its outputs with
``pb_utils.Tensor(name, ndarray)``: under numpy 2 in the stub every answer comes back
empty, and the one-line error names the numpy-2 python-backend trap (real tritonserver).
Under numpy 1 (the oldest versions pyproject.toml allows) there is no trap: the same
model answers whole and the run succeeds without naming one. The stub imports numpy from
this interpreter's site-packages (``engines/fetch_triton.py``), so this numpy decides."""

from __future__ import annotations

import pytest

from conftest import assert_one_line_error, run_cli

pytestmark = [pytest.mark.triton, pytest.mark.slow]


def test_every_answer_empty_names_the_numpy2_trap(triton):
    from trtcheck.testing.triton_server import write_model

    write_model(triton.repo, "tb_numpy_tensor", mode="numpy_tensor")
    triton.load("tb_numpy_tensor")
    res = run_cli("serve", "--url", triton.http_url, "--model", "tb_numpy_tensor",
                  "--load", "open:50", "--duration-s", "0.5")
    import numpy as np

    if int(np.__version__.split(".")[0]) < 2:
        assert res.returncode == 0, res.stderr
        assert "numpy-2" not in res.stderr and "empty" not in res.stderr
        return
    line = assert_one_line_error(res, 3, "numpy-2", "from_dlpack")
    assert "empty" in line
