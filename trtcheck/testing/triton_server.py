"""A real Triton Inference Server for tests and benchmarks (no protocol mock anywhere).

:class:`TritonServer` starts the ``tritonserver`` that ``engines/fetch_triton.py`` fetches
(CPU, python backend) on free loopback ports, with ``--model-control-mode=explicit`` by
default, over a model repository of python-backend models whose batch time is scripted:
each execution of ``b`` requests busy-waits ``T(b) = a_ms + b_ms * b`` milliseconds
(:func:`write_model`). Models take ``INPUT0`` FP32 ``[-1, 4]`` and answer ``OUTPUT0`` =
``2 * INPUT0``; ``mode`` scripts failures (``"fail"``: every request errors;
``"every2"``: every second request errors; ``first_ms`` scripts a one-time cost of each
new batch size; ``"badshape"``: ``OUTPUT0`` has 3 columns
instead of 4; ``"numpy_tensor"``: outputs built with ``pb_utils.Tensor(name, ndarray)``,
which the stub answers empty under numpy 2).

Used by ``tests/conftest.py`` (fixtures ``triton``, ``triton_no_control``) and by
``benchmarks/triton_validation.py``.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from trtcheck.testing.pb_numpy import PB_NUMPY_PY

REPO = Path(__file__).resolve().parents[2]  # the repository checkout (engines/ lives there)

MODEL_PY = '''\
import json
import time

''' + PB_NUMPY_PY + '''

class TritonPythonModel:
    """Busy-waits T(b) = a_ms + b_ms * b per execution of b requests (scripted)."""

    def initialize(self, args):
        params = json.loads(args["model_config"]).get("parameters", {})

        def get(key, default):
            return params.get(key, {}).get("string_value", default)

        self.a_s = float(get("a_ms", "1")) / 1e3
        self.b_s = float(get("b_ms", "0")) / 1e3
        self.mode = get("mode", "ok")
        self.first_s = float(get("first_ms", "0")) / 1e3
        self.seen = set()
        self.served = 0
        cfg_mb = json.loads(args["model_config"]).get("max_batch_size", 0)
        limit = int(get("refuse_max_batch_above", "0"))
        if limit and int(cfg_mb) > limit:
            raise pb_utils.TritonModelException(
                f"scripted refusal: max_batch_size {cfg_mb} > {limit}")
        time.sleep(float(get("load_ms", "0")) / 1e3)  # a slow load, as a real model's

    def execute(self, requests):
        xs = [input_array(r, "INPUT0") for r in requests]
        b = sum(int(x.shape[0]) if x.ndim else 1 for x in xs)
        end = time.perf_counter() + self.a_s + self.b_s * b
        if b not in self.seen:  # a one-time cost per new batch size (a cold shape)
            self.seen.add(b)
            end += self.first_s
        while time.perf_counter() < end:
            pass
        out = []
        for x in xs:
            self.served += 1
            if self.mode == "fail" or (self.mode == "every2" and self.served % 2 == 0):
                out.append(pb_utils.InferenceResponse(
                    error=pb_utils.TritonError("scripted failure")))
                continue
            y = (x * 2).astype(np.float32)
            if self.mode == "badshape":
                y = np.zeros((x.shape[0], 3), dtype=np.float32)
            if self.mode == "numpy_tensor":  # the numpy-2 trap, on purpose
                out.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", y)]))
                continue
            out.append(pb_utils.InferenceResponse([output_tensor("OUTPUT0", y)]))
        return out
'''


def write_model(repo: Path, name: str, *, a_ms: float = 1.0, b_ms: float = 0.25,
                max_batch_size: int = 32, max_queue_delay_us: int = 2000,
                instances: int = 1, preferred_batch_sizes: tuple[int, ...] = (),
                mode: str = "ok", dynamic_batching: bool = True,
                refuse_max_batch_above: int = 0, first_ms: float = 0.0,
                load_ms: float = 0.0) -> Path:
    """Write ``repo/name/config.pbtxt`` and ``repo/name/1/model.py`` (python backend).

    Args:
        a_ms, b_ms: T(b) = a_ms + b_ms * b per execution, ms (busy wait).
        max_batch_size: Triton ``max_batch_size`` (0: no batching dimension).
        max_queue_delay_us: dynamic batching window, µs.
        instances: ``instance_group [{count: N, kind: KIND_CPU}]``.
        preferred_batch_sizes: Triton ``preferred_batch_size`` list.
        mode: ``"ok"``, ``"fail"`` (every request errors), ``"every2"`` (every second
            request errors), ``"badshape"`` or ``"numpy_tensor"`` (the numpy-2 trap).
        dynamic_batching: write a ``dynamic_batching`` block.
        refuse_max_batch_above: the model fails to load with a larger
            ``max_batch_size`` (0: never), to script a refused configuration.
        first_ms: extra busy wait of the first execution of each batch size in an
            instance, ms (a cold shape: what eager frameworks pay per new shape).
        load_ms: how long each instance takes to load, ms (a real model's load: a load
            an interrupt can land in).

    Returns:
        the model's folder.
    """
    d = repo / name
    (d / "1").mkdir(parents=True, exist_ok=True)
    (d / "1" / "model.py").write_text(MODEL_PY)
    dims = "[ 4 ]" if max_batch_size > 0 else "[ -1, 4 ]"
    db = ""
    if dynamic_batching:
        pref = (f"  preferred_batch_size: [ {', '.join(map(str, preferred_batch_sizes))} ]\n"
                if preferred_batch_sizes else "")
        db = f"dynamic_batching {{\n{pref}  max_queue_delay_microseconds: {max_queue_delay_us}\n}}\n"
    params = "".join(f'parameters {{ key: "{k}" value: {{ string_value: "{v}" }} }}\n'
                     for k, v in (("a_ms", a_ms), ("b_ms", b_ms), ("mode", mode),
                                  ("refuse_max_batch_above", refuse_max_batch_above),
                                  ("first_ms", first_ms), ("load_ms", load_ms)))
    (d / "config.pbtxt").write_text(
        f'name: "{name}"\nbackend: "python"\nmax_batch_size: {max_batch_size}\n'
        f'input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: {dims} }} ]\n'
        f'output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: {dims} }} ]\n'
        f'instance_group [ {{ count: {instances} kind: KIND_CPU }} ]\n{db}{params}')
    return d


#: starts of a server whose port another process took in between (see TritonServer.start)
PORT_ATTEMPTS = 3


class _PortTaken(Exception):
    """The server exited because one of its ports was taken."""


def free_ports(n: int) -> list[int]:
    """``n`` distinct free TCP ports on 127.0.0.1 (bound then released)."""
    socks: list[socket.socket] = []
    ports: list[int] = []
    try:
        while len(ports) < n:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def load_fetch_triton():
    """The ``engines/fetch_triton.py`` module (imported once)."""
    import sys

    if "fetch_triton" in sys.modules:
        return sys.modules["fetch_triton"]
    script = REPO / "engines" / "fetch_triton.py"
    if not script.is_file():
        raise RuntimeError(f"{script} is not here: the test Triton server runs from a "
                           "checkout of trtcheck (pip install -e \".[test]\" in it)")
    spec = importlib.util.spec_from_file_location("fetch_triton", script)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["fetch_triton"] = mod
    spec.loader.exec_module(mod)
    return mod


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the process that started it dies (Linux
    ``prctl(PR_SET_PDEATHSIG)``), so a crashed test run leaves no server behind."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
    except Exception:  # noqa: BLE001 - best effort (not Linux)
        pass


@dataclass
class TritonServer:
    """A running tritonserver (start with :meth:`start`, stop with :meth:`stop`, or use
    it as a context manager).

    Attributes:
        repo: the model repository folder.
        explicit: ``--model-control-mode=explicit`` (models load through the repository
            API; :meth:`load` loads one); otherwise every model loads at start.
        http_port, grpc_port, metrics_port: chosen free loopback ports.
        log_path: the server's stdout+stderr.
        extra_args: more ``tritonserver`` arguments.
        wait_for: the endpoint :meth:`start` waits for (``/v2/health/live`` for a server
            meant to stay not ready).
    """

    repo: Path
    explicit: bool = True
    load_models: tuple[str, ...] = ()
    http_port: int = 0
    grpc_port: int = 0
    metrics_port: int = 0
    log_path: Path | None = None
    extra_args: tuple[str, ...] = ()
    wait_for: str = "/v2/health/ready"
    proc: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def grpc_url(self) -> str:
        return f"grpc://127.0.0.1:{self.grpc_port}"

    def _get(self, path: str, timeout: float = 2.0) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(self.http_url + path, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def start(self, timeout_s: float = 60.0, keep_ports: bool = False) -> TritonServer:
        """Start the server and wait until ``/v2/health/ready`` answers 200 (on new free
        ports, or the ones it had with ``keep_ports``).

        Safe with several processes starting servers at once (``pytest -n auto``): the
        ports are picked and held bound by the server under one inter-process file lock
        (``filelock``, in the ``test`` extra) in the cache folder, so no two servers get
        the same port and no health probe reaches another process's server; a start whose
        port was taken meanwhile by anything else is retried on new ports (3 times).

        Raises:
            RuntimeError: the server exited or was not ready in time (log tail included).
        """
        from filelock import FileLock

        from trtcheck.load.cache import cache_dir

        inst = load_fetch_triton().fetch()
        with FileLock(str(cache_dir("triton") / "ports.lock")):
            for attempt in range(PORT_ATTEMPTS):
                try:
                    return self._start_once(inst, timeout_s, keep_ports and attempt == 0)
                except _PortTaken:
                    if attempt == PORT_ATTEMPTS - 1:
                        raise RuntimeError("tritonserver could not bind its ports "
                                           f"{PORT_ATTEMPTS} times:\n" + self.log_tail()
                                           ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _start_once(self, inst, timeout_s: float, keep_ports: bool) -> TritonServer:
        if not (keep_ports and self.http_port):
            self.http_port, self.grpc_port, self.metrics_port = free_ports(3)
        extra = tuple(f"--load-model={m}" for m in self.load_models) + self.extra_args
        cmd = inst.server_command(self.repo, self.http_port, self.grpc_port,
                                  self.metrics_port, explicit=self.explicit, extra=extra)
        self.log_path = self.log_path or Path(tempfile.mkstemp(prefix="tritonserver-",
                                                               suffix=".log")[1])
        log = open(self.log_path, "wb")  # noqa: SIM115 - owned by the process
        proc = self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                            env=inst.server_env(), start_new_session=True,
                                            preexec_fn=_die_with_parent)
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc is not proc:  # stop() or kill() from another thread meanwhile
                raise RuntimeError("tritonserver was stopped while it started")
            if proc.poll() is not None:
                if "already in use" in self.log_tail(200).lower():
                    self.proc = None
                    raise _PortTaken
                raise RuntimeError(f"tritonserver exited with {proc.returncode}:\n"
                                   + self.log_tail())
            try:
                if self._get(self.wait_for, 1.0)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"tritonserver not ready after {timeout_s:g} s:\n" + self.log_tail())

    def kill(self) -> None:
        """Kill the server at once (SIGKILL), as a crash would, with its backend stub
        processes (its process group: a killed server's python-backend stubs would
        otherwise outlive it)."""
        if self.proc is not None and self.proc.poll() is None:
            import os
            import signal

            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # start_new_session: its group
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def restart(self, timeout_s: float = 60.0) -> TritonServer:
        """Stop the server (SIGKILL) and start it again on the same ports, with the models
        of ``load_models`` loaded (their own configurations) and statistics from zero.
        Call it from a thread that lives as long as the server: Linux ends the server
        when the thread that started it exits (``PR_SET_PDEATHSIG``, see
        :func:`_die_with_parent`).

        Raises:
            RuntimeError: it did not come back in time (log tail included).
        """
        self.kill()
        return self.start(timeout_s, keep_ports=True)

    def log_tail(self, n: int = 40) -> str:
        """The last ``n`` lines of the server log."""
        if not self.log_path or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])

    def load(self, name: str, config: dict | None = None, timeout_s: float = 60.0) -> None:
        """Load (or reload) model ``name`` through ``POST /v2/repository/models/NAME/load``,
        with a config override (Triton's config JSON) when given.

        Raises:
            RuntimeError: the server refused (its message included).
        """
        body = {} if config is None else {"parameters": {"config": json.dumps(config)}}
        req = urllib.request.Request(f"{self.http_url}/v2/repository/models/{name}/load",
                                     data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout_s):
                return
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"loading {name} failed: {exc.read().decode(errors='replace')}"
                               ) from None

    def unload(self, name: str) -> None:
        """Unload model ``name`` (``POST /v2/repository/models/NAME/unload``)."""
        req = urllib.request.Request(f"{self.http_url}/v2/repository/models/{name}/unload",
                                     data=b"{}", method="POST")
        with urllib.request.urlopen(req, timeout=30):
            pass

    def stats(self, name: str) -> dict:
        """``GET /v2/models/NAME/stats`` as JSON."""
        code, body = self._get(f"/v2/models/{name}/stats")
        if code != 200:
            raise RuntimeError(f"stats of {name}: HTTP {code} {body[:200]!r}")
        return json.loads(body)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s); keeps the log."""
        p = self.proc
        if p is None:
            return
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        self.proc = None

    def __enter__(self) -> TritonServer:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def make_repository(root: Path) -> Path:
    """The test repository: ``tb_linear`` (T(b) = 1 + 0.25 b ms, max batch 32, 2 ms
    window), ``tb_fail`` (every request errors), ``tb_badshape`` (answers 3 columns),
    ``tb_every2`` (every second request errors), ``tb_picky`` (fails to load with a max
    batch above 8), ``tb_slow`` (T(b) = 400 ms: requests
    outlive short bounds), ``tb_numpy2`` (outputs built from numpy arrays: empty under
    numpy 2), ``tb_slowload`` (each load takes 3 s: an interrupt can land in one). Only ``tb_linear`` is meant to load at start; tests load the
    others when they need them."""
    repo = root / "models"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    write_model(repo, "tb_linear", a_ms=1.0, b_ms=0.25)
    write_model(repo, "tb_fail", mode="fail")
    write_model(repo, "tb_slowload", load_ms=3000.0)
    write_model(repo, "tb_badshape", mode="badshape")
    write_model(repo, "tb_every2", mode="every2")
    write_model(repo, "tb_picky", max_batch_size=8, refuse_max_batch_above=8)
    write_model(repo, "tb_slow", a_ms=400.0, b_ms=0.0, max_batch_size=4)
    write_model(repo, "tb_numpy2", mode="numpy_tensor")
    return repo


def main(argv: list[str] | None = None) -> int:
    """Start the test server (:func:`make_repository`) by hand and print its URLs at once.

    ``python -m trtcheck.testing.triton_server [--load-model NAME ...] [--all-models]
    [--onnx NAME=PATH ...] [--demo-resnet18]``;
    prints the HTTP URL, the gRPC URL and the log path (one line each, flushed) as soon
    as the server is ready, then serves until Ctrl-C or SIGTERM. Returns the exit code
    (0 after a clean stop, 3 when the server could not start).
    """
    import argparse
    import signal
    import sys

    ap = argparse.ArgumentParser(
        prog="python -m trtcheck.testing.triton_server",
        description="Start a real Triton server over the test model repository "
                    "(tb_linear, tb_fail, tb_badshape, tb_every2, tb_picky, tb_slow, tb_numpy2, tb_slowload) on free "
                    "loopback ports, print its URLs at once, and serve until Ctrl-C.")
    ap.add_argument("--load-model", action="append", metavar="NAME", default=None,
                    help="model to load at start (repeatable; default: tb_linear, or none beside "
                         "--onnx and --demo-resnet18)")
    ap.add_argument("--all-models", action="store_true",
                    help="load every model at start (no explicit model control)")
    ap.add_argument("--dir", type=Path, default=None,
                    help="folder for the model repository, written as DIR/models (an existing "
                         "DIR/models is replaced; default: a new temporary folder, "
                         "removed at exit)")
    ap.add_argument("--onnx", action="append", metavar="NAME=PATH", default=[],
                    help="also serve the ONNX model at PATH as NAME through the ONNX "
                         "Runtime python-backend wrapper (CPU; its axis 0 is the batch), "
                         "loaded at start (repeatable)")
    ap.add_argument("--demo-resnet18", action="store_true",
                    help="also serve trtcheck's demo ResNet-18 (built on first use) as "
                         "'resnet18' through the same wrapper, loaded at start")
    ap.add_argument("--onnx-max-batch", type=int, default=8, metavar="N",
                    help="max_batch_size of the --onnx and --demo-resnet18 models [8]")
    ap.add_argument("--onnx-window-us", type=int, default=1000, metavar="US",
                    help="their dynamic batching window, microseconds [1000]")
    args = ap.parse_args(argv)
    onnx: list[tuple[str, Path]] = []
    for spec in args.onnx:
        name, sep, path = spec.partition("=")
        if not sep or not name or not Path(path).is_file():
            ap.error(f"--onnx {spec!r}: give NAME=PATH with an existing ONNX file")
        onnx.append((name, Path(path)))
    if args.onnx_max_batch < 1 or args.onnx_window_us < 0:
        ap.error("--onnx-max-batch must be >= 1 and --onnx-window-us >= 0")
    if args.demo_resnet18:
        from trtcheck.load.demo import demo_model_path

        onnx.append(("resnet18", demo_model_path()))
    root = args.dir or Path(tempfile.mkdtemp(prefix="trtcheck-triton-"))
    repo = make_repository(root)
    if onnx:
        from trtcheck.testing.onnx_model import write_onnx_model

        for name, path in onnx:
            write_onnx_model(repo, name, path, max_batch_size=args.onnx_max_batch,
                             max_queue_delay_us=args.onnx_window_us)
    loads = () if args.all_models else (
        tuple(args.load_model or (() if onnx else ("tb_linear",))) + tuple(n for n, _ in onnx))
    srv = TritonServer(repo, explicit=not args.all_models, load_models=loads)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        srv.start()
    except ImportError as exc:
        print(f"error: the test server needs {exc.name or 'a test dependency'}; hint: in a "
              "checkout of trtcheck, pip install -e \".[test]\"", file=sys.stderr, flush=True)
        return 3
    except (RuntimeError, OSError) as exc:
        print(f"error: the test server did not start: {exc}", file=sys.stderr, flush=True)
        return 3
    try:
        print(f"http: {srv.http_url}", flush=True)
        print(f"grpc: {srv.grpc_url}", flush=True)
        print(f"log:  {srv.log_path}", flush=True)
        print(f"models loaded: {', '.join(loads) or 'all'} (repository {root / 'models'});"
              " Ctrl-C stops it", flush=True)
        while srv.proc is not None and srv.proc.poll() is None:
            time.sleep(0.5)
        print("error: tritonserver exited; see the log above", file=sys.stderr, flush=True)
        return 3
    except KeyboardInterrupt:
        return 0
    finally:
        srv.stop()
        if args.dir is None:  # the temporary repository this call made
            import shutil

            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":  # manual: start the test server and print its URLs
    raise SystemExit(main())
