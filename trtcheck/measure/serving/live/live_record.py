"""The record of one live run (``trtcheck serve --url``), folded in as each request ends,
in bounded memory: each load process keeps one :class:`LiveRunRecord` (its requests'
latencies and send lags in :class:`trtcheck.measure.serving.request_record.RequestReservoir`,
counts and error kinds), sends it back to the measuring process, which merges them
(:meth:`LiveRunRecord.merge`). A run of 10^6 requests then holds a few MB in each
process instead of its per-request lists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from trtcheck.measure.serving.loadgen import ERROR, NOT_SENT, OK, OUTCOMES
from trtcheck.measure.serving.request_record import RequestReservoir

#: Series of an ok request: its number, latency (open loop from its scheduled send,
#: else from its send), send lag, client time from its actual send, send time (s).
OK_SERIES = ("index", "latency_ms", "send_lag_ms", "client_ms", "t_send_s")


@dataclass
class LiveRunRecord:
    """Counts and bounded per-request values of one live run (or one process's share).

    Attributes:
        open_loop: latencies from the scheduled send.
        late_threshold_ms: a send later than this is late.
        ok: ok requests' values (:data:`OK_SERIES`).
        lags: every sent request's ``index`` and ``send_lag_ms`` (open loop).
        outcomes: outcome -> count (``not_sent`` included once the run ends).
        errors: error kind (``"HTTP 500"``, ``"ConnectionError"``...) -> count.
        sent, late: requests sent; open loop: sent later than the threshold.
        first: earliest start (scheduled send for an open loop, else send), perf_counter s.
        send_lo, send_hi: first and last actual send; last_ok_end: last ok answer.
        t_start, t_stop_sending, t_done: the run's own times (perf_counter s;
            ``t_start`` is the start its schedule is anchored to).
        t_began: when its load loop began (perf_counter s): ``t_start`` unless the run
            was given a start (a distributed run's common epoch), then
            ``t_began - t_start`` is how late it began.
        start_late_s: how late each load process's run began after the start its
            schedule is anchored to (``t_began - t_start``, s; one per process, in merge
            order): 0 for a run that starts when it begins (one local process).
    """

    open_loop: bool
    late_threshold_ms: float
    capacity: int | None = None
    ok: RequestReservoir = field(init=False)
    lags: RequestReservoir = field(init=False)
    outcomes: dict[str, int] = field(default_factory=lambda: {o: 0 for o in OUTCOMES})
    errors: dict[str, int] = field(default_factory=dict)
    sent: int = 0
    late: int = 0
    first: float = math.inf
    send_lo: float = math.inf
    send_hi: float = -math.inf
    last_ok_end: float = -math.inf
    t_start: float = 0.0
    t_stop_sending: float = 0.0
    t_done: float = 0.0
    t_began: float = 0.0
    start_late_s: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        from trtcheck.measure.serving.serve import MAX_RAW_REQUESTS

        cap = MAX_RAW_REQUESTS if self.capacity is None else self.capacity
        self.ok = RequestReservoir(OK_SERIES, cap)
        self.lags = RequestReservoir(("index", "send_lag_ms"), cap)

    def on_end(self, i: int, t_sched: float, t_send: float, t_end: float, outcome: str,
               error: str) -> None:
        """One request ended (``run_load``'s ``on_end``; ``error``: its kind)."""
        if outcome == NOT_SENT:
            return
        self.outcomes[outcome] += 1
        self.sent += 1
        start = t_sched if self.open_loop else t_send
        self.first = min(self.first, start)
        self.send_lo = min(self.send_lo, t_send)
        self.send_hi = max(self.send_hi, t_send)
        if error and outcome == ERROR:
            self.errors[error] = self.errors.get(error, 0) + 1
        lag = (t_send - t_sched) * 1e3
        if self.open_loop:
            self.lags.add((float(i), lag))
            self.late += lag > self.late_threshold_ms
        if outcome == OK:
            self.last_ok_end = max(self.last_ok_end, t_end)
            self.ok.add((float(i), (t_end - start) * 1e3, lag, (t_end - t_send) * 1e3,
                         t_send))

    def merge(self, other: LiveRunRecord) -> None:
        """Fold in another process's record of the same run."""
        self.ok.merge(other.ok)
        self.lags.merge(other.lags)
        for k, v in other.outcomes.items():
            self.outcomes[k] = self.outcomes.get(k, 0) + v
        for k, v in other.errors.items():
            self.errors[k] = self.errors.get(k, 0) + v
        self.sent += other.sent
        self.late += other.late
        self.first = min(self.first, other.first)
        self.send_lo = min(self.send_lo, other.send_lo)
        self.send_hi = max(self.send_hi, other.send_hi)
        self.last_ok_end = max(self.last_ok_end, other.last_ok_end)
        self.t_start = min(self.t_start, other.t_start)
        self.t_began = min(self.t_began, other.t_began)
        self.start_late_s.extend(other.start_late_s)
        self.t_stop_sending = max(self.t_stop_sending, other.t_stop_sending)
        self.t_done = max(self.t_done, other.t_done)

    def shift(self, by_s: float) -> None:
        """Move every time of the record by ``-by_s`` (a load node's clock onto the
        driver's epoch); latencies and lags are durations and stay as they are."""
        for attr in ("first", "send_lo", "send_hi", "last_ok_end", "t_start",
                     "t_stop_sending", "t_done", "t_began"):
            v = getattr(self, attr)
            if math.isfinite(v):
                setattr(self, attr, v - by_s)
        self.ok.shift("t_send_s", by_s)
