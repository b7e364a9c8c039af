"""Analysis of results: batching advice, the serving simulator, comparisons, gate logic.

Everything here reads only :mod:`trtcheck.results` objects (and the bottom layer) and runs
without a GPU, TensorRT, onnxruntime or matplotlib; statistics use NumPy only.
Submodules are imported explicitly
(``from trtcheck.analyze.gate.gate_evaluate import evaluate``) so that importing this package is
free.
"""
