"""``--ray ADDRESS|auto`` and ``--ray-actors N``: a live target's load from a Ray cluster.

Shared by the commands that drive a live server (``serve --url``, ``tune``): :func:`ray_options`
adds the two options, :func:`check_ray_options` refuses them where they do not apply
and checks that Ray is installed before any work, :func:`ray_load` gives the connected
:class:`trtcheck.measure.serving.live.distributed.RayLoad` (or ``None``) to pass to
``measure_live(distributed=...)``. Nothing here imports Ray; only a given ``--ray`` does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

#: Most ``--ray-actors`` (:data:`trtcheck.measure.serving.live.distributed.MAX_RAY_ACTORS`).
MAX_RAY_ACTORS = 256


def ray_options(f: F) -> F:
    """Add ``--ray`` (``ray_address``) and ``--ray-actors`` (``ray_actors``) to a command."""
    f = click.option("--ray-actors", "ray_actors", type=click.IntRange(1, MAX_RAY_ACTORS),
                     default=None, metavar="N",
                     help="With --ray: load actors, one per node while there are nodes "
                          "enough (SPREAD placement), 1 CPU each.  [default: one per "
                          "alive node]")(f)
    f = click.option("--ray", "ray_address", default=None, metavar="ADDRESS|auto",
                     help="With --url: split the load's arrival schedule across Ray "
                          "actors on the nodes of this Ray cluster (auto: the cluster "
                          "this machine belongs to; HOST:PORT: its head), all starting "
                          "at one epoch; per-node figures in the results (extra "
                          "'ray').")(f)
    return f


def check_ray_options(ray_address: str | None, ray_actors: int | None, *, live: bool,
                      client_processes_given: bool) -> None:
    """Refuse ``--ray``/``--ray-actors`` where they do not apply; with ``--ray``, check
    that Ray is installed (before any work).

    Raises:
        UsageError: ``--ray-actors`` without ``--ray``; ``--ray`` without ``--url``;
            ``--ray`` with ``--client-processes``; an address that is neither ``auto``,
            ``HOST:PORT`` nor a ``ray://`` URL (``local`` too: it joins no cluster)
            (exit 2).
        EnvironmentProblem: Ray is not installed (exit 3).
    """
    from trtcheck.errors import UsageError

    if ray_address is None:
        if ray_actors is not None:
            raise UsageError("--ray-actors needs --ray", "add --ray auto (or HOST:PORT)")
        return
    if not live:
        raise UsageError("--ray drives a live server's load", "add --url URL --model NAME")
    addr = ray_address.strip()
    if not addr:
        raise UsageError("--ray is empty", "give --ray auto or --ray HOST:PORT")
    if addr == "local":
        raise UsageError("--ray local would start a private one-node Ray here instead of "
                         "joining a cluster", "give --ray auto on a node of the cluster, "
                         "or --ray HOST:PORT of its head")
    if addr != "auto" and "://" not in addr:
        host, sep, port = addr.rpartition(":")
        if not (sep and host and port.isdigit() and 0 < int(port) < 65536):
            raise UsageError(f"--ray {addr!r} is neither auto nor HOST:PORT",
                             "give the head's address with its port, e.g. --ray "
                             "10.0.0.5:6379 (ray start --head prints it)")
    if client_processes_given:
        raise UsageError("--client-processes is for one machine; with --ray the load is "
                         "split across Ray actors", "give --ray-actors N instead")
    from trtcheck.measure.serving.live import import_ray

    import_ray()


@contextlib.contextmanager
def ray_load(ray_address: str | None, ray_actors: int | None,
             progress: Callable[[str], None] | None) -> Iterator[Any]:
    """The connected :class:`~trtcheck.measure.serving.live.distributed.RayLoad` (``None`` without
    ``--ray``); its actors are killed and the driver disconnects on exit."""
    if ray_address is None:
        yield None
        return
    from trtcheck.measure.serving.live import RayLoad

    with RayLoad(ray_address.strip(), ray_actors, progress=progress) as rl:
        yield rl
