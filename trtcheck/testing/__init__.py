"""Helpers shared by trtcheck's tests and benchmarks (not used by the tool itself).

* :mod:`trtcheck.testing.synthetic_results`: seeded synthetic results documents under
  the noise model of a busy machine (gate, compare and their benchmarks);
* :mod:`trtcheck.testing.triton_server`: a real ``tritonserver`` process with scripted
  python-backend models (live-serving tests and Triton benchmarks);
* :mod:`trtcheck.testing.ray_cluster`: a real multi-node Ray cluster on one host (the
  load from Ray actors, ``serve --url ... --ray``).

No stage of trtcheck imports this package (``.importlinter``).
"""
