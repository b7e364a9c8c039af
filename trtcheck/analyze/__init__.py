"""Analysis of results: batching advice, the serving simulator, comparisons, gate logic.

Reads only the results model (:mod:`trtcheck.results`) and the bottom layer; never
imports a runtime (onnxruntime, tensorrt, cuda) or matplotlib. Submodules are imported
on demand (this package module imports nothing heavy).
"""
