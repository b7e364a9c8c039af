"""Records for the inspection of an ONNX model."""

from __future__ import annotations

from trtcheck.results.base import Record
from trtcheck.results.stats import Finding


class TensorInfo(Record):
    """One graph input or output.

    Attributes:
        name: tensor name as in the model (untrusted text: escape before display).
        dtype: lower-case numpy-style name (``"float32"``, ``"int64"``, ``"float16"``).
        shape: one entry per axis: an ``int`` for a fixed size, a ``str`` for a named
            dynamic dimension (ONNX ``dim_param``), ``None`` for an unnamed dynamic one.
        rank_known: ``False`` when the model gives no shape at all for the tensor (then
            ``shape`` is empty and does not mean a scalar).
    """

    name: str
    dtype: str
    shape: list[int | str | None]
    rank_known: bool = True

    @property
    def dynamic_axes(self) -> list[int]:
        """Indices of the axes whose size is not fixed in the model."""
        return [i for i, d in enumerate(self.shape) if not isinstance(d, int) or d < 0]

    def shape_text(self) -> str:
        """Human form of the shape, e.g. ``[batch, 3, 224, 224]`` (``?`` if unnamed)."""
        if not self.rank_known:
            return "[unknown rank]"
        parts = ["?" if d is None else str(d) for d in self.shape]
        return "[" + ", ".join(parts) + "]"


class ComputeEstimate(Record):
    """Multiply-accumulate count of the common heavy ops, for given input shapes.

    Attributes:
        input_shapes: the concrete shapes the estimate was computed for.
        macs: multiply-accumulates of the counted ops (one MAC = one multiply + one add).
        flops: ``2 * macs`` (the usual convention; elementwise ops are not counted).
        macs_by_op_type: MACs per op type.
        counted_nodes: number of nodes whose MACs were counted.
        uncounted_op_types: op types present but not counted (cheap or unknown).
        method: how the numbers were obtained, in words.
        unresolved_nodes: nodes of a counted op type left out because their shapes
            could not be inferred (0 when the estimate is complete for those ops).
    """

    input_shapes: dict[str, list[int]]
    macs: int
    flops: int
    macs_by_op_type: dict[str, int]
    counted_nodes: int
    uncounted_op_types: list[str]
    method: str
    unresolved_nodes: int = 0


class ModelInspection(Record):
    """What trtcheck found in an ONNX model without running it.

    ``parameter_count`` counts the elements of every stored weight tensor
    (initializers, the stored values of sparse initializers, and ``Constant`` node
    values, in all subgraphs); ``parameter_count_by_source`` splits it by those sources
    (keys ``"initializer"``, ``"sparse_initializer"``, ``"constant_node"``).
    ``initializer_dtypes`` counts stored weight tensors per dtype (same sources).
    """

    format: str = "onnx"
    path: str
    file_size_bytes: int
    sha256: str
    ir_version: int
    opset: dict[str, int]
    producer: str | None = None
    graph_name: str | None = None
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    node_count: int
    op_histogram: dict[str, int]
    parameter_count: int
    parameter_bytes: int
    parameter_count_by_source: dict[str, int] = {}
    initializer_dtypes: dict[str, int]
    external_data_files: list[str] = []
    compute: ComputeEstimate | None = None
    lints: list[Finding] = []
