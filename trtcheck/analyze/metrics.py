"""Metric paths, one import for the gate: re-exports the grammar
(:mod:`trtcheck.analyze.metric_grammar`), the schema checks and directions
(:mod:`trtcheck.analyze.metric_checks`), the resolver (:mod:`trtcheck.analyze.metric_resolver`)
and the metric units (:mod:`trtcheck.units`). New code imports from those modules.
"""

from __future__ import annotations

from trtcheck.analyze.metric_checks import (  # noqa: F401
    HIGHER,
    LOWER,
    PathInfo,
    TypeInfo,
    check_path,
    fold_dotted_keys,
    infer_direction,
    schema_paths,
    type_info,
)
from trtcheck.analyze.metric_grammar import (  # noqa: F401
    FUNCTIONS,
    KEY_FIELDS,
    SAMPLES_FIELDS,
    MetricMissing,
    MetricPath,
    MetricPathError,
    Segment,
    Selector,
    _opens_quote,
    _stat_kind,
    parse_path,
)
from trtcheck.analyze.metric_resolver import (  # noqa: F401
    SampleStat,
    Value,
    evaluate_path,
    list_metrics,
    resolve,
)
from trtcheck.units import (  # noqa: F401
    Unit,
    UnitError,
    format_quantity,
    metric_unit,
    parse_quantity,
)
