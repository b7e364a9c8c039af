"""A URL that answers HTTP but is no KServe v2 server (a web server on that port): one
line that says so, exit 3, not "wait until it is live"."""

from __future__ import annotations

import http.server
import threading

import pytest

from conftest import run_cli


@pytest.fixture()
def web_server():
    """A plain HTTP server that answers 404 to every path (``/v2/health/live`` too)."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize("command", [
    ["serve", "--load", "open:5:5"],
    ["tune", "--arrival-rate", "5"],
])
def test_a_web_server_is_named_as_no_kserve_server(web_server, command, tmp_path):
    res = run_cli(command[0], "--url", web_server, "--model", "m", *command[1:],
                  cwd=tmp_path)
    assert res.returncode == 3, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, res.stderr
    assert f"the server at {web_server} answers neither /v2/health/live nor GET /v2 as a " \
        "KServe v2 server does" in lines[0]
    assert "check that the URL is a Triton (KServe v2) endpoint" in lines[0]
    assert "Traceback" not in res.stderr
