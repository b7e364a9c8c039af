"""Read trtexec's exported files and turn them into one :class:`EngineInspection`.

Files (trtexec ``--help`` and the TREx helper scripts that wrote the real examples in
``tests/data/trtexec-exports``):

* ``*.graph.json``: ``--exportLayerInfo`` (engine-inspector JSON, see
  :mod:`trtcheck.load.engine_json`);
* ``*.profile.json``: ``--exportProfile``: a list whose first element is
  ``{"count": N}`` (profiled inferences) followed by one
  ``{"name", "timeMs", "averageMs", "medianMs", "percentage"}`` per layer
  (``timeMs`` is the total over the N runs, ``averageMs`` per run);
* ``*.timing.json``: ``--exportTimes``: one record per inference with ``computeMs``,
  ``h2dMs``, ``d2hMs``, ``latencyMs`` and enqueue start/end (``startEnqMs``/``endEnqMs``);
* ``*.metadata.json`` (device properties, a one-element list), ``*.build.metadata.json``
  (build options) and ``*.profile.metadata.json`` (performance summary, inference
  options, device information) from TREx's ``process_engine.py``.

The engine mean comes from ``timing.json`` when present, else from the performance
summary's "GPU Compute Time" list (trtexec's order: min, max, mean, median, then
percentiles). Per-layer profiling runs layers with a sync/event around each one, so the
sum of layer averages exceeds the engine mean; the ratio is reported as
``profiling_overhead_ratio`` (check value on resnet18-a100-fp16: 1.017 ms vs 0.863 ms).
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from trtcheck.errors import InputError
from trtcheck.inspection.engine.engine_json import lint_engine
from trtcheck.load.engine_json import parse_layer_info, summarize
from trtcheck.results.engine import EngineInspection, EngineLayer, EngineTiming
from trtcheck.safe_io import escape_surrogates, read_json_file

KINDS = ("build.metadata", "profile.metadata", "graph", "profile", "timing", "metadata")


def export_kind(p: Path) -> tuple[str, str] | None:
    """``(engine stem, kind)`` for an export file name, else ``None``."""
    name = p.name
    if not name.endswith(".json"):
        return None
    base = name[: -len(".json")]
    for kind in KINDS:
        if base.endswith("." + kind):
            return base[: -len(kind) - 1], kind
    return None


def find_exports(paths: list[str | Path] | str | Path) -> dict[str, Path]:
    """Map export kind -> file from a folder or a list of files of ONE engine.

    Raises:
        InputError: nothing recognisable, or files of several engines in one folder.
    """
    items = [Path(p) for p in (paths if isinstance(paths, list) else [paths])]
    files: list[Path] = []
    for p in items:
        if not p.exists():
            raise InputError(f"not found: {p}", "check the path")
        files.extend(sorted(p.glob("*.json")) if p.is_dir() else [p])
    groups: dict[str, dict[str, Path]] = {}
    if len(items) > 1 and all(p.is_file() for p in items):
        # files named one by one are one export set, whatever their stems (x.graph.json
        # y.profile.json); load_trtexec_export checks that they describe one engine
        for f in files:
            k = export_kind(f)
            if k is None:
                raise InputError(f"{f} is not a trtexec export file",
                                 "expected *.graph.json (--exportLayerInfo), *.profile.json "
                                 "(--exportProfile) or *.timing.json (--exportTimes)")
            prev = groups.setdefault("", {}).get(k[1])
            if prev is not None:
                raise InputError(f"two {k[1]} exports given: {prev} and {f}",
                                 "pass the files of one engine (at most one of each kind)")
            groups[""][k[1]] = f
        return groups[""]
    for f in files:
        k = export_kind(f)
        if k:
            groups.setdefault(k[0], {})[k[1]] = f
    if not groups:
        raise InputError(f"no trtexec export files in {', '.join(map(str, items))}",
                         "expected *.graph.json (--exportLayerInfo), *.profile.json "
                         "(--exportProfile) or *.timing.json (--exportTimes)")
    if len(groups) > 1:
        raise InputError(f"exports of {len(groups)} engines found: {', '.join(sorted(groups))}",
                         "pass the files of one engine (e.g. `trtcheck inspect "
                         "ENGINE.graph.json ENGINE.profile.json`) or a folder holding one")
    return next(iter(groups.values()))


def _read_json(p: Path) -> Any:
    """A trtexec export parsed: invalid UTF-8 bytes and raw control characters in names
    are kept (shown escaped), never a reason to refuse the whole file."""
    return read_json_file(p, "trtexec export", "re-export it with trtexec", lenient_text=True)


def _ms(value: Any, what: str, path: str) -> float:
    """A time field in milliseconds: a finite, non-negative number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{path}: {what} is {_short(value)}, not a time in ms",
                         "re-export it with trtexec")
    try:
        v = float(value)
    except OverflowError:  # an integer beyond the float range
        v = math.inf
    if not math.isfinite(v) or v < 0:
        raise InputError(f"{path}: {what} is {_short(value)}, not a finite time >= 0 ms",
                         "re-export it with trtexec")
    return v


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_profile(doc: Any, path: str = "<profile>") -> tuple[int | None, list[dict[str, Any]]]:
    """``(count, layer records)`` from a ``--exportProfile`` document.

    Each returned record has ``name`` (text, surrogates escaped) and ``averageMs`` (a
    finite float >= 0) checked.

    Raises:
        InputError: not a list of layer-time records, or a record whose name or time has
            the wrong type.
    """
    if not isinstance(doc, list):
        raise InputError(f"{path} is not a trtexec profile (expected a JSON list)",
                         "pass the file written by trtexec --exportProfile")
    count = None
    rows = []
    for item in doc:
        if isinstance(item, dict) and set(item) == {"count"}:
            c = item["count"]
            if isinstance(c, bool) or not isinstance(c, (int, float)) or not (
                    math.isfinite(c) and 0 <= c < 2**63 and float(c).is_integer()):
                raise InputError(f"{path}: count is {_short(c)}, not a number of runs",
                                 "re-export it with trtexec")
            count = int(c)
        elif isinstance(item, dict) and "name" in item and "averageMs" in item:
            name = item["name"]
            if isinstance(name, (dict, list)) or name is None:
                raise InputError(f"{path}: a layer name is {_short(name)}, not text",
                                 "re-export it with trtexec")
            rows.append({**item, "name": escape_surrogates(str(name)),
                         "averageMs": _ms(item["averageMs"], f"averageMs of {name!r}",
                                          path)})
    if not rows:
        raise InputError(f"{path} holds no per-layer times",
                         "pass the file written by trtexec --exportProfile")
    return count, rows


def timing_from_times(doc: Any, path: str = "<timing>") -> EngineTiming:
    """Engine timing (means, median) from a ``--exportTimes`` document.

    Raises:
        InputError: not a list of records with ``computeMs``, or a time field that is
            not a finite number >= 0 (enqueue end before start included).
    """
    if not isinstance(doc, list) or not doc or not all(
            isinstance(r, dict) and "computeMs" in r for r in doc):
        raise InputError(f"{path} is not a trtexec times file",
                         "pass the file written by trtexec --exportTimes")
    comp = [_ms(r["computeMs"], f"record {i} computeMs", path) for i, r in enumerate(doc)]
    enq = [_ms(r["endEnqMs"], f"record {i} endEnqMs", path)
           - _ms(r["startEnqMs"], f"record {i} startEnqMs", path)
           for i, r in enumerate(doc) if "endEnqMs" in r and "startEnqMs" in r]
    if any(e < 0 for e in enq):
        raise InputError(f"{path}: an enqueue ends before it starts (endEnqMs < startEnqMs)",
                         "re-export it with trtexec")
    h2d = [_ms(r.get("h2dMs", 0), f"record {i} h2dMs", path) for i, r in enumerate(doc)]
    d2h = [_ms(r.get("d2hMs", 0), f"record {i} d2hMs", path) for i, r in enumerate(doc)]
    return EngineTiming(engine_mean_ms=statistics.fmean(comp),
                        engine_median_ms=statistics.median(comp), iterations=len(comp),
                        h2d_mean_ms=statistics.fmean(h2d), d2h_mean_ms=statistics.fmean(d2h),
                        enqueue_mean_ms=statistics.fmean(enq) if enq else None,
                        source=Path(path).name)


def _text_map(value: Any) -> dict[str, str]:
    """A metadata section as ``{text: text}`` (a section that is not an object is
    empty; surrogates escaped)."""
    if not isinstance(value, dict):
        return {}
    return {escape_surrogates(str(k)): escape_surrogates(str(v)) for k, v in value.items()}


def _check_same_engine(graph: Path, graph_names: set[str], profile: Path,
                       profile_names: list[str]) -> None:
    """Refuse a layer-info export and a profile of different engines (an FP16 engine's
    graph.json beside an FP32 engine's profile.json merged into FP32 times on FP16 layers).

    trtexec writes both from the same engine, so the layer names agree exactly (checked on
    the four real export sets in ``tests/data/trtexec-exports``).

    Raises:
        InputError: the two files name different layers.
    """
    only_graph = sorted(graph_names - set(profile_names))
    only_prof = sorted(set(profile_names) - graph_names)
    if not only_graph and not only_prof:
        return
    eg = (only_graph or only_prof)[0]
    raise InputError(
        f"{graph} and {profile} are exports of different engines: {len(graph_names)} vs "
        f"{len(set(profile_names))} layers, {len(only_graph)} only in the graph and "
        f"{len(only_prof)} only in the profile (e.g. {eg!r})",
        "export --exportLayerInfo and --exportProfile in the same trtexec run of one engine "
        "and pass those files together")


def load_trtexec_export(paths: list[str | Path] | str | Path) -> EngineInspection:
    """Inspect one engine from its trtexec exports (folder or files).

    Returns:
        :class:`EngineInspection` with ``source="trtexec"``: layers (with per-layer
        average times and shares when a profile is present), I/O, precision mix,
        reformat count, timing (engine mean vs layer sum), device and options, lints.

    Raises:
        InputError: see :func:`find_exports`; malformed files.
    """
    found = find_exports(paths)
    some = next(iter(found.values()))
    where = str(some.parent if len(found) > 1 else some)
    if "graph" in found:
        insp = parse_layer_info(_read_json(found["graph"]), str(found["graph"]))
    else:
        insp = EngineInspection(source="trtexec", path=where, detailed=False)
    insp = insp.model_copy(update={"source": "trtexec", "path": where})
    timing = EngineTiming(source="")
    sources = []
    if "profile" in found:
        count, rows = parse_profile(_read_json(found["profile"]), str(found["profile"]))
        total = sum(r["averageMs"] for r in rows)
        times = {r["name"]: r["averageMs"] for r in rows}
        layers = []
        names = {layer.name for layer in insp.layers}
        if "graph" in found:
            _check_same_engine(found["graph"], names, found["profile"],
                               [r["name"] for r in rows])
        for layer in insp.layers:
            t = times.get(layer.name)
            layers.append(layer.model_copy(update={
                "avg_time_ms": t, "time_pct": (100 * t / total) if (t is not None and total)
                else None}))
        for r in rows:  # layers only the profile knows (no graph.json, or renamed)
            if r["name"] not in names:
                t = r["averageMs"]
                layers.append(EngineLayer(name=r["name"], avg_time_ms=t,
                                          time_pct=100 * t / total if total else None))
        insp = insp.model_copy(update={"layers": layers})
        timing = timing.model_copy(update={"layer_sum_ms": total, "profile_iterations": count})
        sources.append(found["profile"].name)
    if "timing" in found:
        t = timing_from_times(_read_json(found["timing"]), str(found["timing"]))
        timing = timing.model_copy(update=t.model_dump(exclude={"layer_sum_ms",
                                                                "profile_iterations",
                                                                "source"}))
        sources.append(found["timing"].name)
    update: dict[str, Any] = {}
    if "profile.metadata" in found:
        pm = str(found["profile.metadata"])
        meta = _read_json(found["profile.metadata"])
        meta = meta if isinstance(meta, dict) else {}
        perf = meta.get("performance_summary")
        gpu = perf.get("GPU Compute Time") if isinstance(perf, dict) else None
        if timing.engine_mean_ms is None and isinstance(gpu, list) and len(gpu) >= 4:
            timing = timing.model_copy(update={
                "engine_mean_ms": _ms(gpu[2], "GPU Compute Time mean", pm),
                "engine_median_ms": _ms(gpu[3], "GPU Compute Time median", pm)})
            sources.append(found["profile.metadata"].name + " (GPU Compute Time)")
        update["inference_options"] = _text_map(meta.get("inference_options"))
        dev = _text_map(meta.get("device_information"))
        if dev.get("Selected Device"):
            update["device_name"] = dev["Selected Device"]
        if dev.get("Compute Capability"):
            update["compute_capability"] = dev["Compute Capability"]
    if "metadata" in found:
        meta = _read_json(found["metadata"])
        d = meta[0] if isinstance(meta, list) and meta else meta
        if isinstance(d, dict):
            if d.get("Name") and isinstance(d["Name"], (str, int, float)):
                update["device_name"] = escape_surrogates(str(d["Name"]))
            cc = d.get("ComputeCapability")
            if isinstance(cc, list) and len(cc) == 2 and all(
                    isinstance(c, int) and not isinstance(c, bool) and 0 <= c < 1000
                    for c in cc):
                update["compute_capability"] = f"{cc[0]}.{cc[1]}"
    if "build.metadata" in found:
        meta = _read_json(found["build.metadata"])
        meta = meta if isinstance(meta, dict) else {}
        opts: dict[str, str] = {}
        for section in ("model_options", "build_options"):
            opts.update(_text_map(meta.get(section)))
        update["build_options"] = opts
    if timing.layer_sum_ms is not None and timing.engine_mean_ms:
        timing = timing.model_copy(update={
            "profiling_overhead_ratio": timing.layer_sum_ms / timing.engine_mean_ms - 1.0})
    timing = timing.model_copy(update={"source": ", ".join(sources)})
    if sources:
        update["timing"] = timing
    insp = summarize(insp.model_copy(update=update))
    return insp.model_copy(update={"lints": lint_engine(insp)})


def layer_time_table(insp: EngineInspection, top: int | None = None) -> list[EngineLayer]:
    """Layers sorted by average time, slowest first (layers without a time last)."""
    rows = sorted(insp.layers, key=lambda layer: -(layer.avg_time_ms or -1.0))
    return rows[:top] if top else rows
