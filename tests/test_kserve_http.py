"""The live load generator's HTTP data plane (``trtcheck/measure/serving/live/kserve_http.py``) against a
real tritonserver: one encoded request sent over keep-alive connections, answers parsed,
every failure one exception of a known kind."""

from __future__ import annotations

import asyncio
import json
import socket

import numpy as np
import pytest

pytestmark = [pytest.mark.triton, pytest.mark.slow]


def _request(address: str, model: str, version: str = "", rows: int = 1,
             cols: int = 4) -> tuple[bytes, np.ndarray]:
    import tritonclient.http as th

    from trtcheck.measure.serving.live.kserve_http import encode_infer_request

    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    inp = th.InferInput("INPUT0", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    return encode_infer_request(address, model, version, [inp],
                                [th.InferRequestedOutput("OUTPUT0")]), x


def _pool(url: str, req: bytes, check=lambda r: r):
    from trtcheck.measure.serving.live.kserve_http import HttpInferPool

    host, port = url.split("://", 1)[1].rsplit(":", 1)
    return HttpInferPool(host, int(port), req, check=check)


def test_request_is_what_tritonclient_sends():
    req, x = _request("127.0.0.1:8000", "m", "3")
    head, body = req.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v2/models/m/versions/3/infer HTTP/1.1"
    fields = dict(ln.split(": ", 1) for ln in lines[1:])
    assert int(fields["Content-Length"]) == len(body)
    n = int(fields["Inference-Header-Content-Length"])
    header = json.loads(body[:n])
    assert header["inputs"][0]["name"] == "INPUT0"
    assert header["inputs"][0]["shape"] == [1, 4]
    assert header["inputs"][0]["parameters"]["binary_data_size"] == x.nbytes
    assert body[n:] == x.tobytes()
    assert _request("h:1", "m")[0].startswith(b"POST /v2/models/m/infer HTTP/1.1\r\n")


def test_answers_are_parsed_over_reused_connections(triton):
    req, x = _request(triton.http_url.split("://")[1], "tb_linear")

    async def go():
        pool = _pool(triton.http_url, req, check=lambda r: r.as_numpy("OUTPUT0"))
        await pool.open(2)
        try:
            first = [await pool.start() for _ in range(5)]  # one at a time: 2 suffice
            opened_serial = pool.connections
            burst = await asyncio.gather(*[pool.start() for _ in range(12)])
            return first + list(burst), opened_serial, pool.connections
        finally:
            pool.close()

    outs, opened_serial, opened_burst = asyncio.run(go())
    assert len(outs) == 17
    for o in outs:
        assert o.shape == (1, 4) and o.dtype == np.float32
    assert opened_serial == 2  # keep-alive: no new connection for serial requests
    assert opened_burst >= 12  # a burst opens what it needs, one request per connection


def test_server_error_is_an_http_error_with_tritons_message(triton):
    from trtcheck.measure.serving.live.kserve_http import InferHttpError

    addr = triton.http_url.split("://")[1]
    req, _ = _request(addr, "no_such_model")
    wrong, _ = _request(addr, "tb_linear", cols=3)  # the model takes 4 columns

    async def go(r):
        pool = _pool(triton.http_url, r)
        try:
            return await pool.start()
        finally:
            pool.close()

    for r, status, word in ((req, "404", "no_such_model"), (wrong, "400", "INPUT0")):
        with pytest.raises(InferHttpError) as ei:
            asyncio.run(go(r))
        assert ei.value.status() == status
        assert word in ei.value.message()


def test_the_check_decides_the_outcome(triton):
    req, _ = _request(triton.http_url.split("://")[1], "tb_linear")

    def refuse(result):
        raise ValueError("not what the metadata says")

    async def go():
        pool = _pool(triton.http_url, req, check=refuse)
        try:
            return await pool.start()
        finally:
            pool.close()

    with pytest.raises(ValueError, match="metadata"):
        asyncio.run(go())


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_listening_is_a_connection_error():
    port = _dead_port()
    req, _ = _request(f"127.0.0.1:{port}", "m")

    async def go():
        pool = _pool(f"http://127.0.0.1:{port}", req)
        try:
            return await pool.start()
        finally:
            pool.close()

    with pytest.raises(ConnectionError, match="cannot connect"):
        asyncio.run(go())

    async def prewarm():
        await _pool(f"http://127.0.0.1:{port}", req).open(2)

    with pytest.raises(OSError):
        asyncio.run(prewarm())


def _against(handler) -> object:
    """One request through the pool to a loopback peer that runs ``handler(reader,
    writer)``: a broken server, to see how a request fails."""
    req, _ = _request("127.0.0.1:1", "m")

    async def go():
        srv = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = srv.sockets[0].getsockname()[1]
        pool = _pool(f"http://127.0.0.1:{port}", req)
        try:
            return await asyncio.wait_for(pool.start(), 10)
        finally:
            pool.close()
            srv.close()

    return asyncio.run(go())


def test_a_connection_closed_before_the_answer_fails_its_request():
    """A server that reads the request and hangs up: the request fails, it is not lost."""
    async def hang_up(reader, writer):
        await reader.read(10)
        writer.close()

    with pytest.raises(ConnectionError, match="closed the connection"):
        _against(hang_up)


def test_a_garbled_answer_fails_its_request():
    async def garble(reader, writer):
        await reader.read(10)
        writer.write(b"this is not HTTP\r\n\r\n")
        await writer.drain()

    with pytest.raises(ConnectionError, match="unreadable"):
        _against(garble)


def test_a_full_pool_queues_requests_until_a_connection_is_free(triton):
    req, _ = _request(triton.http_url.split("://")[1], "tb_linear")

    async def go():
        pool = _pool(triton.http_url, req)
        pool.max_connections = 2
        try:
            outs = await asyncio.gather(*[pool.start() for _ in range(7)])
            return outs, pool.connections
        finally:
            pool.close()

    outs, opened = asyncio.run(go())
    assert len(outs) == 7 and opened == 2
