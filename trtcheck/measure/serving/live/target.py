"""Live targets: the servers ``serve --url`` measures, registered by protocol.

A live target is reached at one :class:`~trtcheck.measure.serving.live.kserve.Endpoint`,
parsed once from ``--url`` (and ``--protocol``) by :func:`parse_endpoint` and passed down
whole. What a target offers is the :class:`Target` protocol: server and model metadata,
the model's configuration and an optional configuration override (a sweep loads the
model once per configuration), the server's statistics, and the requests of the load.
Each protocol is one :class:`TargetKind` in :data:`TARGETS`, chosen by ``--protocol`` or,
without it, by the URL's scheme.

Adding a live target: a module with the :class:`Target` implementation (control plane)
and the load of one load process (``send``), and one :class:`TargetKind` in
:data:`TARGETS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from trtcheck.errors import InputError
from trtcheck.measure.serving.live.kserve import Endpoint


class Target(Protocol):
    """One live server at one endpoint, used inside a running event loop
    (``async with target: ...``). Every call is bounded in time and raises a trtcheck
    error (:class:`~trtcheck.errors.InputError` for a bad model or request,
    :class:`~trtcheck.errors.EnvironmentProblem` for a server that does not answer)."""

    ep: Endpoint

    async def __aenter__(self) -> Target: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def server_metadata(self) -> dict[str, Any]:
        """The server's name, version, extensions and readiness (``"ready"``)."""
        ...

    async def model_ready(self, name: str, version: str = "") -> None:
        """Return when the model (version ``""``: the server's choice) is ready; raise
        otherwise."""
        ...

    async def model_metadata(self, name: str, version: str = "") -> dict[str, Any]:
        """The model's inputs and outputs (names, datatypes, shapes) and platform."""
        ...

    async def model_config(self, name: str, version: str = "") -> dict[str, Any]:
        """The model's serving configuration as JSON (Triton's model configuration)."""
        ...

    async def statistics(self, name: str, version: str = "") -> dict[str, Any]:
        """The server's cumulative statistics of the model (counts, durations in ns)."""
        ...

    async def load_model(self, name: str, config: dict[str, Any]) -> None:
        """Load the model with ``config`` (the optional configuration override): raise
        :class:`~trtcheck.errors.InputError` when the server refuses overrides."""
        ...


@dataclass(frozen=True)
class TargetKind:
    """One registered live-target protocol.

    Attributes:
        protocol: the ``--protocol`` name (and ``LiveTarget.protocol`` in results).
        schemes: the URL schemes that choose it without ``--protocol``.
        description: what it speaks, for messages and ``--help``.
        parse: ``"module:function"``, ``function(url) -> Endpoint`` (raises InputError).
        control: ``"module:class"``, ``class(endpoint) -> Target``.
        send: ``"module:function"``, ``async function(job, ready, wait_go, start_at=None)
            -> LoadResult``: the requests of one load process (warm-up, then the load
            shape), run in each load generator process; ``start_at()`` (called after
            go) is the common start its schedule is anchored to, or ``None``.
        check: ``"module:function"``, ``function(protocol)``: raises
            :class:`~trtcheck.errors.EnvironmentProblem` when the client library is missing.
    """

    protocol: str
    schemes: tuple[str, ...]
    description: str
    parse: str
    control: str
    send: str
    check: str

    def resolve(self, attr: str) -> Any:
        """The object named by the attribute ``attr`` (``"parse"``, ``"control"``...)."""
        module, _, name = str(getattr(self, attr)).partition(":")
        return getattr(importlib.import_module(module), name)


_KSERVE = "trtcheck.measure.serving.live.kserve"
_LIVE = "trtcheck.measure.serving.live.live"
#: protocol name -> its registration (KServe v2 over HTTP and over gRPC)
TARGETS: dict[str, TargetKind] = {
    "http": TargetKind("http", ("http",), "KServe v2 over HTTP", f"{_KSERVE}:parse_url",
                       f"{_KSERVE}:KServeClient", f"{_LIVE}:run_job",
                       f"{_KSERVE}:import_client"),
    "grpc": TargetKind("grpc", ("grpc",), "KServe v2 over gRPC", f"{_KSERVE}:parse_url",
                       f"{_KSERVE}:KServeClient", f"{_LIVE}:run_job",
                       f"{_KSERVE}:import_client"),
}


def target_kind(protocol: str) -> TargetKind:
    """The registration of ``protocol``.

    Raises:
        InputError: no target speaks it.
    """
    kind = TARGETS.get(protocol)
    if kind is None:
        raise InputError(f"no live target speaks {protocol!r}",
                         f"choose --protocol from: {', '.join(TARGETS)}")
    return kind


def parse_endpoint(url: str, protocol: str | None = None) -> Endpoint:
    """Parse ``--url`` once, for ``--protocol`` (``None``: chosen by the URL's scheme).

    With ``protocol`` a URL without a scheme takes the protocol's first scheme
    (``--protocol grpc --url 127.0.0.1:8001``); a URL of another protocol's scheme is
    refused.

    Raises:
        InputError: a bad URL (as the protocol's parser says), an unknown protocol, or a
            scheme that contradicts ``--protocol`` (exit 2).
    """
    if protocol is None:
        scheme = url.strip().partition("://")[0].lower() if "://" in url else ""
        kind = next((k for k in TARGETS.values() if scheme in k.schemes), None)
        parse: Callable[[str], Endpoint] = (kind or TARGETS["http"]).resolve("parse")
        return parse(url)  # an unknown scheme: the parser's own message
    kind = target_kind(protocol)
    text = url.strip()
    if "://" not in text:
        text = f"{kind.schemes[0]}://{text}"
    scheme = text.partition("://")[0].lower()
    if scheme not in kind.schemes:
        raise InputError(f"--url {url!r} is a {scheme}:// URL; --protocol {protocol} "
                         f"({kind.description}) takes "
                         + " or ".join(f"{s}://" for s in kind.schemes),
                         f"give --url {kind.schemes[0]}://HOST:PORT, or drop --protocol")
    parse = kind.resolve("parse")
    ep = parse(text)
    return Endpoint(url=url.strip(), protocol=kind.protocol, address=ep.address)


def open_target(ep: Endpoint) -> Target:
    """The control-plane client of ``ep``'s protocol (``async with open_target(ep) as t``)."""
    target: Target = target_kind(ep.protocol).resolve("control")(ep)
    return target


def check_target_client(ep: Endpoint) -> None:
    """Raise :class:`~trtcheck.errors.EnvironmentProblem` (exit 3) when the client library
    of ``ep``'s protocol is missing, before any work."""
    target_kind(ep.protocol).resolve("check")(ep.protocol)
