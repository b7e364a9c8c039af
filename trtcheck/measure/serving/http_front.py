"""A thin HTTP front around the batcher: aiohttp server on loopback + keep-alive client.

Used by ``trtcheck serve --http`` to show what an HTTP layer adds to each request. The
server and the client run on the same event loop in one process, so their
:func:`time.perf_counter` timestamps share one clock and the waterfall can split the
HTTP part from the batcher's parts exactly.

Wire format (binary, no JSON): a request body is the raw bytes of each input array of
one request, concatenated in the payload template's key order; the server rebuilds the
arrays from the template's shapes and dtypes. The response body is the raw bytes of the
request's output arrays. Header ``X-Request-Id`` carries the load generator's request
number. Non-array payloads are not sent: the server uses the template as is.

Client connections are opened and kept alive before measuring (setting
up connections during a burst spreads the arrivals out by tens of milliseconds).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np

from trtcheck.errors import EnvironmentProblem
from trtcheck.measure.serving.batcher import DynamicBatcher, QueueFull, Ticket

_clock = time.perf_counter


def _encode(obj: Any) -> bytes:
    if isinstance(obj, dict):
        return b"".join(_encode(v) for v in obj.values())
    if isinstance(obj, np.ndarray):
        return np.ascontiguousarray(obj).tobytes()
    if isinstance(obj, (list, tuple)):
        return b"".join(_encode(v) for v in obj)
    return b"" if obj is None else str(obj).encode()


class HttpFront:
    """The loopback server and its client.

    Attributes:
        batcher: the batcher requests are handed to (set per configuration).
        handler_times: request number -> ``(t_handler_start, t_handler_end)``.
        tickets: request number -> the batcher :class:`Ticket`.

    Raises:
        EnvironmentProblem: aiohttp is not installed.
    """

    def __init__(self, template: Any, max_connections: int = 256) -> None:
        try:
            import aiohttp  # noqa: F401
            from aiohttp import web  # noqa: F401
        except ImportError:
            raise EnvironmentProblem("the HTTP front needs aiohttp",
                                     "pip install aiohttp (or drop --http)") from None
        self.template = template
        self.max_connections = max_connections
        self.batcher: DynamicBatcher | None = None
        self.handler_times: dict[int, tuple[float, float]] = {}
        self.tickets: dict[int, Ticket] = {}
        self.front_stage: Any = None
        self._runner: Any = None
        self._session: Any = None
        self.url = ""
        self._layout: list[tuple[str, tuple[int, ...], np.dtype[Any], int]] = []
        if isinstance(template, dict) and all(isinstance(v, np.ndarray) for v in template.values()):
            for k, v in template.items():
                self._layout.append((k, v.shape, v.dtype, v.nbytes))

    def _decode(self, body: bytes) -> Any:
        if not self._layout:
            return self.template
        out, off = {}, 0
        for k, shape, dt, nb in self._layout:
            out[k] = np.frombuffer(body, dtype=dt, count=nb // dt.itemsize,
                                   offset=off).reshape(shape)
            off += nb
        return out

    async def _infer(self, request: Any) -> Any:
        from aiohttp import web

        t0 = _clock()
        rid = int(request.headers.get("X-Request-Id", "-1"))
        body = await request.read()
        payload = self._decode(body)
        if self.front_stage is not None:
            await self.front_stage.pass_through()
        assert self.batcher is not None
        try:
            ticket = await self.batcher.submit_ticket(payload)
        except QueueFull as exc:
            self.handler_times[rid] = (t0, _clock())
            return web.Response(status=503, text=str(exc))
        self.tickets[rid] = ticket
        try:
            result = await ticket.future
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the batch error, sent to the client
            self.handler_times[rid] = (t0, _clock())
            return web.Response(status=500, text=f"{type(exc).__name__}: {exc}")
        data = _encode(result)
        self.handler_times[rid] = (t0, _clock())
        return web.Response(body=data, content_type="application/octet-stream")

    async def _health(self, request: Any) -> Any:
        from aiohttp import web

        return web.Response(text="ok")

    async def start(self, prewarm: int) -> None:
        """Start the server on 127.0.0.1 (a free port) and open ``prewarm`` keep-alive
        connections (at most ``max_connections``)."""
        import aiohttp
        from aiohttp import web

        app = web.Application(client_max_size=1 << 30)
        app.router.add_post("/infer", self._infer)
        app.router.add_get("/health", self._health)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server: Any = site._server  # aiohttp exposes no public getter
        port = server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        conn = aiohttp.TCPConnector(limit=self.max_connections, keepalive_timeout=300,
                                    force_close=False)
        self._session = aiohttp.ClientSession(connector=conn)
        n = max(1, min(prewarm, self.max_connections))

        async def ping() -> None:
            async with self._session.get(self.url + "/health") as r:
                await r.read()
                await asyncio.sleep(0.05)  # hold the connection so the others open new ones

        await asyncio.gather(*[ping() for _ in range(n)])

    async def send(self, rid: int, body: bytes) -> int:
        """POST one request; returns the response size in bytes.

        Raises:
            QueueFull: the server answered 503 (back-pressure).
            RuntimeError: any other non-200 answer (the server's error text).
        """
        async with self._session.post(self.url + "/infer", data=body,
                                      headers={"X-Request-Id": str(rid)}) as r:
            data = await r.read()
            if r.status == 503:
                raise QueueFull(data.decode(errors="replace"))
            if r.status != 200:
                raise RuntimeError(data.decode(errors="replace"))
            return len(data)

    def encode(self, payload: Any) -> bytes:
        """Request body of ``payload`` (see the module docstring)."""
        return _encode(payload) if self._layout else b""

    async def close(self) -> None:
        """Close the client session and the server."""
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()
