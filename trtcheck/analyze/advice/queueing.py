"""Closed-form rules for dynamic batching: break-even, queue formation, window fill,
natural batch, stability, capacity.

Notation (units in every name in code):

* ``rate_per_s`` = lambda, arrival rate in requests per second (> 0);
* ``T(b)`` batch execution time in ms, with the linear model ``T(b) = tau0 + alpha*b``
  (:func:`trtcheck.analyze.advice.curve.fit_linear`);
* ``W`` the batching window (Triton ``max_queue_delay_microseconds``), in ms here;
* ``B`` the max batch size.

Each function names its source and its assumptions. These formulas explain and bound;
the discrete-event simulator (:mod:`trtcheck.analyze.advice.simulator`) gives the numbers the
advice is built on, because none of them captures the full queue (variance, window
timers, several instances) at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trtcheck.errors import InputError


def check_rate(rate_per_s: float) -> None:
    """Check an arrival rate (requests/s): finite and positive.

    Raises:
        InputError: any other value."""
    if not (isinstance(rate_per_s, (int, float)) and math.isfinite(rate_per_s)
            and rate_per_s > 0):
        raise InputError(f"arrival rate must be a positive number of requests per second, "
                         f"got {rate_per_s!r}", "e.g. --arrival-rate 200")


@dataclass(frozen=True)
class BreakEven:
    """Outcome of a break-even test: time saved vs time added, per batch, in ms."""

    saved_ms: float
    added_ms: float

    @property
    def pays(self) -> bool:
        """Whether the time saved exceeds the time added."""
        return self.saved_ms > self.added_ms

    @property
    def ratio(self) -> float:
        """``added / saved`` (how many times the cost exceeds the gain; inf if saved = 0)."""
        return self.added_ms / self.saved_ms if self.saved_ms > 0 else math.inf


def break_even_optimistic(batch_size: float, t_infer_ms: float, window_ms: float,
                    per_batch_overhead_ms: float = 0.0) -> BreakEven:
    """The break-even rule: batching pays only if
    ``batch_size * t_infer > window + fixed_per_batch_overhead``.

    Left side: the inference time a batch
    of ``batch_size`` could at most save (as if the batch cost no more than one request);
    right side: the time the batch adds (the window it waited and a fixed per-batch
    cost). Assumes the whole saving materialises, so it is optimistic for batching: a
    ``False`` here is conclusive, a ``True`` is necessary, not sufficient.
    Example (ResNet-18 at batch 3.34, T(1) 0.29 ms): 3.34 x 0.29 ms = 0.97 ms saved vs a
    100 ms window.
    """
    return BreakEven(saved_ms=batch_size * t_infer_ms,
                     added_ms=window_ms + per_batch_overhead_ms)


def break_even_sharp(batch_size: int, t1_ms: float, tb_ms: float, window_ms: float,
                     per_batch_overhead_ms: float = 0.0) -> BreakEven:
    """Sharper break-even: ``b * T(1) > W + T(b) (+ per-batch overhead)``.

    Serving ``b`` requests one at a time keeps an instance busy ``b*T(1)``; batching them
    costs the window the first one waited plus one execution ``T(b)``. With the linear
    model this is ``(b - 1) * tau0 > W``: a window pays only while it is shorter than the
    fixed cost the extra ``b - 1`` requests avoid. Derived here from
    :func:`break_even_optimistic` by charging the batch its real execution time ``T(b)``
    instead of assuming it free.
    Assumes the instance would otherwise be busy serving those requests (a backlog);
    with an idle instance nothing is saved at all.
    """
    return BreakEven(saved_ms=batch_size * t1_ms,
                     added_ms=window_ms + tb_ms + per_batch_overhead_ms)


def max_paying_window_ms(batch_size: int, tau0_ms: float) -> float:
    """Longest window that the sharp rule allows for a batch of ``b``: ``(b-1)*tau0`` ms."""
    return max(batch_size - 1, 0) * tau0_ms


def waiting_pays_index(rate_per_s: float, tau0_ms: float) -> float:
    """``lambda * tau0``: a window pays only when this exceeds 1.

    In a window ``W`` about ``lambda*W`` more requests arrive (Poisson mean), so
    ``b - 1 ~ lambda*W``; put into the sharp rule ``(b-1)*tau0 > W`` this gives
    ``lambda*W*tau0 > W``, i.e. ``lambda*tau0 > 1``, whatever ``W`` is. Source: the
    sharp rule above with the Poisson mean count of arrivals in ``W``. Assumes the
    window is not cut short by ``max_batch_size``.
    """
    check_rate(rate_per_s)
    return rate_per_s * tau0_ms / 1000.0


def queue_formation_ratio(t_infer_ms: float, rate_per_s: float) -> float:
    """Seed notes' queue-formation ratio ``t_infer / t_gap`` with ``t_gap = 1/lambda``.

    >> 1: a queue forms by itself and batching has something to collect; << 1: the queue
    holds one request and batching only adds latency; ~ 1: little to gain. Source: the
    M/D/1 queue's utilisation at batch 1. It equals the batch-1 utilisation ``rho`` of one instance.
    """
    check_rate(rate_per_s)
    return t_infer_ms * rate_per_s / 1000.0


def single_request_batch_share(rate_per_s: float, window_ms: float) -> float:
    """Share of windows that close with a single request: ``exp(-lambda * W)``.

    For Poisson arrivals, the probability that no further request arrives within ``W``
    after the one that opened the window (the Poisson probability of zero events in an
    interval of length ``W``). Assumes the window opens on an arrival into an empty
    queue at an idle instance (light load); under backlog batches form regardless.
    """
    check_rate(rate_per_s)
    if window_ms < 0:
        raise InputError(f"window must be >= 0 ms, got {window_ms}")
    return math.exp(-rate_per_s * window_ms / 1000.0)


def expected_window_batch(rate_per_s: float, window_ms: float, max_batch_size: int) -> float:
    """Mean batch of a window opened at an idle instance: ``min(1 + lambda*W, B)``.

    The opener plus the Poisson mean ``lambda*W`` arrivals in the window, capped by the
    max batch (a first-order estimate; the cap is applied to the mean, not per window).
    """
    check_rate(rate_per_s)
    return min(1.0 + rate_per_s * window_ms / 1000.0, float(max_batch_size))


def natural_batch_no_wait(rate_per_s: float, tau0_ms: float, alpha_ms: float) -> float:
    """Mean batch that forms with no window under sustained load: ``b* = lambda*tau0 /
    (1 - lambda*alpha)``.

    A free instance takes what arrived while it ran the previous batch: ``b = lambda *
    T(b) = lambda*(tau0 + alpha*b)``; solved for ``b``. Fixed-point (fluid) approximation
    of a saturated batch server, valid when it gives ``b >= 1`` (below 1 the queue is
    mostly empty and batches are single requests). Source: derived here from the linear
    model; the same balance gives the minimum batch to keep up
    (:func:`min_batch_to_keep_up`).

    Raises:
        InputError: ``lambda*alpha >= 1`` (the per-sample cost alone exceeds the time
            between arrivals: no batch size keeps up).
    """
    check_rate(rate_per_s)
    lam = rate_per_s / 1000.0  # per ms
    if lam * alpha_ms >= 1.0:
        raise InputError(
            f"{rate_per_s:g} req/s exceeds what any batch size can serve on one instance "
            f"(1/alpha = {1000.0 / alpha_ms:.0f} req/s)" if alpha_ms > 0 else
            "arrival rate too high", "add instances")
    return lam * tau0_ms / (1.0 - lam * alpha_ms)


def utilisation(rate_per_instance_per_s: float, tb_ms: float, batch_size: float) -> float:
    """Per-instance utilisation ``rho = lambda * T(b) / b``.

    An instance serving batches of ``b`` completes ``b / T(b)`` requests per ms; the
    queue is stable only if ``rho < 1`` (the standard stability condition of a
    single-server queue, rho < 1; Kleinrock, Queueing Systems vol. 1).
    """
    check_rate(rate_per_instance_per_s)
    return rate_per_instance_per_s * tb_ms / 1000.0 / batch_size


def min_batch_to_keep_up(rate_per_instance_per_s: float, t_of_b, max_batch_size: int) -> int | None:
    """Smallest batch size ``b <= B`` with ``b / T(b) > lambda`` (``rho < 1``), or ``None``.

    Args:
        rate_per_instance_per_s: arrival rate one instance must absorb.
        t_of_b: callable ``b -> T(b)`` in ms (the curve or its fit).
        max_batch_size: ``B``.

    With the linear model this is ``ceil(lambda*tau0 / (1 - lambda*alpha))`` (see
    :func:`natural_batch_no_wait`), found here by search so measured curvature counts.
    """
    check_rate(rate_per_instance_per_s)
    for b in range(1, max_batch_size + 1):
        if b / float(t_of_b(b)) * 1000.0 > rate_per_instance_per_s:
            return b
    return None


def capacity_per_instance_per_s(t_of_b, max_batch_size: int) -> tuple[float, int]:
    """Largest sustainable request rate of one instance with batches up to ``B``.

    Returns:
        ``(max over b <= B of 1000*b/T(b) req/s, the b that gives it)``.
    """
    best, best_b = 0.0, 1
    for b in range(1, max_batch_size + 1):
        c = 1000.0 * b / float(t_of_b(b))
        if c > best * (1 + 1e-12):
            best, best_b = c, b
    return best, best_b


def instances_needed(rate_per_s: float, capacity_per_instance_per_s: float,
                     max_utilisation: float = 1.0) -> int:
    """Fewest instances for ``lambda``: ``ceil(lambda / (capacity * rho_max))``.

    Assumes the load splits evenly and each instance has the full measured curve (one
    GPU each, or a GPU with headroom: several contexts on one saturated GPU share it).
    A lower bound; the latency objective may need more (the simulator decides).
    """
    check_rate(rate_per_s)
    if capacity_per_instance_per_s <= 0 or not 0 < max_utilisation <= 1:
        raise InputError("capacity must be > 0 and max utilisation in (0, 1]")
    return max(1, math.ceil(rate_per_s / (capacity_per_instance_per_s * max_utilisation)
                            - 1e-12))


def md1_mean_wait_ms(rate_per_s: float, service_ms: float) -> float:
    """Mean queueing delay of an M/D/1 queue: ``Wq = rho * S / (2 * (1 - rho))``.

    Pollaczek-Khinchine mean-value formula (Kleinrock, Queueing Systems vol. 1, ch. 5,
    M/G/1) with zero service-time variance. Used to check the simulator with max
    batch 1 and one instance.

    Raises:
        InputError: ``rho >= 1``.
    """
    check_rate(rate_per_s)
    rho = rate_per_s * service_ms / 1000.0
    if rho >= 1:
        raise InputError(f"M/D/1 is unstable at rho = {rho:.3f}")
    return rho * service_ms / (2.0 * (1.0 - rho))
