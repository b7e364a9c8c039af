"""Ray stays optional: no path but ``--ray`` imports it, and without it ``--ray`` is one
line with the install hint (exit 3). The option checks of ``--ray``/``--ray-actors``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO, run_cli


def _python(code: str) -> subprocess.CompletedProcess:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def test_the_cli_and_serve_help_do_not_import_ray():
    p = _python("import sys\n"
                "import trtcheck.cli\n"
                "assert 'ray' not in sys.modules, 'import trtcheck.cli imported ray'\n"
                "from trtcheck.cli import main\n"
                "try:\n"
                "    main(['serve', '--help'])\n"
                "except SystemExit:\n"
                "    pass\n"
                "import trtcheck.measure.serving.live.live, trtcheck.report.text_tables\n"
                "print('ray' in sys.modules)\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().endswith("False")
    assert "--ray ADDRESS|auto" in p.stdout


def test_without_ray_the_option_is_one_line_with_the_install_hint():
    # an interpreter where `import ray` fails, as on a machine without the extra
    p = _python("import sys\n"
                "sys.modules['ray'] = None\n"
                "from trtcheck.cli import main\n"
                "main(['serve', '--url', 'http://127.0.0.1:9', '--model', 'm', '--ray', "
                "'auto'])\n")
    assert p.returncode == 3, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert lines == ["error: --ray needs Ray, which is not installed; hint: pip install "
                     "'ray>=2.9' (the ray extra; on the driver and every node)"], p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("args, text", [
    (["--synthetic-curve", "1:1", "--ray", "auto"], "--ray applies to live targets only"),
    (["--url", "http://127.0.0.1:9", "--model", "m", "--ray-actors", "2"],
     "--ray-actors needs --ray"),
    (["--url", "http://127.0.0.1:9", "--model", "m", "--ray", "auto",
      "--client-processes", "2"], "--client-processes is for one machine"),
    (["--url", "http://127.0.0.1:9", "--model", "m", "--ray", "auto", "--ray-actors", "0"],
     "--ray-actors"),
    (["--url", "http://127.0.0.1:9", "--model", "m", "--ray", "127.0.0.1"],
     "--ray '127.0.0.1' is neither auto nor HOST:PORT"),
    (["--url", "http://127.0.0.1:9", "--model", "m", "--ray", "10.0.0.5:99999"],
     "is neither auto nor HOST:PORT"),
    (["--url", "http://127.0.0.1:9", "--model", "m", "--ray", "local"],
     "--ray local would start a private one-node Ray"),
])
def test_misplaced_ray_options_are_refused(args, text):
    res = run_cli("serve", *args)
    assert res.returncode == 2, res.stderr
    assert text in res.stderr and "Traceback" not in res.stderr


def test_no_cluster_at_the_address_is_an_environment_error():
    res = run_cli("serve", "--url", "http://127.0.0.1:9", "--model", "m", "--ray",
                  "127.0.0.1:1")
    assert res.returncode == 3, res.stderr
    assert "error: no Ray cluster at '127.0.0.1:1'" in res.stderr


def test_another_server_at_the_address_is_one_line_not_a_hang():
    # an HTTP/1.1 server (as a Triton HTTP port or the Ray dashboard) at --ray HOST:PORT:
    # it accepts the connection, but it is no Ray head; ray.init would retry for minutes
    import http.server
    import threading

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        addr = f"127.0.0.1:{srv.server_address[1]}"
        res = run_cli("serve", "--url", "http://127.0.0.1:9", "--model", "m", "--ray", addr)
    finally:
        srv.shutdown()
        srv.server_close()
    assert res.returncode == 3, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert lines and f"{addr!r} answers, but not as a Ray cluster's head" in lines[0]
    assert "Traceback" not in res.stderr


def test_the_cli_bound_on_actors_is_the_library_one():
    from trtcheck.cli.ray_options import MAX_RAY_ACTORS as CLI_MAX
    from trtcheck.measure.serving.live.distributed import MAX_RAY_ACTORS

    assert CLI_MAX == MAX_RAY_ACTORS
