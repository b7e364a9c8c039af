"""Shared fixtures: real models (demo ResNet-18, PP-OCR) and a CLI runner.

Fixtures that need a download FAIL with a clear message when it is impossible; they
never skip silently.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helper import CliResult

REPO = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-gold", action="store_true", default=False,
                     help="rewrite the golden files under tests/gold/ from the current "
                          "outputs (same as TRTCHECK_UPDATE_GOLD=1)")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--update-gold"):
        import goldtest

        goldtest.UPDATE = True


@pytest.fixture(autouse=True)
def _trtcheck_logger_restored():
    """Each test starts with the ``trtcheck`` logger unconfigured (no handler, records
    propagate), and the logger is put back as it was afterwards. The CLI, and library calls
    that show progress (``progress_enabled``), configure it in-process (a stderr handler,
    ``propagate = False``), also from module-scoped fixtures set up before this one; left
    so, a later test of the same worker would see no records through ``caplog`` (and a
    test asserting that no note was logged could not fail). A command run in a test
    configures it again, as it does on every run."""
    import logging

    logger = logging.getLogger("trtcheck")
    handlers, propagate, level = list(logger.handlers), logger.propagate, logger.level
    logger.handlers[:] = []
    logger.propagate = True
    logger.setLevel(logging.NOTSET)
    yield
    logger.handlers[:] = handlers
    logger.propagate = propagate
    logger.setLevel(level)


#: a deadlock detector, not a timing goal: a call that must end (a bound, a timeout, an
#: abandoned batch) and has not after this long is hung. Two orders above what any such
#: call takes on a loaded 2-core machine; speed goals live in benchmarks/.
HANG_LIMIT_S = 300.0


def interruptible() -> None:
    """``preexec_fn`` of a child process that a test interrupts with SIGINT: a shell that
    ran the test session in the background hands SIGINT down ignored, and Python keeps an
    ignored SIGINT ignored (no KeyboardInterrupt), as for a user's ``nohup ... &``."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def returns_before_hang_limit(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, run in a daemon thread; its value, or its exception
    re-raised. Fails the test when it has not returned within :data:`HANG_LIMIT_S`."""
    import threading

    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG_LIMIT_S)
    if thread.is_alive():
        pytest.fail(f"{getattr(fn, '__name__', fn)} hung: no return within {HANG_LIMIT_S:g} s")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Captured output that holds an undecodable file name (a surrogate escape) shows it
    as ``\\udcff``: pytest-xdist sends reports as UTF-8, and one such character would end
    the whole run."""
    outcome = yield
    report = outcome.get_result()
    report.sections = [(title, text.encode("utf-8", "backslashreplace").decode("utf-8"))
                       for title, text in report.sections]


def _load_fetch_module():
    spec = importlib.util.spec_from_file_location("fetch_ppocr", REPO / "engines" / "fetch_ppocr.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def ppocr() -> dict[str, Path]:
    """Paths of the PP-OCR det/rec/cls ONNX models (downloaded once into the cache)."""
    try:
        return _load_fetch_module().fetch()
    except Exception as exc:  # noqa: BLE001 - turn any failure into a clear test failure
        pytest.fail(f"cannot fetch the PP-OCR models (engines/fetch_ppocr.py): {exc}")


@pytest.fixture(scope="session")
def demo_model() -> Path:
    """Path of the cached demo ResNet-18."""
    from trtcheck.load.demo import demo_model_path

    return demo_model_path()


def run_cli(*args: str, cwd: str | os.PathLike[str] | None = None, timeout: float = 300,
            env: dict[str, str] | None = None) -> CliResult:
    """Run ``python -m trtcheck ARGS`` in a subprocess (the real boundary and exit codes)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.pop("TRTCHECK_DEBUG", None)
    if env:
        full_env.update(env)
    proc = subprocess.run([sys.executable, "-m", "trtcheck", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, env=full_env, check=False)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli():
    """The :func:`run_cli` helper."""
    return run_cli


#: Measuring options that keep a test's bench short (the numbers are not what it checks).
FAST = ["--warmup", "0", "--min-duration", "0.1", "--min-samples", "5"]


def shared_session_dir(request: pytest.FixtureRequest,
                       tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every process of this test run shares: the run's temporary root, which
    pytest-xdist's workers (``-n auto``) have in common; the session's own folder
    without xdist."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if hasattr(request.config, "workerinput") else base


@pytest.fixture(scope="session")
def demo_report(request, tmp_path_factory) -> Path:
    """One real ``trtcheck report --demo --batch 1,2`` folder for the whole test run
    (every section: inspection, bench, serve, precision, advice, verdict), built once
    under a file lock and shared by the pytest-xdist workers. Read it; a test that writes
    into a report folder copies it first."""
    from filelock import FileLock

    root = shared_session_dir(request, tmp_path_factory) / "demo-report"
    root.mkdir(parents=True, exist_ok=True)
    out = root / "demo"
    with FileLock(str(root / ".lock")):
        if not (root / ".complete").is_file():
            res = run_cli("report", "--demo", "-o", str(out), "--batch", "1,2", "--overwrite",
                          *FAST)
            assert res.returncode == 0, res.stderr
            (root / ".complete").write_text("ok\n")
    return out


def assert_one_line_error(res: CliResult, code: int = 2, *needles: str) -> str:
    """Assert exit ``code``, no traceback, exactly one stderr line starting ``error:``."""
    assert res.returncode == code, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    err_lines = [ln for ln in lines if ln.startswith("error:")]
    assert len(err_lines) == 1, res.stderr
    for n in needles:
        assert n in err_lines[0], (n, err_lines[0])
    return err_lines[0]


def main_one_line_error(args, capsys, *needles: str, code: int = 2) -> str:
    """Run ``trtcheck.cli.main(args)`` in-process (each arg passed through ``str``) and
    assert it exits ``code`` with exactly one non-blank stderr line, ``error: ...; hint: ...``,
    no internal error, containing every needle; returns that line."""
    from trtcheck.cli import main

    with pytest.raises(SystemExit) as e:
        main([str(a) for a in args])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert e.value.code == code and len(lines) == 1 and lines[0].startswith("error:"), err
    assert "; hint: " in lines[0] and "internal error" not in err, err
    for n in needles:
        assert n in lines[0], (n, err)
    return lines[0]


def exit2(args, needle: str, capsys) -> None:
    """Run ``trtcheck.cli.main(args)`` in-process and assert exit 2 with ``needle`` on
    stderr and neither a traceback nor an internal error."""
    from trtcheck.cli import main

    with pytest.raises(SystemExit) as e:
        main(args)
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert needle in err and "Traceback" not in err and "internal error" not in err, err


def gate_output(tmp_path: Path, results, policy: str, capsys) -> tuple[int, str]:
    """Write ``policy`` (YAML text) to ``tmp_path/policy.yaml``, run ``trtcheck gate
    results --policy ...`` in-process; returns (exit code, stdout + stderr)."""
    from trtcheck.cli import main

    pol = tmp_path / "policy.yaml"
    pol.write_text(policy)
    with pytest.raises(SystemExit) as e:
        main(["gate", str(results), "--policy", str(pol)])
    cap = capsys.readouterr()
    return e.value.code, cap.out + cap.err


# --- TensorRT engines: real trtexec exports and TensorRT-RTX plans -------------

def _vendored_exports() -> Path:
    """``tests/data/trtexec-exports``: the real trtexec exports, vendored with their license
    (see ``tests/data/trtexec-exports/README.md`` for where they come from)."""
    return REPO / "tests" / "data" / "trtexec-exports"


@pytest.fixture(scope="session")
def trtexec_exports() -> Path:
    """The real trtexec exports (``tests/data/trtexec-exports``); FAILS if absent."""
    path = _vendored_exports()
    if not (path / "resnet18-a100-fp16").is_dir():
        pytest.fail(f"real trtexec exports not found at {path}: they ship with the "
                    "repository; restore tests/data/trtexec-exports from git")
    return path


@pytest.fixture(scope="session")
def trt_rtx():
    """The ``tensorrt_rtx`` module; FAILS (never skips) when it is not installed."""
    try:
        import tensorrt_rtx
    except ImportError as exc:
        pytest.fail(f"tensorrt_rtx is not importable ({exc}): install the rtx extra "
                    "(pip install -e '.[rtx,test]') to run the TensorRT-RTX build tests")
    return tensorrt_rtx


@pytest.fixture(scope="session")
def rtx_conv_plan(trt_rtx, tmp_path_factory) -> Path:
    """A plan built here with TensorRT-RTX from a hand-built Conv+ReLU network (dynamic
    batch 1..8), ProfilingVerbosity.DETAILED."""
    import numpy as np

    trt = trt_rtx
    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (-1, 3, 32, 32))
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    b = np.zeros(8, np.float32)
    conv = net.add_convolution_nd(x, 8, (3, 3), trt.Weights(w), trt.Weights(b))
    conv.name = "conv"
    relu = net.add_activation(conv.get_output(0), trt.ActivationType.RELU)
    relu.get_output(0).name = "y"
    net.mark_output(relu.get_output(0))
    cfg = builder.create_builder_config()
    cfg.profiling_verbosity = trt.ProfilingVerbosity.DETAILED
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (1, 3, 32, 32), (4, 3, 32, 32), (8, 3, 32, 32))
    cfg.add_optimization_profile(prof)
    data = builder.build_serialized_network(net, cfg)
    assert data is not None, "TensorRT-RTX failed to build the Conv network"
    path = tmp_path_factory.mktemp("rtx") / "conv.plan"
    path.write_bytes(memoryview(data).tobytes())
    return path


@pytest.fixture
def tiny_relu_model(tmp_path) -> Path:
    """A one-node ONNX model: x [N, 3, H, W] float -> Relu -> y (every dim but C dynamic)."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3, "H", "W"])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    return p


@pytest.fixture
def multi_input_model(tmp_path) -> str:
    """int64 ids, bool mask and fp16 data, all with a dynamic batch 'N' and 8 features
    (:func:`onnx_builders.multi_input_graph`), saved as ``multi.onnx``."""
    from onnx_builders import multi_input_graph, save_graph

    return save_graph(multi_input_graph(), tmp_path / "multi.onnx")


@pytest.fixture
def scalar_input_model(tmp_path) -> str:
    """A rank-0 float 's' and a 1-D 'v' of dynamic length 'L': o = v * s
    (:func:`onnx_builders.scalar_input_graph`), saved as ``scalar.onnx``."""
    from onnx_builders import save_graph, scalar_input_graph

    return save_graph(scalar_input_graph(), tmp_path / "scalar.onnx")


def synthetic_serve_json(out: Path, max_batch: str = "8", repeats: str = "1") -> Path:
    """Write a small real `trtcheck serve` results file (synthetic curve 1:0.3,8:1,
    windows 0 and 2 ms, a burst of 16) to ``out``; returns ``out``."""
    from trtcheck.cli import main

    with pytest.raises(SystemExit) as e:
        main(["serve", "--synthetic-curve", "1:0.3,8:1", "--window-ms", "0,2",
              "--max-batch", max_batch, "--load", "burst:16", "--repeats", repeats,
              "--warmup-requests", "0", "-o", str(out)])
    assert e.value.code in (0, None)
    return out


@pytest.fixture(scope="module")
def serve_results_json(tmp_path_factory) -> Path:
    """A small real `trtcheck serve` results file (:func:`synthetic_serve_json`), one per
    test module."""
    return synthetic_serve_json(tmp_path_factory.mktemp("gate-serve") / "serve.json")


@pytest.fixture(scope="session")
def triton(tmp_path_factory):
    """A real tritonserver (CPU, python backend, explicit model control) on free loopback
    ports, with the scripted-T(b) models of ``trtcheck/testing/triton_server.py``; ``tb_linear`` is
    loaded. Fails loudly when the server cannot be fetched or started."""
    from trtcheck.testing.triton_server import TritonServer, make_repository

    repo = make_repository(tmp_path_factory.mktemp("triton"))
    srv = TritonServer(repo, explicit=True, load_models=("tb_linear",))
    try:
        srv.start()
    except Exception as exc:  # noqa: BLE001 - a clear failure, never a skip
        pytest.fail(f"cannot start tritonserver (engines/fetch_triton.py): {exc}")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def triton_no_control(tmp_path_factory):
    """A real tritonserver without explicit model control (``tb_linear`` loaded at
    start): the repository API refuses loads."""
    from trtcheck.testing.triton_server import TritonServer, write_model

    repo = tmp_path_factory.mktemp("triton_nc") / "models"
    write_model(repo, "tb_linear", a_ms=1.0, b_ms=0.25)
    srv = TritonServer(repo, explicit=False)
    try:
        srv.start()
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"cannot start tritonserver (engines/fetch_triton.py): {exc}")
    yield srv
    srv.stop()


def procs_named(word: str, *more: str) -> list[int]:
    """Pids whose command line contains ``word`` and every one of ``more`` (read from
    /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (d / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if word in cmd and all(w in cmd for w in more) and state != "Z":
            out.append(int(d.name))
    return out


@pytest.fixture(scope="module")
def ray_cluster():
    """Three Ray nodes on this host (head + 2 workers, 1 CPU each), shut down after."""
    from trtcheck.testing.ray_cluster import local_ray_cluster

    with local_ray_cluster(3) as cluster:
        address = cluster.address
        yield cluster
    # this cluster's raylets only (another test worker may run its own cluster meanwhile)
    deadline = time.monotonic() + 30
    while procs_named("raylet", address) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not procs_named("raylet", address), "a raylet outlived the cluster"
