"""Every answer of a live server is checked at the boundary
(``trtcheck/results/kserve_answers.py``): real tritonserver 2.51 answers pass (HTTP and
gRPC JSON read alike), bad ones name their field; through the CLI, a hostile KServe v2
server's bad answer is one line (exit 3, naming the endpoint and the field), and a bad
answer during a run keeps the measurements taken before it (written, marked invalid).

The hostile server is a small aiohttp app serving real captured Triton answers
(``tests/data/triton-2.51/``) with one field changed: the input under test is the
answer, so it is built here on purpose.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import threading
from pathlib import Path

import pytest

from conftest import assert_one_line_error, run_cli
from trtcheck.errors import EnvironmentProblem
from trtcheck.measure.serving.live.live import request_tensors, stats_delta, window_us_of
from trtcheck.results.kserve_answers import (
    BadAnswer, check_model_config, check_model_metadata, check_model_stats,
    check_server_metadata, check_stats_pair,
)

DATA = Path(__file__).parent / "data" / "triton-2.51"


def _doc(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


# --------------------------------------------------------------------------- unit


def test_real_answers_pass_and_grpc_reads_like_http():
    cfg = check_model_config(_doc("model_config"))
    assert cfg == _doc("model_config")  # nothing dropped, nothing added
    gcfg = check_model_config(_doc("grpc_model_config")["config"])
    assert gcfg["max_batch_size"] == cfg["max_batch_size"]
    assert gcfg["input"][0]["dims"] == [4]  # gRPC's "4"
    assert gcfg["dynamic_batching"]["max_queue_delay_microseconds"] == 2000
    assert check_model_metadata(_doc("grpc_model_metadata")) == _doc("model_metadata")
    assert check_server_metadata(_doc("server_metadata"))["version"] == "2.51.0"
    [h] = check_model_stats(_doc("model_stats"))
    [g] = check_model_stats(_doc("grpc_model_stats"))
    # gRPC's strings and empty zero durations read as HTTP's numbers
    for k in ("name", "version", "inference_count", "execution_count", "inference_stats",
              "batch_stats", "last_inference"):
        assert h[k] == g[k], k


@pytest.mark.parametrize("path, value, field", [
    (("max_batch_size",), 10**12, "max_batch_size"),
    (("max_batch_size",), "eight", "max_batch_size"),
    (("max_batch_size",), math.nan, "max_batch_size"),
    (("max_batch_size",), -1, "max_batch_size"),
    (("dynamic_batching", "max_queue_delay_microseconds"), 1.5, "dynamic_batching."
                                                                "max_queue_delay_microseconds"),
    (("dynamic_batching", "preferred_batch_size"), [64], "dynamic_batching"),
    (("instance_group", 0, "count"), "two", "instance_group[0].count"),
    (("instance_group",), {"count": 1}, "instance_group"),
    (("input", 0, "dims", 0), 2**40, "input[0].dims[0]"),
    (("input", 0, "name"), 7, "input[0].name"),
])
def test_bad_config_fields_are_named(path, value, field):
    doc = _doc("model_config")
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    with pytest.raises(BadAnswer) as ei:
        check_model_config(doc)
    assert ei.value.field.startswith(field), (ei.value.field, field)


def test_bad_metadata_and_statistics_are_named():
    md = _doc("model_metadata")
    md["inputs"][0]["shape"] = [-1, 2**31 - 1, 2**31 - 1]  # 7.28 TiB asked for
    with pytest.raises(BadAnswer, match="elements") as ei:
        check_model_metadata(md)
    assert ei.value.field == "inputs[0].shape"
    st = _doc("model_stats")
    del st["model_stats"][0]["batch_stats"][0]["batch_size"]
    with pytest.raises(BadAnswer) as ei:
        check_model_stats(st)
    assert ei.value.field == "model_stats[0].batch_stats[0].batch_size"
    st = _doc("model_stats")
    st["model_stats"][0]["inference_stats"]["queue"]["ns"] = "-5"
    with pytest.raises(BadAnswer, match="greater than or equal"):
        check_model_stats(st)
    st = _doc("model_stats")
    st["model_stats"][0]["execution_count"] = 7  # more executions than inferences
    with pytest.raises(BadAnswer, match="execution_count"):
        check_model_stats(st)


def test_counters_that_go_backwards_or_do_not_add_up_are_refused():
    [before] = check_model_stats(_doc("model_stats"))
    after = copy.deepcopy(before)
    after["inference_count"] = 3
    after["execution_count"] = 3
    with pytest.raises(BadAnswer, match="went backwards") as ei:
        stats_delta(before, after)
    assert ei.value.field == "inference_count"
    after = copy.deepcopy(before)
    after["inference_stats"]["success"]["ns"] -= 1
    with pytest.raises(BadAnswer, match="went backwards"):
        check_stats_pair(before, after)
    after = copy.deepcopy(before)  # 4 more executions counted, but none per batch size
    after["inference_count"] += 4
    after["execution_count"] += 4
    with pytest.raises(BadAnswer, match="add up"):
        check_stats_pair(before, after)
    after["batch_stats"][0]["compute_infer"]["count"] += 4
    d = stats_delta(before, after)
    assert (d.inference_count, d.execution_count) == (4, 4)


def test_live_helpers_take_only_checked_answers():
    cfg = _doc("model_config")
    cfg["max_batch_size"] = 10**12
    with pytest.raises(EnvironmentProblem, match="max_batch_size"):
        window_us_of(cfg)
    md = _doc("model_metadata")
    md["inputs"][0]["shape"] = [-1, 2**26]  # within the answer's bounds, 256 MiB x 4
    md["inputs"][0]["datatype"] = "FP64"
    from trtcheck.errors import InputError

    with pytest.raises(InputError, match="bytes per request"):
        request_tensors(md, _doc("model_config"))


# --------------------------------------------------------------------------- hostile server


class Hostile:
    """A KServe v2 server on loopback that answers the captured Triton 2.51 answers, with
    ``mutate(kind, doc) -> doc`` changing one (kinds: ``config``, ``metadata``,
    ``stats``; ``infer`` gets ``None`` and may return the answer's body as bytes);
    inference answers ``2 * INPUT0`` and the statistics count them."""

    def __init__(self, mutate=lambda kind, doc, reads: doc) -> None:
        self.mutate = mutate
        self.served = 0
        self.stats_reads = 0
        self.port = 0
        self._ready = threading.Event()
        self._stop: asyncio.Future | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _app(self):
        from aiohttp import web

        cfg = _doc("model_config")
        cfg["name"] = "m"
        md = _doc("model_metadata")
        md["name"] = "m"

        async def health(_):
            return web.Response(text="")

        async def server_md(_):
            return web.json_response(_doc("server_metadata"))

        async def model_md(_):
            return web.json_response(self.mutate("metadata", copy.deepcopy(md), 0))

        def answer(doc):  # bytes: sent as they are (a body that is not JSON)
            if isinstance(doc, bytes):
                return web.Response(body=doc, content_type="application/json")
            return web.json_response(doc)

        async def config(_):
            return answer(self.mutate("config", copy.deepcopy(cfg), 0))

        async def load(request):  # a model load (tune, sweeps): the override is taken
            body = json.loads(await request.read() or b"{}")
            cfg.update(json.loads(body.get("parameters", {}).get("config", "{}")))
            return web.Response(text="")

        async def stats(_):
            self.stats_reads += 1
            n = self.served
            entry = {"name": "m", "version": "1", "last_inference": 0,
                     "inference_count": n, "execution_count": n,
                     "inference_stats": {k: {"count": n, "ns": n * 1000} for k in (
                         "success", "queue", "compute_input", "compute_infer",
                         "compute_output")},
                     "batch_stats": [{"batch_size": 1, **{k: {"count": n, "ns": n * 1000}
                                                          for k in ("compute_input",
                                                                    "compute_infer",
                                                                    "compute_output")}}]
                     if n else []}
            doc = {"model_stats": [entry]}
            return answer(self.mutate("stats", doc, self.stats_reads))

        async def infer(request):
            body = await request.read()
            hl = request.headers.get("Inference-Header-Content-Length")
            import numpy as np

            if hl is not None:
                x = np.frombuffer(body[int(hl):int(hl) + 16], dtype=np.float32)
            else:
                x = np.asarray(json.loads(body)["inputs"][0]["data"], dtype=np.float32)
            self.served += 1
            raw = self.mutate("infer", None, self.served)
            if isinstance(raw, bytes):  # the answer's body as it is
                return web.Response(body=raw, content_type="application/json")
            return web.json_response({"model_name": "m", "model_version": "1", "outputs": [
                {"name": "OUTPUT0", "datatype": "FP32", "shape": [1, 4],
                 "data": (2 * x).tolist()}]})

        app = web.Application()
        app.router.add_get("/v2/health/live", health)
        app.router.add_get("/v2/health/ready", health)
        app.router.add_get("/v2", server_md)
        app.router.add_get("/v2/models/m", model_md)
        app.router.add_get("/v2/models/m/ready", health)
        app.router.add_get("/v2/models/m/config", config)
        app.router.add_get("/v2/models/m/stats", stats)
        app.router.add_post("/v2/models/m/infer", infer)
        app.router.add_post("/v2/repository/models/m/load", load)
        return app

    def _run(self) -> None:
        from aiohttp import web

        async def main() -> None:
            runner = web.AppRunner(self._app(), access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            self._stop = asyncio.get_running_loop().create_future()
            self._ready.set()
            await self._stop
            await runner.cleanup()

        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(main())

    def __enter__(self) -> Hostile:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set_result, None)
        self._thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _serve(h: Hostile, out: Path, *args: str):
    return run_cli("serve", "--url", h.url, "--model", "m", "--load", "burst:8",
                   "--duration-s", "1", "--drain-timeout-s", "2", "--warmup-requests", "2",
                   "-o", str(out), *args, timeout=120)


def _set(path, value):
    def mutate(kind, doc, reads):
        if kind == path[0]:
            node = doc
            for p in path[1:-1]:
                node = node[p]
            node[path[-1]] = value
        return doc
    return mutate


@pytest.mark.parametrize("path, value, endpoint, field", [
    (("config", "max_batch_size"), 10**12, "/v2/models/m/config", "max_batch_size"),
    (("config", "max_batch_size"), "eight", "/v2/models/m/config", "max_batch_size"),
    (("metadata", "inputs", 0, "shape"), [-1, 2**31 - 1, 2**31 - 1], "/v2/models/m",
     "inputs[0].shape"),
    (("stats", "model_stats", 0, "inference_count"), -13706141, "/v2/models/m/stats",
     "model_stats[0].inference_count"),
])
def test_a_bad_answer_is_one_line_naming_endpoint_and_field(tmp_path, path, value,
                                                            endpoint, field):
    out = tmp_path / "live.json"
    with Hostile(_set(path, value)) as h:
        res = _serve(h, out)
    line = assert_one_line_error(res, 3, endpoint, field)
    assert "Traceback" not in res.stderr and "bad" in line
    assert not out.exists()  # nothing was measured


def zero_statistics(doc: dict) -> dict:
    """A statistics answer counting nothing (every counter and time 0, no batch sizes)."""
    e = doc["model_stats"][0]
    e["inference_count"] = e["execution_count"] = 0
    for d in e["inference_stats"].values():
        d["count"] = d["ns"] = 0
    e["batch_stats"] = []
    return doc


def test_counters_going_backwards_during_the_run_keep_the_data(tmp_path):
    """The statistics read after the first run counts less than the one before it (the
    first run is kept, the second is marked): nothing negative is written."""
    def mutate(kind, doc, reads):
        if kind == "stats" and reads >= 6:  # reads 1-5: the start and the first run
            return zero_statistics(doc)
        return doc

    out = tmp_path / "live.json"
    with Hostile(mutate) as h:
        res = _serve(h, out, "--load", "burst:8,burst:16")
    line = assert_one_line_error(res, 3, "the run broke", "went backwards", "written to")
    assert "burst:16" in line
    doc = json.loads(out.read_text())["serve"]
    assert [c["load"]["label"] for c in doc["configs"]] == ["burst:8"]
    assert doc["incomplete"].startswith("invalid: burst:16")
    assert "went backwards" in doc["incomplete"]
    assert any(w["code"] == "server-fault" for w in doc["warnings"])
    text = out.read_text()
    assert "-1" not in json.dumps(doc["configs"][0]["repeats"][0]["server_stats"])
    assert "NaN" not in text


def test_a_server_without_the_statistics_extension_is_named(tmp_path):
    def mutate(kind, doc, reads):
        return doc

    out = tmp_path / "live.json"
    with Hostile(mutate) as h:
        h_doc = _doc("server_metadata")
        h_doc["extensions"] = [x for x in h_doc["extensions"] if x != "statistics"]
        import trtcheck.measure.serving.live.live_faults as lf

        err = lf.missing_extension(h_doc, h.url, sweep=False)
        assert err is not None and err.exit_code == 3 and "statistics" in err.message
        h_doc["extensions"] = [x for x in h_doc["extensions"] if x != "model_repository"] + [
            "statistics"]
        err = lf.missing_extension(h_doc, h.url, sweep=True)
        assert err is not None and err.exit_code == 2 and "model-repository" in err.message
        assert lf.missing_extension(h_doc, h.url, sweep=False) is None
        assert lf.missing_extension({"extensions": []}, h.url, sweep=True) is None


def test_a_window_for_a_model_without_batch_axis_is_refused(tmp_path):
    out = tmp_path / "live.json"
    with Hostile(_set(("config", "max_batch_size"), 0)) as h:
        res = _serve(h, out, "--window-ms", "2")
    assert_one_line_error(res, 2, "max_batch_size 0", "--max-batch")
    assert not out.exists()


def test_a_window_the_server_does_not_run_is_a_finding():
    from trtcheck.measure.serving.live.live_faults import window_not_applied

    cfg = check_model_config(_doc("model_config"))
    assert window_not_applied(2000.0, cfg) is None
    assert window_not_applied(None, cfg) is None
    off = {k: v for k, v in cfg.items() if k != "dynamic_batching"}
    f = window_not_applied(2000.0, off)
    assert f.code == "window-not-applied" and "no dynamic batching" in f.message
    f = window_not_applied(500.0, cfg)
    assert "2000 us" in f.message


class RawAnswers:
    """A loopback server that answers every request with the same bytes (an answer that
    is not HTTP, a redirect to itself) and closes the connection."""

    def __init__(self, answer: bytes) -> None:
        import socket

        self.answer = answer
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.recv(65536)
                    conn.sendall(self.answer)
                except OSError:
                    pass

    def __enter__(self) -> RawAnswers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.mark.parametrize("answer, words", [
    (b"SSH-2.0-OpenSSH_9.0\r\n\x00\x01", "not an HTTP answer"),
    (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 100_000 + b"\r\nContent-Length: 0\r\n\r\n",
     "not an HTTP answer"),
    (b"HTTP/1.1 302 Found\r\nLocation: /v2/health/live\r\nConnection: close\r\n"
     b"Content-Length: 0\r\n\r\n",
     "redirects without end"),
])
def test_an_answer_that_is_not_http_is_one_line(tmp_path, answer, words):
    """Before: aiohttp's ClientResponseError / TooManyRedirects ended in exit 4."""
    out = tmp_path / "live.json"
    with RawAnswers(answer) as srv:
        res = run_cli("serve", "--url", srv.url, "--model", "m", "-o", str(out), timeout=60)
    line = assert_one_line_error(res, 3, "answered the liveness check with a bad answer",
                                 words)
    assert "Traceback" not in res.stderr and srv.url in line
    assert not out.exists()


def test_a_configuration_that_is_not_json_is_a_bad_answer(tmp_path):
    """Before: a truncated configuration read as "no configuration extension" ({}), and
    the run failed later with a misleading exit 2 about variable dimensions."""
    out = tmp_path / "live.json"
    with Hostile(lambda kind, doc, reads: b'{"name": "m", "max_batch' if kind == "config"
                 else doc) as h:
        res = _serve(h, out)
    assert_one_line_error(res, 3, "answered the configuration with a bad answer", "not JSON")
    assert not out.exists()


def _bad_numbers(doc, path="$"):
    if isinstance(doc, dict):
        return [x for k, v in doc.items() if k not in ("shape", "dims")
                for x in _bad_numbers(v, f"{path}.{k}")]
    if isinstance(doc, list):
        return [x for i, v in enumerate(doc) for x in _bad_numbers(v, f"{path}[{i}]")]
    if isinstance(doc, float) and not math.isfinite(doc):
        return [(path, doc)]
    if isinstance(doc, (int, float)) and not isinstance(doc, bool) and doc < 0:
        return [(path, doc)]
    return []


@pytest.mark.parametrize("inference_stat, ns_per_request", [
    ("success", 50_000_000),  # 50 ms in the server per request: more than the client saw
    ("queue", 10**12),  # queued longer than the whole request took
])
def test_a_split_the_statistics_contradict_is_left_out_not_negative(
        tmp_path, inference_stat, ns_per_request):
    """Before: live.json held client_network_mean_ms or server_other_mean_ms below zero
    and the report showed the negative cells."""
    def mutate(kind, doc, reads):
        if kind == "stats":
            e = doc["model_stats"][0]
            e["inference_stats"][inference_stat]["ns"] = (
                e["inference_stats"][inference_stat]["count"] * ns_per_request)
            if inference_stat == "queue":  # a request: at least its queue time
                e["inference_stats"]["success"]["ns"] = e["inference_stats"]["queue"]["ns"]
        return doc

    out = tmp_path / "live.json"
    with Hostile(mutate) as h:
        res = _serve(h, out)
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    assert _bad_numbers(doc) == []
    c = doc["serve"]["configs"][0]
    assert c["repeats"][0]["live_split"] is None
    [w] = [w for w in c["warnings"] if w["code"] == "live-split-inconsistent"]
    assert "negative part" in w["message"]
    rep = run_cli("report", "--from", str(out), "-o", str(tmp_path / "rep"))
    assert rep.returncode == 0, rep.stderr
    assert _bad_numbers(json.loads((tmp_path / "rep" / "results.json").read_text())) == []


def test_statistics_that_count_fewer_requests_than_answered_are_a_finding(tmp_path):
    """A server whose statistics never move (it counts nothing) while every request was
    answered: the run stands, with a finding that its statistics are not this load's."""
    def mutate(kind, doc, reads):
        return zero_statistics(doc) if kind == "stats" else doc

    out = tmp_path / "live.json"
    with Hostile(mutate) as h:
        res = _serve(h, out)
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())["serve"]
    [w] = [w for w in doc["warnings"] if w["code"] == "server-stats-short"]
    assert "counted 0 successful requests" in w["message"]


def test_an_inference_answer_larger_than_the_limit_fails_its_request(tmp_path):
    """A server that answers an inference with more than 64 MiB: the request fails (a bad
    answer) and its connection is closed, so the load process's memory stays bounded;
    every warm-up request failing that way is one line, exit 3."""
    from trtcheck.measure.serving.live.kserve_http import MAX_ANSWER_BYTES

    huge = b"[" + b" " * (MAX_ANSWER_BYTES + 1024) + b"]"

    def mutate(kind, doc, reads):
        return huge if kind == "infer" else doc

    with Hostile(mutate) as h:
        res = _serve(h, tmp_path / "live.json")
    assert_one_line_error(res, 3, "larger than 64 MiB")


def test_a_configuration_the_server_does_not_apply_is_a_finding(tmp_path):
    """The server takes the load but keeps running its own max batch (a repository agent
    that rewrites configurations): the run measures what the server runs, and says so."""
    def mutate(kind, doc, reads):
        if kind == "config":
            doc["max_batch_size"] = 4
            doc["dynamic_batching"]["preferred_batch_size"] = [4]
        return doc

    out = tmp_path / "live.json"
    with Hostile(mutate) as h:
        res = _serve(h, out, "--max-batch", "8")
    assert res.returncode == 0, res.stderr
    [c] = json.loads(out.read_text())["serve"]["configs"]
    assert c["max_batch_size"] == 4
    [w] = [w for w in c["warnings"] if w["code"] == "config-not-applied"]
    assert "max batch 4 (asked 8)" in w["message"]
