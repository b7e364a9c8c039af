"""A KServe v2 (Triton) control-plane client for live targets, over HTTP or gRPC.

Wraps ``tritonclient`` (``tritonclient.http.aio`` / ``tritonclient.grpc.aio``; install
the ``triton`` extra) and turns every answer into plain JSON of one shape whatever
the protocol (gRPC's int64 fields arrive as strings and are turned into ints where read),
and every failure into one trtcheck error:

=====================================================  ======================================
what                                                   error (exit code)
=====================================================  ======================================
URL not ``http://HOST:PORT`` or ``grpc://HOST:PORT``   :class:`InputError` (2)
nothing answers at the URL, or no answer in time       :class:`EnvironmentProblem` (3)
the server is not live (not ready alone: a warning)  :class:`EnvironmentProblem` (3)
the server has no such model / version                 :class:`InputError` (2)
the model is in the repository but not loaded/ready   :class:`EnvironmentProblem` (3)
the server refuses a model load (no explicit control)  :class:`InputError` (2)
=====================================================  ======================================

Endpoints used (KServe v2 and Triton's extensions): ``GET /v2`` (server metadata),
``/v2/health/ready``, ``/v2/models/NAME[/versions/V]/ready``, model metadata,
``/v2/models/NAME/config`` (Triton model configuration), ``/v2/models/NAME/stats``
(statistics extension) and ``POST /v2/repository/models/NAME/load`` with a ``config``
override (model-repository extension).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlparse

from trtcheck.errors import EnvironmentProblem, InputError
from trtcheck.results.kserve_answers import (
    BadAnswer, check_model_config, check_model_metadata, check_model_stats,
    check_server_metadata,
)

T = TypeVar("T")

#: Seconds one control-plane call (metadata, statistics) may take before it counts as
#: no answer.
CONTROL_TIMEOUT_S = 10.0
#: Seconds a model load (config override) may take.
LOAD_TIMEOUT_S = 120.0
#: Seconds more a load may take per ``model_warmup`` entry of its configuration (a
#: framework that compiles per new shape pays up to about a second per batch size).
WARMUP_ENTRY_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Endpoint:
    """A parsed ``--url``.

    Attributes:
        url: as given.
        protocol: ``"http"`` or ``"grpc"``.
        address: ``HOST:PORT`` (what tritonclient takes).
    """

    url: str
    protocol: str
    address: str


def parse_url(url: str) -> Endpoint:
    """Parse ``http://HOST:PORT`` or ``grpc://HOST:PORT`` (a path is refused: KServe v2
    lives at ``/v2`` of the server root).

    Raises:
        InputError: another scheme, no host, no or bad port, or a path/query.
    """
    hint = "give --url http://HOST:PORT (KServe v2 over HTTP) or grpc://HOST:PORT"
    try:
        u = urlparse(url.strip())
        port = u.port
    except ValueError as exc:
        raise InputError(f"--url {url!r} is not a valid URL ({exc})", hint) from None
    if "://" not in url and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:/", url.strip()):
        bare = url.strip().rstrip("/")
        try:
            has_port = urlparse(f"//{bare}").port is not None
        except ValueError:
            has_port = True  # a bad port: the suggestion keeps what was given
        http, grpc = (bare, bare) if has_port else (f"{bare}:8000", f"{bare}:8001")
        raise InputError(f"--url {url!r} needs a scheme (http:// or grpc://)",
                         f"give --url http://{http} (KServe v2 over HTTP) or grpc://{grpc}"
                         + ("" if has_port else " (Triton's default ports)"))
    if u.scheme not in ("http", "grpc"):
        raise InputError(f"--url {url!r} has scheme {u.scheme or 'none'!r}; trtcheck speaks "
                         "KServe v2 over http:// or grpc://", hint)
    if not u.hostname or port is None:
        raise InputError(f"--url {url!r} needs a host and a port", hint)
    if u.path not in ("", "/") or u.query or u.params or u.fragment:
        raise InputError(f"--url {url!r} has a path or query; give the server root", hint)
    host = f"[{u.hostname}]" if ":" in u.hostname else u.hostname
    return Endpoint(url=url.strip(), protocol=u.scheme, address=f"{host}:{port}")


def import_client(protocol: str) -> Any:
    """The ``tritonclient`` aio module of ``protocol``.

    Raises:
        EnvironmentProblem: tritonclient (or its extra for the protocol) is missing.
    """
    try:
        if protocol == "grpc":
            import tritonclient.grpc.aio as mod
        else:
            import tritonclient.http.aio as mod
    except ImportError as exc:
        raise EnvironmentProblem(f"live targets need tritonclient ({exc})",
                                 "pip install 'tritonclient[http,grpc]' httptools (the triton "
                                 "extra)") from None
    return mod


def make_client(ep: Endpoint) -> Any:
    """An aio ``InferenceServerClient`` for ``ep`` (create it inside a running loop)."""
    mod = import_client(ep.protocol)
    if ep.protocol == "grpc":
        return mod.InferenceServerClient(ep.address)
    return mod.InferenceServerClient(ep.address, conn_limit=1024, conn_timeout=60.0)


def bad_answer(url: str, endpoint: str, exc: BadAnswer) -> EnvironmentProblem:
    """The one-line error of an answer that failed its check
    (:mod:`trtcheck.results.kserve_answers`), naming the endpoint and the field."""
    return EnvironmentProblem(
        f"the server at {url} answered {endpoint} with a bad "
        f"{exc.field or 'answer'}: {exc.reason}",
        "trtcheck reads KServe v2 answers as Triton 2.x gives them; check the server (or a "
        "proxy in front of it) and its version")


def _model_path(name: str, version: str) -> str:
    from urllib.parse import quote

    return (f"/v2/models/{quote(name, safe='')}"
            + (f"/versions/{quote(version, safe='')}" if version else ""))


def error_text(exc: BaseException) -> str:
    """The message of a tritonclient/network exception, one line."""
    message = getattr(exc, "message", None)  # tritonclient's exceptions: a method
    os_error = getattr(exc, "os_error", None)  # aiohttp's connector errors
    if isinstance(os_error, OSError) and getattr(exc, "host", None):
        # aiohttp's own text names its TLS context ("ssl:default"), not the cause
        code = os_error.errno
        why = (os.strerror(code) if isinstance(code, int) and code > 0
               else os_error.strerror or str(os_error))
        return f"cannot connect to {exc.host}:{exc.port}: {why}"[:300]  # type: ignore[attr-defined]
    msg = message() if callable(message) else str(exc)
    msg = " ".join(str(msg or type(exc).__name__).split())
    return msg[:300]


def is_unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says nothing answered (connection refused/reset, DNS, timeout)."""
    if isinstance(exc, (OSError, asyncio.TimeoutError, TimeoutError)):
        return True
    name = type(exc).__name__
    if name.startswith("Client") and "Connector" in name:  # aiohttp
        return True
    status_of = getattr(exc, "status", None)  # tritonclient's exceptions: a method
    status = status_of() if callable(status_of) else None
    if status and str(status).isdigit():  # an HTTP answer: the server was reached
        return False
    text = error_text(exc).lower()
    # an answer's text may name a model state such as UNAVAILABLE: only transport words
    return any(s in text for s in ("failed to connect", "connection refused",
                                   "cannot connect", "connect call failed",
                                   "deadline exceeded", "name resolution",
                                   "server disconnected", "connection reset"))


def unreadable_answer(exc: BaseException) -> str | None:
    """What is wrong with an answer the client could not read, or ``None`` when ``exc``
    is not that: a body that is not JSON (``ValueError`` from the JSON parser, bytes that
    are not UTF-8), or an answer that is not HTTP the client can follow (aiohttp: a bad
    status line, a header over its limit, a body shorter than its ``Content-Length``,
    redirects without end). An answer with an error status (tritonclient's
    ``InferenceServerException``, which has ``status()``) is not unreadable: the callers
    read its text."""
    if callable(getattr(exc, "status", None)):
        return None
    if isinstance(exc, (ValueError, RecursionError)):  # RecursionError: nested too deeply
        return f"not JSON ({error_text(exc)})"
    if type(exc).__module__.split(".")[0] == "aiohttp":
        text = error_text(exc)
        if type(exc).__name__ == "TooManyRedirects":
            return f"redirects without end ({text})"
        if "bad status line" in text.lower() and re.search(r"\\+x00\\+x00", text):
            # an HTTP/2 server's first frame (SETTINGS) where an HTTP/1.1 status line goes
            return ("an HTTP/2 frame, not an HTTP/1.1 answer: the port looks like a gRPC "
                    "endpoint (use grpc://HOST:PORT, or the server's HTTP port, 8000 by "
                    "default)")
        return f"not an HTTP answer the client can read ({type(exc).__name__}: {text})"
    return None


class KServeClient:
    """Control-plane calls to one KServe v2 server, each bounded by a timeout.

    Use inside a running event loop: ``async with KServeClient(ep) as c: ...``.
    """

    def __init__(self, ep: Endpoint, timeout_s: float = CONTROL_TIMEOUT_S) -> None:
        self.ep = ep
        self.timeout_s = timeout_s
        self._c: Any = None

    async def __aenter__(self) -> KServeClient:
        self._c = make_client(self.ep)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._c is not None:
            try:
                await asyncio.wait_for(self._c.close(), 5.0)
            except Exception:  # noqa: BLE001 - closing is best effort
                pass

    @property
    def grpc(self) -> bool:
        return self.ep.protocol == "grpc"

    async def _call(self, what: str, aw: Awaitable[T], timeout_s: float | None = None) -> T:
        t = timeout_s or self.timeout_s
        try:
            return await asyncio.wait_for(aw, t)
        except asyncio.TimeoutError:
            raise EnvironmentProblem(f"the server at {self.ep.url} did not answer {what} "
                                     f"within {t:g} s", "check that it is up and not "
                                     "overloaded") from None
        except Exception as exc:  # noqa: BLE001 - classified below
            if is_unreachable(exc):
                raise EnvironmentProblem(
                    f"cannot reach a KServe v2 server at {self.ep.url} ({error_text(exc)})",
                    "start the server or correct --url (Triton's HTTP port is 8000, gRPC "
                    "8001 by default)") from None
            if (unreadable := unreadable_answer(exc)) is not None:
                raise EnvironmentProblem(
                    f"the server at {self.ep.url} answered {what} with a bad answer: "
                    f"{unreadable}", "trtcheck reads KServe v2 answers as Triton 2.x gives "
                    "them; check the server (or a proxy in front of it) and its "
                    "version") from None
            raise

    async def server_metadata(self) -> dict[str, Any]:
        """``GET /v2`` (name, version, extensions), plus ``"ready"``: whether
        ``/v2/health/ready`` answered 200.

        A live server that is not ready is not refused here: under Triton's default
        ``--strict-readiness`` one model that failed to load keeps the whole server "not
        ready" while the others serve. :meth:`model_ready` decides for the model measured.

        Raises:
            EnvironmentProblem: unreachable, or not live.
        """
        live = await self._call("the liveness check", self._c.is_server_live())
        if not live:
            # a server that is not live still answers GET /v2; one that does not is no
            # KServe v2 server at all (a web server on that port answers 404 to both)
            kw0 = {"as_json": True} if self.grpc else {}
            try:
                await self._call("its metadata", self._c.get_server_metadata(**kw0))
            except EnvironmentProblem:
                raise
            except Exception as exc:  # noqa: BLE001
                raise EnvironmentProblem(
                    f"the server at {self.ep.url} answers neither /v2/health/live nor GET "
                    f"/v2 as a KServe v2 server does ({error_text(exc)})",
                    "check that the URL is a Triton (KServe v2) endpoint: HTTP on port 8000, "
                    "gRPC on 8001 by default") from None
            raise EnvironmentProblem(f"the server at {self.ep.url} is not live",
                                     "wait until /v2/health/live answers 200, then retry")
        ready = await self._call("the readiness check", self._c.is_server_ready())
        kw = {"as_json": True} if self.grpc else {}
        md = await self._call("its metadata", self._c.get_server_metadata(**kw))
        try:
            md = check_server_metadata(md)
        except BadAnswer as exc:
            raise bad_answer(self.ep.url, "GET /v2", exc) from None
        return {**md, "ready": bool(ready)}

    async def _model_call(self, what: str, name: str, version: str, coro: Awaitable[T]) -> T:
        try:
            return await self._call(what, coro)
        except Exception as exc:  # noqa: BLE001
            if isinstance(exc, (EnvironmentProblem, InputError)):
                raise
            text = error_text(exc)
            low = text.lower()
            ver = f" version {version}" if version else ""
            if "unknown model" in low or "not found" in low or "no version" in low \
                    or "unknown version" in low or "is not found" in low:
                entry = await self._repository_entry(name, version)
                if entry is not None:  # in the repository, but not loaded
                    raise self._not_loaded(name, version, entry, text) from None
                if version and (versions := await self._versions_of(name)):
                    raise InputError(f"the server at {self.ep.url} has no version {version} "
                                     f"of model {name!r} ({text})",
                                     "give --model-version " + ("one of " if len(versions) > 1 else "")
                                     + ", ".join(versions) + " "
                                     "(or leave it out for the server's default)") from None
                raise InputError(f"the server at {self.ep.url} has no model "
                                 f"{name!r}{ver} ({text})",
                                 await self._models_hint()) from None
            if "not ready" in low or "unavailable" in low or "is not loaded" in low:
                raise EnvironmentProblem(f"model {name!r}{ver} is not ready on "
                                         f"{self.ep.url} ({text})",
                                         "load it (POST /v2/repository/models/NAME/load) "
                                         "or wait until it is ready") from None
            raise EnvironmentProblem(f"the server at {self.ep.url} refused {what} of "
                                     f"{name!r}: {text}", "check the server log") from None

    async def _repository(self) -> list[dict[str, Any]]:
        """The model-repository index (``[]`` when the server has none or refuses)."""
        try:
            if self.grpc:
                idx = await asyncio.wait_for(
                    self._c.get_model_repository_index(as_json=True), 3.0)
                models = idx.get("models", []) if isinstance(idx, dict) else []
            else:
                models = await asyncio.wait_for(self._c.get_model_repository_index(), 3.0)
            # an index entry trtcheck reads is an object with text fields
            return [m for m in (models if isinstance(models, list) else [])
                    if isinstance(m, dict) and all(isinstance(m.get(k, ""), str)
                                                   for k in ("name", "version", "state",
                                                             "reason"))][:4096]
        except Exception:  # noqa: BLE001 - best effort (an optional extension)
            return []

    async def _repository_entry(self, name: str, version: str) -> dict[str, Any] | None:
        """The repository-index entry of ``name`` (``name``, and ``version``, ``state``,
        ``reason`` where the server gives them), ``None`` when the index does not list it
        (or that version)."""
        for m in await self._repository():
            if m.get("name") == name and (not version or str(m.get("version", "")) in
                                          ("", version)):
                return dict(m)
        return None

    def _not_loaded(self, name: str, version: str, entry: dict[str, Any],
                    server_text: str) -> EnvironmentProblem:
        """The one-line error for a model the repository lists but the server does not
        serve: a load that failed (state ``UNAVAILABLE`` with a reason other than
        ``unloaded``) names the server's reason; otherwise it says how to load it."""
        ver = f" version {version}" if version else ""
        reason = str(entry.get("reason", "") or "").strip()
        from urllib.parse import quote

        path = f"/v2/repository/models/{quote(name, safe='')}/load"
        how = (f"gRPC RepositoryModelLoad, or POST {path} on its HTTP port" if self.grpc
               else f"POST {self.ep.url.rstrip('/')}{path}")
        load_hint = (f"load it ({how}) or start the server with it "
                     f"(tritonserver --load-model={name})")
        if reason and reason.lower() != "unloaded":
            return EnvironmentProblem(
                f"model {name!r}{ver} is in the server's repository but failed to load "
                f"({reason})", "fix the model (see the server log), then " + load_hint)
        return EnvironmentProblem(f"model {name!r}{ver} is in the server's repository but "
                                  "not loaded", f"{load_hint} (server: {server_text})")

    async def _versions_of(self, name: str) -> list[str]:
        """The versions the server serves of ``name`` (model metadata ``versions``), else
        those its repository index lists; ``[]`` when it has no such model."""
        kw = {"as_json": True} if self.grpc else {}
        try:
            md = await asyncio.wait_for(self._c.get_model_metadata(name, "", **kw), 3.0)
            versions = [str(v) for v in dict(md).get("versions", [])]
        except Exception:  # noqa: BLE001 - best effort, for a hint
            versions = []
        if not versions:
            versions = [str(m["version"]) for m in await self._repository()
                        if m.get("name") == name and m.get("version")]
        return sorted(set(versions), key=lambda v: (len(v), v))

    async def _models_hint(self) -> str:
        names = sorted({m.get("name", "") for m in await self._repository() if m.get("name")})
        if names:
            shown = ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")
            return f"give --model one of the server's models: {shown}"
        return "give --model a model the server serves (see its model repository)"

    async def model_ready(self, name: str, version: str = "") -> None:
        """Check the model is known and ready.

        Raises:
            InputError: no such model/version; EnvironmentProblem: not ready.
        """
        await self.model_metadata(name, version)  # unknown model -> InputError
        ready = await self._model_call("the readiness check", name, version,
                                       self._c.is_model_ready(name, version))
        if not ready:
            ver = f" version {version}" if version else ""
            raise EnvironmentProblem(f"model {name!r}{ver} is not ready on {self.ep.url}",
                                     "load it (POST /v2/repository/models/NAME/load) or "
                                     "wait until it is ready")

    async def model_metadata(self, name: str, version: str = "") -> dict[str, Any]:
        """Model metadata (``name``, ``versions``, ``platform``, ``inputs``, ``outputs``
        with int ``shape`` lists, -1 for a variable dimension)."""
        kw = {"as_json": True} if self.grpc else {}
        md = await self._model_call("the metadata", name, version,
                                    self._c.get_model_metadata(name, version, **kw))
        try:
            return check_model_metadata(md)
        except BadAnswer as exc:
            raise bad_answer(self.ep.url, f"GET {_model_path(name, version)}", exc) from None

    async def model_config(self, name: str, version: str = "") -> dict[str, Any]:
        """Triton's model configuration as JSON (``/v2/models/NAME/config``); ``{}`` from
        a server without Triton's configuration extension."""
        kw = {"as_json": True} if self.grpc else {}
        try:
            cfg = await self._model_call("the configuration", name, version,
                                         self._c.get_model_config(name, version, **kw))
        except EnvironmentProblem as exc:
            # an error status: no configuration extension (KServe without Triton's)
            if exc.message.startswith(f"the server at {self.ep.url} refused the "
                                      "configuration"):
                return {}
            raise
        if self.grpc and isinstance(cfg, dict):
            cfg = cfg.get("config", cfg)
        try:
            return check_model_config(cfg)
        except BadAnswer as exc:
            raise bad_answer(self.ep.url, f"GET {_model_path(name, version)}/config",
                             exc) from None

    async def statistics(self, name: str, version: str = "") -> dict[str, Any]:
        """Triton's statistics of the model (``/v2/models/NAME/stats``): the first entry of
        ``model_stats`` (summed over versions when several match), ints for counts/ns.

        Raises:
            EnvironmentProblem: the server has no statistics extension or refused.
        """
        kw = {"as_json": True} if self.grpc else {}
        st = await self._model_call("the statistics", name, version,
                                    self._c.get_inference_statistics(name, version, **kw))
        try:
            entries = check_model_stats(st)
        except BadAnswer as exc:
            raise bad_answer(self.ep.url, f"GET {_model_path(name, version)}/stats",
                             exc) from None
        if not entries:
            raise EnvironmentProblem(f"the server at {self.ep.url} returned no statistics "
                                     f"for {name!r}", "trtcheck reads Triton's statistics "
                                     "extension (/v2/models/NAME/stats)")
        return entries[0] if len(entries) == 1 else _sum_stats(entries)

    async def load_model(self, name: str, config: dict[str, Any]) -> None:
        """Load (or reload) ``name`` with this configuration override (Triton's
        model-repository extension). Blocks until the server answers.

        Waits at most :data:`LOAD_TIMEOUT_S` plus :data:`WARMUP_ENTRY_TIMEOUT_S` per
        ``model_warmup`` entry of ``config``.

        Raises:
            InputError: the server refuses loads (not ``--model-control-mode=explicit``)
                or rejects the configuration.
        """
        warmups = config.get("model_warmup") if isinstance(config, dict) else None
        timeout_s = LOAD_TIMEOUT_S + WARMUP_ENTRY_TIMEOUT_S * (
            len(warmups) if isinstance(warmups, list) else 0)
        try:
            await self._call("the model load", self._c.load_model(
                name, config=json.dumps(config)), timeout_s)
        except (EnvironmentProblem, InputError):
            raise
        except Exception as exc:  # noqa: BLE001
            text = error_text(exc)
            low = text.lower()
            if "explicit" in low or "not allowed" in low or "polling" in low \
                    or "unsupported" in low or "not supported" in low:
                raise InputError(
                    f"the server at {self.ep.url} refuses to load models ({text})",
                    "start tritonserver with --model-control-mode=explicit to sweep "
                    "--window-ms/--max-batch/--instances/--preferred-batch, or drop them to "
                    "measure the model as loaded") from None
            raise InputError(f"the server could not load {name!r} with the configuration "
                             f"override ({text})", "check the swept values against the "
                             "model (max batch, preferred sizes, instances)") from None


def _sum_stats(entries: list[dict[str, Any]]) -> dict[str, Any]:
    out = json.loads(json.dumps(entries[0]))
    for e in entries[1:]:
        for k in ("inference_count", "execution_count"):
            out[k] = out.get(k, 0) + e.get(k, 0)
        for k, v in e.get("inference_stats", {}).items():
            d = out.setdefault("inference_stats", {}).setdefault(k, {"count": 0, "ns": 0})
            d["count"] = d.get("count", 0) + v.get("count", 0)
            d["ns"] = d.get("ns", 0) + v.get("ns", 0)
        by = {b["batch_size"]: b for b in out.get("batch_stats", [])}
        for b in e.get("batch_stats", []):
            if b["batch_size"] not in by:
                by[b["batch_size"]] = b
                continue
            for k in ("compute_input", "compute_infer", "compute_output"):
                d = by[b["batch_size"]].setdefault(k, {"count": 0, "ns": 0})
                d["count"] = d.get("count", 0) + b.get(k, {}).get("count", 0)
                d["ns"] = d.get("ns", 0) + b.get(k, {}).get("ns", 0)
        out["batch_stats"] = [by[k] for k in sorted(by)]
    return out
