"""Analysis: reads the results model only (advice, simulation, comparison, gate).

Everything here reads only :mod:`trtcheck.results` objects and runs without a GPU,
TensorRT or onnxruntime; statistics use NumPy only. Submodules are imported explicitly
(``from trtcheck.analyze.gate import evaluate``) so that importing this package is free.
"""
