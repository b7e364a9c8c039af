"""What TensorRT's ONNX parser (onnx-tensorrt) imports, as its own documentation states.

Source: ``docs/operators.md`` of https://github.com/onnx/onnx-tensorrt, the version for
**TensorRT 10.15** ("TensorRT 10.15 supports operators in the inclusive range of opset 9
to opset 24"; the 10.15 GA release is dated 2026-02-02 in the same repository's
``docs/Changelog.md``), Apache-2.0. Each op below is listed in that file's "Operator Support
Matrix" with ``Supported`` = ``N`` (:data:`UNSUPPORTED_OPS`) or ``Y``
(:data:`SUPPORTED_OPS`). Ops in neither set are not listed there at all.
Update both sets and :data:`SOURCE` together when a newer table is adopted.

The same file states the data-type rules used by the lints: DOUBLE is supported only by
casting down to FLOAT, "clamping values to +-FLT_MAX if necessary"; INT8/INT4/FP8/FP4 are
"quantized types" (only through Q/DQ from a wider float); UINT8 only as a network input
or output. INT64 is a supported type in TensorRT 10; the TensorRT 8.x versions of the
same file say TensorRT "will attempt to cast down INT64 to INT32 ... clamping values to
+-INT_MAX".
"""

from __future__ import annotations

SOURCE = ("onnx/onnx-tensorrt docs/operators.md, TensorRT 10.15 "
          "(opset 9 to 24)")
"""Citation shown in lint messages."""

TRT_VERSION = "10.15"
OPSET_MIN = 9
OPSET_MAX = 24

#: ``Supported = N`` in the TensorRT 10.15 support matrix.
UNSUPPORTED_OPS: frozenset[str] = frozenset({
    "AffineGrid", "Bernoulli", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr",
    "BitwiseXor", "Col2Im", "CenterCropPad", "Compress", "ConcatFromSequence",
    "ConvInteger", "DFT", "Det", "DynamicQuantizeLinear", "ImageDecoder",
    "MatMulInteger", "MaxRoiPool", "MaxUnpool", "MelWeightMatrix", "Multinomial",
    "NegativeLogLikelihoodLoss", "Optional", "OptionalGetElement", "OptionalHasElement",
    "QLinearConv", "QLinearMatMul", "RegexFullMatch", "SequenceAt", "SequenceConstruct",
    "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength", "SequenceMap",
    "SoftmaxCrossEntropyLoss", "SplitToSequence", "StringConcat", "StringNormalizer",
    "StringSplit", "TfIdfVectorizer", "Unique",
})

#: ``Supported = Y`` in the TensorRT 10.15 support matrix.
SUPPORTED_OPS: frozenset[str] = frozenset({
    "Abs", "Acos", "Acosh", "Add", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan",
    "Atanh", "Attention", "AveragePool", "BatchNormalization", "BlackmanWindow", "Cast",
    "CastLike", "Ceil", "Celu", "Clip", "Concat", "Constant", "ConstantOfShape", "Conv",
    "ConvTranspose", "Cos", "Cosh", "CumSum", "DeformConv", "DepthToSpace",
    "DequantizeLinear", "Div", "Dropout", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand",
    "EyeLike", "Flatten", "Floor", "Gather", "GatherElements", "GatherND", "Gelu", "Gemm",
    "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "Greater", "GreaterOrEqual",
    "GridSample", "GroupNormalization", "GRU", "HammingWindow", "HannWindow",
    "HardSigmoid", "HardSwish", "Hardmax", "Identity", "If", "ImageScaler",
    "InstanceNormalization", "IsInf", "IsNaN", "LayerNormalization", "LeakyRelu", "Less",
    "LessOrEqual", "Log", "LogSoftmax", "Loop", "LRN", "LSTM", "LpNormalization", "LpPool",
    "MatMul", "Max", "MaxPool", "Mean", "MeanVarianceNormalization", "Min", "Mish", "Mod",
    "Mul", "Neg", "NonMaxSuppression", "NonZero", "Not", "OneHot", "Or", "Pad",
    "ParametricSoftplus", "Pow", "PRelu", "QuantizeLinear", "RandomNormal",
    "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Range", "Reciprocal",
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
    "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Resize",
    "ReverseSequence", "RMSNormalization", "RNN", "RoiAlign", "RotaryEmbedding", "Round",
    "STFT", "ScaledTanh", "Scan", "Scatter", "ScatterElements", "ScatterND", "Selu",
    "Shape", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Slice", "Softmax",
    "Softplus", "Softsign", "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tan",
    "Tanh", "TensorScatter", "ThresholdedRelu", "Tile", "TopK", "Transpose", "Trilu",
    "Unsqueeze", "Upsample", "Where", "Xor",
})

#: Default-domain names: ``""`` and ``"ai.onnx"`` are the same domain.
DEFAULT_DOMAINS = frozenset({"", "ai.onnx"})


def support_of(op_type: str) -> str:
    """``"Y"``, ``"N"`` or ``"unlisted"`` for a default-domain ONNX op type."""
    if op_type in UNSUPPORTED_OPS:
        return "N"
    if op_type in SUPPORTED_OPS:
        return "Y"
    return "unlisted"


#: Attribute restrictions from the same table's "Restrictions" column (TensorRT 10.15).
RESIZE_MODES = frozenset({"nearest", "linear"})
RESIZE_COORDINATE_MODES = frozenset({"half_pixel", "pytorch_half_pixel", "tf_half_pixel_for_nn",
                                     "asymmetric", "align_corners"})
RESIZE_NEAREST_MODES = frozenset({"floor", "ceil", "round_prefer_floor", "round_prefer_ceil"})
TOPK_MAX_K = 3840
"""TopK: "``sorted`` must be 1. ``K`` input must be less than 3840"."""
