"""Records of a load spread over a Ray cluster (``trtcheck serve --url ... --ray``).

One arrival schedule is split by arrival index across N Ray actors on different nodes
(:mod:`trtcheck.measure.serving.live.distributed`). Each repeat of such a run keeps, beside the merged
per-request data of every kept share, one :class:`LoadNodeShare` per actor: where it ran,
what it sent, how late, its clock offset against the driver, and whether its share was
lost (the actor or its node died, or it did not answer in time). :class:`DistributedLoad`
sums them; its totals are checked to equal the sums over the shares.

Clock figures: ``clock_offset_ms`` is the node's wall clock minus the driver's, measured
over Ray round trips (the sample with the shortest round trip; ``clock_offset_error_ms``
is half that round trip, the bound of the estimate). Every actor starts sending at one
common epoch (the driver's clock, converted to each node's with its offset);
``start_skew_ms`` is how late the actor's own load run began after that epoch on its
clock; its schedule is anchored to the epoch all the same, so a late start shows as
late sends of its first arrivals, not as a shifted share.
"""

from __future__ import annotations

from pydantic import model_validator

from trtcheck.results.base import Record


class LoadNodeShare(Record):
    """One actor's share of one run.

    Attributes:
        actor: 0-based actor index; its share is arrivals ``actor, actor + N, ...`` of
            the schedule (open loop), or its part of a burst's count / a closed loop's
            clients.
        node_id: the Ray node id; node_ip: the node's IP address; hostname: its host name.
        scheduled_requests: requests the share was to send (an unbounded closed loop:
            those it sent).
        sent_requests, ok_requests, error_requests, timeout_requests, not_sent_requests:
            its outcomes (``0`` for a lost share, whose record did not come back).
        lost: whether the share's record was lost; lost_requests: its
            ``scheduled_requests`` then, else 0; lost_reason: why (one line).
        late_sends: open loop: sends later than the late threshold.
        send_lag_p50_ms, send_lag_p99_ms: open loop: send lag of its sent requests.
        achieved_send_rate_per_s: open loop: (sent - 1) / (last send - first send).
        p50_ms, p99_ms: latency of its ok requests (open loop: from the schedule).
        load_cpu_share: CPU seconds of its load thread / wall seconds of its run (near
            1.0: the sender used a whole core and was likely the limit).
        clock_offset_ms, clock_offset_error_ms: node wall clock - driver wall clock, and
            the bound of that estimate (half the shortest round trip).
        start_skew_ms: the actor's run start - the common epoch, on its own clock.
        trtcheck_version: the trtcheck the node imported.
    """

    actor: int
    node_id: str
    node_ip: str = ""
    hostname: str = ""
    scheduled_requests: int
    sent_requests: int = 0
    ok_requests: int = 0
    error_requests: int = 0
    timeout_requests: int = 0
    not_sent_requests: int = 0
    lost: bool = False
    lost_requests: int = 0
    lost_reason: str | None = None
    late_sends: int = 0
    send_lag_p50_ms: float | None = None
    send_lag_p99_ms: float | None = None
    achieved_send_rate_per_s: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    load_cpu_share: float | None = None
    clock_offset_ms: float | None = None
    clock_offset_error_ms: float | None = None
    start_skew_ms: float | None = None
    trtcheck_version: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> LoadNodeShare:
        """Outcomes add up to the sent requests; a lost share counts its scheduled
        requests as lost and nothing else."""
        done = self.ok_requests + self.error_requests + self.timeout_requests
        if done != self.sent_requests:
            raise ValueError(f"actor {self.actor}: ok + error + timeout = {done}, but "
                             f"{self.sent_requests} sent")
        if self.lost:
            if self.sent_requests or self.not_sent_requests:
                raise ValueError(f"actor {self.actor}: a lost share has no outcomes")
            if self.lost_requests != self.scheduled_requests:
                raise ValueError(f"actor {self.actor}: a lost share loses its "
                                 f"{self.scheduled_requests} scheduled requests")
        elif self.lost_requests:
            raise ValueError(f"actor {self.actor}: lost_requests without lost")
        return self


class DistributedLoad(Record):
    """One run's load over a Ray cluster: every actor's share and the totals.

    Attributes:
        ray_address: the cluster address given (``auto`` or ``HOST:PORT``).
        actors: actors the run's schedule was split across.
        nodes: one :class:`LoadNodeShare` per actor, in actor order.
        distinct_nodes: Ray nodes the actors ran on.
        scheduled_requests, sent_requests, ok_requests, lost_requests, late_sends: sums
            over ``nodes`` (checked).
        max_clock_offset_error_ms: the largest clock-offset bound of the actors that
            started: how far apart their schedules may be at most.
    """

    ray_address: str
    actors: int
    nodes: list[LoadNodeShare]
    distinct_nodes: int
    scheduled_requests: int
    sent_requests: int
    ok_requests: int
    lost_requests: int
    late_sends: int
    max_clock_offset_error_ms: float | None = None

    @model_validator(mode="after")
    def _sums(self) -> DistributedLoad:
        """The totals are the sums over the actors' shares."""
        for name in ("scheduled_requests", "sent_requests", "ok_requests",
                     "lost_requests", "late_sends"):
            total = sum(getattr(n, name) for n in self.nodes)
            if total != getattr(self, name):
                raise ValueError(f"{name} is {getattr(self, name)} but the actors' shares "
                                 f"sum to {total}")
        if len(self.nodes) != self.actors:
            raise ValueError(f"{self.actors} actors but {len(self.nodes)} shares")
        return self
