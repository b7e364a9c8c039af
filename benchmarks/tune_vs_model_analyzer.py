"""``trtcheck tune`` beside Triton Model Analyzer's brute-force search, on one CPU Triton
(CI-sized).

A real ONNX model (the PP-OCR cls model by default, or the demo ResNet-18) is served by
the test Triton through the ONNX Runtime python-backend wrapper
(``trtcheck/testing/onnx_model.py``), so instances contend for the CPU cores for real.
Then, on the same model, rate and objective:

1. **Model Analyzer** (``model-analyzer profile``, local launch mode, its own
   tritonserver): a manual brute-force search of max batch x window x instance count at
   the target rate (perf_analyzer request-rate mode, Poisson), ranked by its objective
   (``perf_latency_p99`` for ``--objective p99``, ``perf_throughput`` for
   ``throughput``) under the constraint ``perf_latency_p99 <= --slo-p99-ms``. Its pick is
   the first configuration of its ranking that satisfies the constraint.
2. **trtcheck tune** (``run_tune``, what ``trtcheck tune`` runs) against the test Triton:
   its pick, live runs and wall time.
3. **A/B/A/B**: both picks loaded in turn on one server through the model-repository
   API and measured with perf_analyzer at the rate (request-rate mode, Poisson), twice
   each in alternation, so the two measurements of one pick give its run-to-run spread.

Goal (issue ``tune_vs_model_analyzer``): trtcheck's pick has the same or a better
measured P99 under the objective (its mean over the A/B/A/B runs at most Model
Analyzer's mean times one plus the larger run-to-run spread of the two), in under a
tenth of Model Analyzer's wall time.

``--gpu-arch ARCH`` serves a torchvision model in FP16 on ``cuda:0`` instead (the GPU
model of ``benchmarks/tune_gpu.py``: the python backend, ``KIND_GPU`` with ``gpus: [0]``,
eager PyTorch or one CUDA graph per padded batch size with ``--execution cuda-graphs``,
every batch size up to the max run once at load), for the run on the GPU machine; Model
Analyzer then searches ``KIND_GPU`` instance groups and runs with ``NUMBA_DISABLE_CUDA=1``
(its numba import probes the GPU otherwise). ``--gpu-arch sleep --instance-kind KIND_CPU``
tries the GPU path on a machine without one (a busy-waiting stand-in).

Model Analyzer lives in its own virtual environment (its dependencies pin versions that
trtcheck's do not)::

    python -m venv .ma-venv && .ma-venv/bin/pip install triton-model-analyzer==1.58.0
    python benchmarks/tune_vs_model_analyzer.py --model-analyzer .ma-venv/bin/model-analyzer

Prints a table and writes ``benchmarks/results/tune_vs_model_analyzer-<machine>.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _harness import add_machine_argument, format_table, write_result

#: the objectives compared: trtcheck ``--objective`` -> Model Analyzer ``objectives``
OBJECTIVES = {"p99": {"perf_latency_p99": 1}, "throughput": {"perf_throughput": 1}}


def _model_path(model: str) -> tuple[Path, dict[str, list[int]] | None]:
    """The ONNX file of ``model`` and the shapes its dynamic inputs need."""
    if model == "resnet18":
        from trtcheck.load.demo import demo_model_path

        return Path(demo_model_path()), None
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "fetch_ppocr", Path(__file__).resolve().parents[1] / "engines" / "fetch_ppocr.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return Path(mod.fetch()["cls"]), {"x": [1, 3, 48, 192]}


def _write_repo(root: Path, model: str, onnx: Path | None, shapes: dict | None,
                max_batch: int, gpu: argparse.Namespace | None = None) -> Path:
    """A model repository holding ``model``: the ONNX file through the ONNX Runtime
    wrapper, or with ``gpu`` (``--gpu-arch``) the torchvision model of
    ``benchmarks/tune_gpu.py`` (one instance, no window, ``max_batch`` as given)."""
    repo = root / "models"
    repo.mkdir(parents=True, exist_ok=True)
    if gpu is not None:
        from tune_gpu import MODEL_PY

        (repo / model / "1").mkdir(parents=True, exist_ok=True)
        (repo / model / "1" / "model.py").write_text(MODEL_PY)
        kind = gpu.instance_kind
        (repo / model / "config.pbtxt").write_text(
            f'name: "{model}"\nbackend: "python"\nmax_batch_size: {max_batch}\n'
            'input [ { name: "INPUT__0" data_type: TYPE_FP16 dims: [ 3, 224, 224 ] } ]\n'
            'output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 1000 ] } ]\n'
            f"instance_group [ {{ count: 1 kind: {kind}"
            + (" gpus: [ 0 ]" if kind == "KIND_GPU" else "") + " } ]\n"
            "dynamic_batching { max_queue_delay_microseconds: 0 }\n"
            f'parameters {{ key: "arch" value: {{ string_value: "{gpu.gpu_arch}" }} }}\n'
            f'parameters {{ key: "execution" value: {{ string_value: "{gpu.execution}" }} }}\n'
            'parameters { key: "warm_sizes" value: { string_value: "all" } }\n')
        return repo
    from trtcheck.testing.onnx_model import write_onnx_model

    assert onnx is not None
    write_onnx_model(repo, model, onnx, max_batch_size=max_batch, shapes=shapes)
    return repo


def _pa_shape_flags(shapes: dict | None) -> dict[str, str]:
    """perf_analyzer ``--shape`` for dynamic inputs (without the batch axis)."""
    if not shapes:
        return {}
    return {"shape": " ".join(f"{k}:{','.join(map(str, v[1:]))}" for k, v in shapes.items())}


def run_model_analyzer(exe: str, work: Path, model: str, onnx: Path | None,
                       shapes: dict | None, args: argparse.Namespace) -> dict[str, Any]:
    """Model Analyzer's brute-force search (see the module text): its pick, every
    configuration it measured, and its wall time."""
    import yaml

    from trtcheck.testing.triton_server import free_ports, load_fetch_triton

    ft = load_fetch_triton()
    inst = ft.fetch()
    pa = ft.fetch_perf_analyzer()
    gpu = args if args.gpu_arch else None
    kind = args.instance_kind if gpu is not None else "KIND_CPU"
    repo = _write_repo(work / "ma", model, onnx, shapes, max(args.max_batch_sizes), gpu)
    server_env = inst.server_env({})
    # Model Analyzer hands triton_server_environment to perf_analyzer as well (which
    # needs its own libcudart), and its first server start ignores it: both library
    # paths go into the environment Model Analyzer itself runs in
    ld = os.pathsep.join([server_env["LD_LIBRARY_PATH"],
                          ft.perf_analyzer_env({})["LD_LIBRARY_PATH"]])
    http, grpc, metrics = free_ports(3)
    cfg = {
        "model_repository": str(repo),
        "output_model_repository_path": str(work / "ma-out"),
        "override_output_model_repository": True,
        "checkpoint_directory": str(work / "ma-ckpt"),
        "export_path": str(work / "ma-export"),
        "triton_launch_mode": "local",
        "triton_server_path": str(inst.server),
        "triton_server_flags": {"backend-directory": str(inst.backends)},
        # the environment engines/fetch_triton.py gives its tritonserver (the test
        # Triton's), with perf_analyzer's libraries added
        "triton_server_environment": {**{k: v for k, v in server_env.items()
                                         if os.environ.get(k) != v},
                                      "LD_LIBRARY_PATH": ld},
        "triton_http_endpoint": f"localhost:{http}",
        "triton_grpc_endpoint": f"localhost:{grpc}",
        "triton_metrics_url": f"http://localhost:{metrics}/metrics",
        "perf_analyzer_path": str(pa),
        "client_protocol": "http",
        "run_config_search_disable": True,
        "request_rate_search_enable": True,
        "skip_detailed_reports": True,
        "profile_models": {model: {
            "cpu_only": kind == "KIND_CPU",
            "model_config_parameters": {
                "max_batch_size": list(args.max_batch_sizes),
                "dynamic_batching": {"max_queue_delay_microseconds": list(args.windows_us)},
                "instance_group": [{"kind": kind,
                                    "count": list(range(1, args.max_instances + 1)),
                                    **({"gpus": [0]} if kind == "KIND_GPU" else {})}]},
            "parameters": {"request_rate": [int(round(args.rate))], "batch_sizes": [1]},
            "perf_analyzer_flags": {"request-distribution": "poisson",
                                    **_pa_shape_flags(shapes)}}},
        "objectives": OBJECTIVES[args.objective],
        "constraints": {"perf_latency_p99": {"max": float(args.slo_p99_ms)}},
    }
    cfg_path = work / "ma-config.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg))
    env = dict(os.environ, LD_LIBRARY_PATH=ld)
    if gpu is not None:
        env["NUMBA_DISABLE_CUDA"] = "1"
    log = work / "ma.log"
    t0 = time.monotonic()
    with open(log, "w") as out:
        try:
            rc = subprocess.run([exe, "profile", "-f", str(cfg_path)], stdout=out,
                                stderr=subprocess.STDOUT, env=env, cwd=work,
                                timeout=args.ma_timeout_s).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    wall = time.monotonic() - t0
    res: dict[str, Any] = {"returncode": rc, "wall_s": round(wall, 1),
                           "log_tail": log.read_text(errors="replace").splitlines()[-15:]}
    table = work / "ma-export" / "results" / "metrics-model-inference.csv"
    if not table.is_file():
        res["error"] = f"no {table.name} (Model Analyzer exited {rc})"
        return res
    rows = list(csv.DictReader(table.open()))
    configs = []
    for r in rows:
        name = r.get("Model Config Path") or ""
        settings = _pbtxt_settings(work / "ma-out" / name / "config.pbtxt")
        configs.append({"name": name, **settings,
                        "satisfies": (r.get("Satisfies Constraints") or "").strip() == "Yes",
                        "p99_ms": _float(r.get("p99 Latency (ms)")),
                        "throughput_queries_per_s": _float(r.get("Throughput (infer/sec)"))})
    res["configurations"] = configs
    res["measured"] = len(configs)
    # the table is in Model Analyzer's ranking order: its pick is the first that
    # satisfies the constraint
    res["pick"] = next((c for c in configs if c["satisfies"]), None)
    return res


def _float(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _pbtxt_settings(path: Path) -> dict[str, Any]:
    """max batch, window (µs) and instance count of a Model Analyzer config.pbtxt."""
    if not path.is_file():
        return {}
    text = path.read_text()

    def num(pattern: str, default: int) -> int:
        m = re.search(pattern, text)
        return int(m.group(1)) if m else default

    return {"max_batch_size": num(r"max_batch_size:\s*(\d+)", 0),
            "window_us": num(r"max_queue_delay_microseconds:\s*(\d+)", 0),
            "instances": num(r"count:\s*(\d+)", 1)}


def perf_analyzer(srv: Any, model: str, rate: float, requests: int, shapes: dict | None,
                  work: Path, timeout_s: float) -> dict[str, Any]:
    """One perf_analyzer measurement at ``rate`` (Poisson, request-rate mode, three
    windows of ``requests / 3``): P50/P99 (ms) and throughput."""
    from trtcheck.testing.triton_server import load_fetch_triton

    ft = load_fetch_triton()
    out = work / "pa.csv"
    out.unlink(missing_ok=True)
    per = max(50, requests // 3)
    cmd = [str(ft.fetch_perf_analyzer()), "-m", model, "-u", f"127.0.0.1:{srv.http_port}",
           "-i", "http", "--async", "--request-rate-range", f"{rate:g}",
           "--request-distribution", "poisson", "--measurement-mode", "count_windows",
           "--measurement-request-count", str(per), "--max-trials", "3",
           "--stability-percentage", "999", "--percentile", "99", "-f", str(out)]
    for k, v in (shapes or {}).items():
        cmd += ["--shape", f"{k}:{','.join(map(str, v[1:]))}"]
    try:
        proc = subprocess.run(cmd, env=ft.perf_analyzer_env(), capture_output=True,
                              text=True, timeout=timeout_s)
        rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-600:]
    except subprocess.TimeoutExpired:
        rc, tail = 124, "timed out"
    if rc != 0 or not out.is_file():
        return {"returncode": rc, "error": tail}
    row = next(csv.DictReader(out.open()))

    def ms(key: str) -> float | None:
        v = _float(row.get(key))
        return None if v is None else v / 1e3

    return {"returncode": 0, "p50_ms": ms("p50 latency"), "p99_ms": ms("p99 latency"),
            "throughput_queries_per_s": _float(row.get("Inferences/Second"))}


def _config_with(base: dict, c: dict) -> dict:
    """Triton config JSON ``base`` with ``c``'s max batch, window and instance count."""
    cfg = json.loads(json.dumps(base))
    cfg["max_batch_size"] = int(c["max_batch_size"])
    db = cfg.setdefault("dynamic_batching", {})
    db["max_queue_delay_microseconds"] = int(c["window_us"])
    # Triton fills preferred_batch_size with the loaded max batch: a smaller max batch
    # with it is refused
    db.pop("preferred_batch_size", None)
    cfg["instance_group"] = [{"count": int(c["instances"]), "kind": "KIND_CPU"}]
    return cfg


def _label(c: dict | None) -> str:
    if not c:
        return "-"
    return f"w{c['window_us'] / 1000:g}ms b{c['max_batch_size']} x{c['instances']}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_machine_argument(ap)
    ap.add_argument("--model", choices=("cls", "resnet18"), default="cls",
                    help="the PP-OCR cls model or the demo ResNet-18, through the ONNX "
                    "Runtime wrapper (default: %(default)s)")
    ap.add_argument("--gpu-arch", default=None,
                    help="serve this torchvision model (FP16, cuda:0) instead, as "
                    "benchmarks/tune_gpu.py does; 'sleep' is its stand-in without a GPU")
    ap.add_argument("--execution", choices=("eager", "cuda-graphs"), default="eager",
                    help="with --gpu-arch: eager PyTorch or CUDA graphs (default: %(default)s)")
    ap.add_argument("--instance-kind", choices=("KIND_GPU", "KIND_CPU"), default="KIND_GPU",
                    help="with --gpu-arch: Triton's instance kind (default: %(default)s)")
    ap.add_argument("--rate", type=float, default=40.0, help="target rate, req/s (default: %(default)s)")
    ap.add_argument("--slo-p99-ms", type=float, default=200.0,
                    help="the P99 objective (Model Analyzer's constraint), ms (default: %(default)s)")
    ap.add_argument("--objective", choices=sorted(OBJECTIVES), default="p99",
                    help="what both rank by under the objective (default: %(default)s)")
    ap.add_argument("--max-batch-sizes", type=lambda s: [int(x) for x in s.split(",")],
                    default=[4, 8], help="Model Analyzer's max batch sizes (tune searches "
                    "up to the largest; default: 4,8)")
    ap.add_argument("--windows-us", type=lambda s: [int(x) for x in s.split(",")],
                    default=[0, 1000, 5000], help="Model Analyzer's windows, µs (default: 0,1000,5000)")
    ap.add_argument("--max-instances", type=int, default=2,
                    help="instance counts 1..N, for both (default: %(default)s)")
    ap.add_argument("--duration-s", type=float, default=3.0, help="tune's live run length, s (default: %(default)s)")
    ap.add_argument("--ab-requests", type=int, default=900,
                    help="requests per A/B perf_analyzer measurement (default: %(default)s)")
    ap.add_argument("--model-analyzer", default=shutil.which("model-analyzer") or "",
                    help="the model-analyzer executable (its own virtual environment)")
    ap.add_argument("--ma-timeout-s", type=float, default=3600.0,
                    help="the most Model Analyzer may take, s (default: %(default)s)")
    args = ap.parse_args()
    exe = args.model_analyzer
    if not exe or not Path(exe).is_file() or not os.access(exe, os.X_OK):
        why = ("no model-analyzer on PATH" if not exe else
               f"{exe} is not an executable file")
        print(f"error: {why}: give --model-analyzer PATH (python -m venv .ma-venv && "
              ".ma-venv/bin/pip install triton-model-analyzer==1.58.0)", file=sys.stderr)
        return 2
    args.model_analyzer = str(Path(exe).resolve())  # it runs in a work folder of its own

    from trtcheck.pipeline.tune import TuneSettings, run_tune
    from trtcheck.testing.triton_server import TritonServer

    work = Path(tempfile.mkdtemp(prefix="tune-vs-ma-"))
    gpu = args if args.gpu_arch else None
    if gpu is not None:
        args.model = f"{args.gpu_arch}_fp16".replace("-", "_")
        onnx, shapes = None, None
    else:
        onnx, shapes = _model_path(args.model)
    print(f"Model Analyzer: brute force over max batch {args.max_batch_sizes} x windows "
          f"{args.windows_us} us x 1..{args.max_instances} instances at {args.rate:g} req/s",
          flush=True)
    ma = run_model_analyzer(args.model_analyzer, work, args.model, onnx, shapes, args)
    print(f"Model Analyzer: exit {ma['returncode']}, {ma['wall_s']:g} s, "
          f"{ma.get('measured', 0)} configurations, pick {_label(ma.get('pick'))}",
          flush=True)

    repo = _write_repo(work / "tune", args.model, onnx, shapes, max(args.max_batch_sizes),
                       gpu)
    srv = TritonServer(repo, load_models=(args.model,)).start(timeout_s=180)
    ab: list[dict[str, Any]] = []
    try:
        t0 = time.monotonic()
        out = run_tune(TuneSettings(url=srv.http_url, model=args.model, rate_per_s=args.rate,
                                    slo_p99_ms=args.slo_p99_ms, objective=args.objective,
                                    max_instances=args.max_instances,
                                    duration_s=args.duration_s, shapes=shapes),
                       progress=lambda m: print(f"  tune: {m}", flush=True))
        tune_s = time.monotonic() - t0
        t = out.result
        tune_pick = (None if t.pick is None else
                     {"window_us": int(t.pick.window_us),
                      "max_batch_size": int(t.pick.max_batch_size),
                      "instances": int(t.pick.instances)})
        print(f"trtcheck tune: {t.live_runs} live runs, {tune_s:.1f} s, pick "
              f"{_label(tune_pick)}", flush=True)
        base = _get_config(srv, args.model)
        picks = [("model-analyzer", ma.get("pick")), ("trtcheck", tune_pick)]
        for rnd in range(2):
            for who, c in picks:
                if not c:
                    continue
                try:
                    srv.load(args.model, _config_with(base, c), timeout_s=180)
                except RuntimeError as exc:  # keep the other pick's measurements
                    m = {"returncode": 1, "error": str(exc)}
                else:
                    m = perf_analyzer(srv, args.model, args.rate, args.ab_requests, shapes,
                                      work, timeout_s=max(120.0, 6 * args.ab_requests
                                                          / args.rate))
                ab.append({"round": rnd + 1, "tool": who, "config": _label(c), **m})
                print(f"  A/B round {rnd + 1} {who} {_label(c)}: P50 {m.get('p50_ms')} ms, "
                      f"P99 {m.get('p99_ms')} ms", flush=True)
        srv.load(args.model, base)
    finally:
        srv.stop()

    def mean_p99(who: str) -> float | None:
        xs = [r["p99_ms"] for r in ab if r["tool"] == who and r.get("p99_ms")]
        return sum(xs) / len(xs) if len(xs) == 2 else None

    def spread(who: str) -> float:
        xs = [r["p99_ms"] for r in ab if r["tool"] == who and r.get("p99_ms")]
        return abs(xs[0] - xs[1]) / (0.5 * (xs[0] + xs[1])) if len(xs) == 2 else 0.0

    ma_p99, tr_p99 = mean_p99("model-analyzer"), mean_p99("trtcheck")
    tolerance = max(spread("model-analyzer"), spread("trtcheck"))
    p99_met = (ma_p99 is not None and tr_p99 is not None
               and tr_p99 <= ma_p99 * (1.0 + tolerance) and tr_p99 <= args.slo_p99_ms)
    time_met = ma["wall_s"] > 0 and tune_s < 0.1 * ma["wall_s"]
    rows = [{"tool": "Model Analyzer (brute force)", "pick": _label(ma.get("pick")),
             "runs": ma.get("measured"), "wall_s": ma["wall_s"], "p99_mean_ms": ma_p99,
             "p99_spread": spread("model-analyzer")},
            {"tool": "trtcheck tune", "pick": _label(tune_pick), "runs": t.live_runs,
             "wall_s": round(tune_s, 1), "p99_mean_ms": tr_p99, "p99_spread": spread("trtcheck")}]
    print(format_table(ab, [("round", "round", "d"), ("tool", "tool", ""),
                            ("config", "config", ""), ("p50_ms", "P50 ms", ".3g"),
                            ("p99_ms", "P99 ms", ".3g"),
                            ("throughput_queries_per_s", "infer/s", ".4g")]))
    print(format_table(rows, [("tool", "tool", ""), ("pick", "pick", ""),
                              ("runs", "configurations / live runs", "d"),
                              ("wall_s", "wall s", ".4g"),
                              ("p99_mean_ms", "P99 mean (A/B/A/B) ms", ".3g"),
                              ("p99_spread", "P99 run-to-run", ".0%")]))
    print(f"goal: P99 same or better (within the run-to-run spread {tolerance:.0%}): "
          f"{'met' if p99_met else 'NOT met'}; wall time under a tenth of Model Analyzer's "
          f"({tune_s:.1f} s against {ma['wall_s']:g} s): {'met' if time_met else 'NOT met'}")
    write_result("tune_vs_model_analyzer", args.machine, {
        "settings": {"model": args.model, "gpu_arch": args.gpu_arch,
                     "execution": args.execution if gpu is not None else None,
                     "instance_kind": args.instance_kind if gpu is not None else "KIND_CPU",
                     "rate_per_s": args.rate,
                     "slo_p99_ms": args.slo_p99_ms, "objective": args.objective,
                     "max_batch_sizes": args.max_batch_sizes, "windows_us": args.windows_us,
                     "max_instances": args.max_instances, "duration_s": args.duration_s,
                     "ab_requests": args.ab_requests},
        "model_analyzer": ma, "tune": {"pick": tune_pick, "live_runs": t.live_runs,
                                       "wall_s": round(tune_s, 1),
                                       "predicted": None if t.pick is None else
                                       t.pick.predicted.model_dump(mode="json"),
                                       "measured": None if t.pick is None or
                                       t.pick.measured is None else
                                       t.pick.measured.model_dump(mode="json")},
        "ab": ab, "summary": rows,
        "goals": {"p99_same_or_better": p99_met, "p99_tolerance": tolerance,
                  "under_a_tenth_of_the_time": time_met}})
    return 0


def _get_config(srv: Any, model: str) -> dict:
    import urllib.request

    with urllib.request.urlopen(f"{srv.http_url}/v2/models/{model}/config", timeout=10) as r:
        return json.loads(r.read())


if __name__ == "__main__":
    raise SystemExit(main())
