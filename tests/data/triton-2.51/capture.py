#!/usr/bin/env python3
"""Capture real tritonserver 2.51 answers (HTTP and gRPC JSON) for the live-boundary tests.

Starts the test server (``trtcheck.testing.triton_server``, python backend, CPU), sends a
few requests to ``tb_linear`` and writes next to this script: ``server_metadata.json``,
``model_metadata.json``, ``model_config.json``, ``model_stats.json`` (HTTP JSON), the
same four as gRPC JSON (``grpc_*.json``: int64 fields as strings), and two inference
answers (``infer_binary.bin`` with its ``infer_binary.header_length``, binary tensor
data extension; ``infer_json.json``). Run: ``python tests/data/triton-2.51/capture.py``.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import urllib.request
from pathlib import Path

import numpy as np

from trtcheck.testing.triton_server import TritonServer, make_repository

HERE = Path(__file__).parent


def main() -> None:
    repo = make_repository(Path(tempfile.mkdtemp(prefix="capture-")))
    with TritonServer(repo, explicit=True, load_models=("tb_linear",)) as srv:
        def get(path: str) -> dict:
            with urllib.request.urlopen(srv.http_url + path, timeout=10) as r:
                return json.loads(r.read())

        def post(path: str, body: bytes, headers: dict) -> tuple[bytes, dict]:
            req = urllib.request.Request(srv.http_url + path, data=body, method="POST",
                                         headers=headers)
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.read(), dict(r.headers)

        x = np.arange(4, dtype=np.float32).reshape(1, 4)
        body = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32",
                                       "shape": [1, 4], "data": x.ravel().tolist()}],
                           "outputs": [{"name": "OUTPUT0"}]}).encode()
        for _ in range(5):
            out, _ = post("/v2/models/tb_linear/infer", body,
                          {"Content-Type": "application/json"})
        (HERE / "infer_json.json").write_bytes(out)
        jb = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 4],
                                     "parameters": {"binary_data_size": 16}}],
                         "outputs": [{"name": "OUTPUT0",
                                      "parameters": {"binary_data": True}}]}).encode()
        out, headers = post("/v2/models/tb_linear/infer", jb + x.tobytes(),
                            {"Inference-Header-Content-Length": str(len(jb)),
                             "Content-Type": "application/octet-stream"})
        (HERE / "infer_binary.bin").write_bytes(out)
        hl = {k.lower(): v for k, v in headers.items()}["inference-header-content-length"]
        (HERE / "infer_binary.header_length").write_text(hl + "\n")
        docs = {"server_metadata": get("/v2"), "model_metadata": get("/v2/models/tb_linear"),
                "model_config": get("/v2/models/tb_linear/config"),
                "model_stats": get("/v2/models/tb_linear/stats")}

        async def grpc() -> dict:
            import tritonclient.grpc.aio as g

            c = g.InferenceServerClient(f"127.0.0.1:{srv.grpc_port}")
            try:
                return {"grpc_server_metadata": await c.get_server_metadata(as_json=True),
                        "grpc_model_metadata": await c.get_model_metadata(
                            "tb_linear", as_json=True),
                        "grpc_model_config": await c.get_model_config("tb_linear",
                                                                      as_json=True),
                        "grpc_model_stats": await c.get_inference_statistics(
                            "tb_linear", as_json=True)}
            finally:
                await c.close()

        docs.update(asyncio.run(grpc()))
        for name, doc in docs.items():
            (HERE / f"{name}.json").write_text(json.dumps(doc, indent=1, sort_keys=True)
                                               + "\n")
    print("written:", ", ".join(sorted(p.name for p in HERE.iterdir() if p.suffix != ".py")))


if __name__ == "__main__":
    main()
