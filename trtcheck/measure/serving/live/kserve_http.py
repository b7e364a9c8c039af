"""KServe v2 inference over HTTP/1.1 for the live load generator: one request body encoded
once, sent over pre-opened keep-alive connections, answers parsed by a C parser.

Why not ``tritonclient.http.aio`` for the load itself: it encodes every request again
(JSON header and binary tensors) and goes through aiohttp's client session machinery.
Measured on a 2-core machine against a tritonserver whose model answers in about 0.2 ms,
one request at a time: 0.73 ms median round trip with ``tritonclient.http.aio``, 0.42 ms
here, 0.46 ms with perf_analyzer (C++). Every request of a run carries the same tensors,
so the body is encoded once, by tritonclient's own encoder
(``InferenceServerClient.generate_request_body``: the JSON header plus Triton's binary
tensor data extension), and each answer is parsed by tritonclient's
``InferResult.from_response_body``. The only code of our own is the connection pool: one
request at a time on each connection (no pipelining), ``httptools`` (the llhttp parser
that uvicorn uses) reading the answers.

Each request ends in exactly one of: a parsed answer whose outputs match the model's
metadata; :class:`InferHttpError` (the server answered a status other than 200; its
``status()`` is the HTTP status and ``message()`` Triton's ``error`` text); whatever the
output check given to :class:`HttpInferPool` raises; or ``ConnectionError`` (the connection
failed or closed before the answer).
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Callable
from typing import Any

from trtcheck.errors import EnvironmentProblem
from trtcheck.results.kserve_answers import BadResponse

#: Connections one pool opens at most. A load process waits in ``select()``
#: (:func:`trtcheck.measure.serving.loadgen.precise_loop`), which takes file descriptors below
#: 1024; requests beyond this many in flight wait for a connection to come free (their
#: latency counts the wait).
MAX_CONNECTIONS = 768


class InferHttpError(Exception):
    """The server answered an inference request with a status other than 200.

    ``status()`` and ``message()`` mirror tritonclient's ``InferenceServerException``, so
    the load generator classifies both the same way.
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self._status = int(status)
        self._message = message

    def status(self) -> str:
        """The HTTP status, as a string (``"400"``)."""
        return str(self._status)

    def message(self) -> str:
        """The server's error text (Triton's ``{"error": ...}``), or the raw body."""
        return self._message


def _import_httptools() -> Any:
    try:
        import httptools
    except ImportError as exc:
        raise EnvironmentProblem(f"live targets over HTTP need httptools ({exc})",
                                 "pip install 'tritonclient[http,grpc]' httptools (the triton "
                                 "extra)") from None
    return httptools


def encode_infer_request(address: str, model: str, version: str,
                         inputs: list[Any], outputs: list[Any]) -> bytes:
    """The whole HTTP/1.1 request (head and body) of one KServe v2 inference.

    Args:
        address: ``HOST:PORT`` (the ``Host`` header).
        model, version: the model and version (``""``: the server's choice).
        inputs, outputs: ``tritonclient.http.InferInput`` with data set (binary or JSON)
            and ``InferRequestedOutput`` objects.

    Returns:
        the bytes to write on a connection, request after request.
    """
    import tritonclient.http as th

    body, json_size = th.InferenceServerClient.generate_request_body(inputs, outputs)
    from urllib.parse import quote  # as tritonclient quotes the names in its paths

    path = (f"/v2/models/{quote(model)}/versions/{quote(version)}/infer" if version
            else f"/v2/models/{quote(model)}/infer")
    head = [f"POST {path} HTTP/1.1", f"Host: {address}", "Connection: keep-alive",
            f"Content-Length: {len(body)}"]
    if json_size is not None:
        head += [f"Inference-Header-Content-Length: {json_size}",
                 "Content-Type: application/octet-stream"]
    else:
        head.append("Content-Type: application/json")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + bytes(body)


def parse_infer_response(status: int, body: bytes, header_length: int | None) -> Any:
    """A ``tritonclient.http.InferResult`` of a 200 answer.

    Raises:
        InferHttpError: ``status`` is not 200 (the message is Triton's ``error`` field
            when the body is that JSON, else the body's first 300 characters).
        BadResponse: a 200 answer tritonclient cannot read (not JSON, a header length
            beyond the body, outputs that are not a list of objects).
    """
    if status != 200:
        text = body.decode("utf-8", "replace")
        try:
            text = str(json.loads(text).get("error", text))
        except (ValueError, AttributeError):
            pass
        raise InferHttpError(status, " ".join(text.split())[:300] or f"status {status}")
    import tritonclient.http as th

    if header_length is not None and not 0 <= header_length <= len(body):
        raise BadResponse(f"the answer's Inference-Header-Content-Length {header_length} "
                          f"does not fit its {len(body)}-byte body")
    try:
        result = th.InferResult.from_response_body(body, False, header_length)
        outputs = result.get_response().get("outputs", [])
    except Exception as exc:  # noqa: BLE001 - tritonclient on a malformed answer
        raise BadResponse(f"unreadable inference answer ({type(exc).__name__}: "
                          f"{' '.join(str(exc).split())[:200]})") from None
    if not isinstance(outputs, list) or not all(
            isinstance(o, dict) and isinstance(o.get("name"), str) for o in outputs):
        raise BadResponse("the inference answer's outputs are not a list of named tensors")
    return result


MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""Largest inference answer read (bytes): one request's outputs are far smaller; a
server that sends more fails that request (and its connection is closed) instead of
growing the load process's memory without bound."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection; at most one request in flight on it."""

    def __init__(self, pool: HttpInferPool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.parser = pool.httptools.HttpResponseParser(self)
        self.fut: asyncio.Future[Any] | None = None
        self.body: list[bytes] = []
        self.body_bytes = 0
        self.header_length: int | None = None
        self.closed = False

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except Exception as exc:  # noqa: BLE001 - a broken answer fails its request
            self._fail(ConnectionError(f"unreadable HTTP answer ({exc})"))
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.pool.forget(self)
        self._fail(ConnectionError("the server closed the connection before answering"
                                   + (f" ({exc})" if exc else "")))

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"inference-header-content-length":
            try:
                self.header_length = int(value)
            except ValueError:  # checked against the body in parse_infer_response
                self.header_length = -1

    def on_body(self, chunk: bytes) -> None:
        self.body_bytes += len(chunk)
        if self.body_bytes > MAX_ANSWER_BYTES:
            self.body = []
            self._fail(ConnectionError(f"the answer is larger than {MAX_ANSWER_BYTES >> 20} "
                                       "MiB (bad answer)"))
            self.close()
            return
        self.body.append(chunk)

    def on_message_complete(self) -> None:
        fut, self.fut = self.fut, None
        status = self.parser.get_status_code()
        body, self.body, self.body_bytes = b"".join(self.body), [], 0
        hl, self.header_length = self.header_length, None
        keep = self.parser.should_keep_alive()
        if keep and not self.closed:
            self.pool.release(self)
        else:
            self.close()
        if fut is None or fut.done():
            return
        try:
            fut.set_result(self.pool.check(parse_infer_response(status, body, hl)))
        except Exception as exc:  # noqa: BLE001 - the request's outcome
            fut.set_exception(exc)

    # ours
    def send(self, fut: asyncio.Future[Any]) -> None:
        self.fut = fut
        assert self.transport is not None
        self.transport.write(self.pool.request)

    def _fail(self, exc: BaseException) -> None:
        fut, self.fut = self.fut, None
        if fut is not None and not fut.done():
            fut.set_exception(exc)

    def close(self) -> None:
        self.closed = True
        self.pool.forget(self)
        if self.transport is not None:
            self.transport.close()


class HttpInferPool:
    """Keep-alive HTTP/1.1 connections to one server, all sending the same request.

    Use inside a running event loop: ``await pool.open(n)`` first (pre-warmed
    connections), then ``pool.start()`` per request, ``pool.close()`` at the end.

    Args:
        host, port: the server.
        request: the encoded request (:func:`encode_infer_request`).
        check: called with each parsed answer (``tritonclient.http.InferResult``); its
            return value is the request's result, an exception it raises the request's
            error.
        connect_timeout_s: bound on opening one connection (> 0).
        max_connections: connections open at most (1 to :data:`MAX_CONNECTIONS`); a
            request that finds none idle and the pool full waits for the next free one.
    """

    def __init__(self, host: str, port: int, request: bytes,
                 check: Callable[[Any], Any] = lambda r: r,
                 connect_timeout_s: float = 10.0,
                 max_connections: int = MAX_CONNECTIONS) -> None:
        self.httptools = _import_httptools()
        self.host = host.strip("[]")
        self.port = int(port)
        self.request = request
        self.check = check
        self.connect_timeout_s = connect_timeout_s
        self._idle: list[_Connection] = []
        self._all: set[_Connection] = set()
        self._connecting: set[asyncio.Task[None]] = set()
        self.max_connections = max(1, min(int(max_connections), MAX_CONNECTIONS))
        self._waiting: collections.deque[asyncio.Future[Any]] = collections.deque()

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, proto = await asyncio.wait_for(
            loop.create_connection(lambda: _Connection(self), self.host, self.port),
            self.connect_timeout_s)
        self._all.add(proto)
        return proto

    async def open(self, n: int) -> None:
        """Open ``n`` connections now (>= 0), so the run does not pay for them.

        Raises:
            OSError / asyncio.TimeoutError: the server cannot be reached.
        """
        conns = await asyncio.gather(*[self._connect() for _ in range(n)])
        self._idle.extend(conns)

    def release(self, conn: _Connection) -> None:
        """Put an answered connection back: to the oldest request waiting for one, else
        idle."""
        while self._waiting:
            fut = self._waiting.popleft()
            if not fut.done():
                conn.send(fut)
                return
        self._idle.append(conn)

    def forget(self, conn: _Connection) -> None:
        """Drop a closed connection; a request waiting for one gets a new one."""
        if conn not in self._all:
            return
        self._all.discard(conn)
        try:
            self._idle.remove(conn)
        except ValueError:
            pass
        while self._waiting and self._waiting[0].done():
            self._waiting.popleft()
        if self._waiting:
            self._connect_for(self._waiting.popleft())

    @property
    def connections(self) -> int:
        """Connections open now."""
        return len(self._all)

    def start(self) -> asyncio.Future[Any]:
        """Send the request now on an idle connection (a new one when none is idle; the
        next free one when the pool is full) and return the future of its answer. Never
        blocks."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                conn.send(fut)
                return fut
        if len(self._all) + len(self._connecting) >= self.max_connections:
            self._waiting.append(fut)
        else:
            self._connect_for(fut)
        return fut

    def _connect_for(self, fut: asyncio.Future[Any]) -> None:
        async def connect_then_send() -> None:
            try:
                conn = await self._connect()
            except BaseException as exc:  # noqa: BLE001 - the request's outcome
                if not fut.done():
                    fut.set_exception(ConnectionError(f"cannot connect to {self.host}:"
                                                      f"{self.port} ({exc or type(exc).__name__})"))
                return
            if fut.done():  # cancelled while connecting: keep the connection for later
                self.release(conn)
            else:
                conn.send(fut)

        task = asyncio.get_running_loop().create_task(connect_then_send())
        self._connecting.add(task)
        task.add_done_callback(self._connecting.discard)

    def close(self) -> None:
        """Close every connection; requests still in flight fail with ConnectionError."""
        for task in list(self._connecting):
            task.cancel()
        for fut in self._waiting:
            if not fut.done():
                fut.set_exception(ConnectionError("the pool closed before a connection "
                                                  "came free"))
        self._waiting.clear()
        for conn in list(self._all):
            conn.close()
