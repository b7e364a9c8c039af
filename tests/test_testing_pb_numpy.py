"""The test models' numpy path through Triton's python backend
(``trtcheck/testing/pb_numpy.py``): a real tritonserver answers the request's own data.

Under numpy 2 in the stub, ``.as_numpy()`` of an input reads wrong values and the
stub's DLPack consumption made numpy report a ``PyCapsule_GetPointer`` error per
output; both are checked against the real server.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = [pytest.mark.triton]


def _infer(srv, model: str, name: str, x: np.ndarray, out: str) -> np.ndarray:
    import tritonclient.http as http

    client = http.InferenceServerClient(srv.http_url.removeprefix("http://"))
    inp = http.InferInput(name, list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    return client.infer(model, [inp]).as_numpy(out)


def test_scripted_model_answers_twice_its_input(triton):
    for n in (1, 3, 8):
        x = np.arange(n * 4, dtype=np.float32).reshape(n, 4) + 1.0
        np.testing.assert_array_equal(_infer(triton, "tb_linear", "INPUT0", x, "OUTPUT0"),
                                      2.0 * x)


def test_onnx_wrapper_answers_what_onnx_runtime_computes(triton):
    import onnxruntime as ort

    from trtcheck.load.demo import demo_model_path
    from trtcheck.testing.onnx_model import write_onnx_model

    write_onnx_model(triton.repo, "resnet_pb", demo_model_path(), max_batch_size=4)
    triton.load("resnet_pb")
    sess = ort.InferenceSession(str(demo_model_path()), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    try:
        for n in (1, 3):
            x = rng.random((n, 3, 224, 224), dtype=np.float32)
            got = _infer(triton, "resnet_pb", "input", x, "output")
            want = sess.run(None, {"input": x})[0]
            assert got.shape == want.shape == (n, 1000)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    finally:
        triton.unload("resnet_pb")
    assert "PyCapsule_GetPointer" not in triton.log_path.read_text(errors="replace")
