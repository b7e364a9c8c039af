"""Build the bad-input corpus: for every kind of input trtcheck reads, the ways a file or
a value goes wrong, each paired with the commands that read it.

Everything is made here from a few valid files (written with onnx.helper, numpy and
trtcheck's own writers), never downloaded. ``build(folder)`` returns the cases; a case
is a command line whose every run must end with exit 2 or 3, one ``error:`` line, no
traceback, within its time bound, and no output file left behind.
Run ``python tests/bad_inputs.py DIR`` to write the corpus to DIR and list it.
"""

from __future__ import annotations

import json
import os
import random
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: the variants every file kind gets (see ``docs/robustness.md`` for the table)
FILE_VARIANTS = ("empty", "truncated-10%", "truncated-50%", "truncated-90%", "random-bytes",
                 "wrong-kind", "directory", "missing", "dangling-symlink", "non-utf8-name",
                 "fifo", "device")


@dataclass
class Case:
    """One run of the corpus.

    Attributes:
        kind: the input kind (``onnx``, ``plan``, ``trtexec-export``, ``results``,
            ``policy``, ``trace``, ``npz``, ``list-option``).
        variant: what is wrong with it.
        args: the command line (without ``trtcheck``).
        outputs: files or folders the run must not leave behind.
    """

    kind: str
    variant: str
    args: list[str]
    outputs: list[Path] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.kind}/{self.variant}/{self.args[0]}"


# --- valid files the variants start from --------------------------------------------------

def valid_onnx(path: Path) -> Path:
    import onnx
    from onnx import TensorProto, helper

    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["b", 8]) for n in ("x", "y")]
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", vi[:1], vi[1:])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def onnx_with_dims(path: Path, dims: list[int]) -> Path:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def valid_plan_bytes() -> bytes:
    body = bytes(range(1, 256)) * 16
    total = 32 + len(body)
    return (b"ftrt" + b"\0" * 12 + struct.pack("<Q", total) + bytes((10, 8, 0, 43)) + b"ftrt"
            + body)


def valid_results(path: Path) -> Path:
    from trtcheck.results import save_results
    from trtcheck.testing import synthetic_results as g

    save_results(g.results({1: 2.0, 8: 5.0}, n=50, seed=1), path)
    return path


#: flow style, so a cut anywhere leaves unbalanced brackets (a cut block-style policy can
#: still be a valid, shorter policy)
VALID_POLICY = b'{"budgets": ["bench.batch[1].p99_ms <= 50 ms"]}\n'


# --- variants -----------------------------------------------------------------------------

def _variants(folder: Path, stem: str, suffix: str, valid: bytes,
              wrong: bytes) -> dict[str, Path]:
    """Files (or non-files) named ``stem.VARIANT.suffix`` for :data:`FILE_VARIANTS`."""
    out: dict[str, Path] = {}
    rng = random.Random(f"{stem}{suffix}")

    def write(variant: str, data: bytes) -> Path:
        p = folder / f"{stem}.{variant}{suffix}"
        p.write_bytes(data)
        return p

    out["empty"] = write("empty", b"")
    for frac in (10, 50, 90):
        out[f"truncated-{frac}%"] = write(f"truncated-{frac}", valid[: len(valid) * frac // 100])
    out["random-bytes"] = write("random", bytes(rng.randrange(256) for _ in range(2048)))
    out["wrong-kind"] = write("wrong-kind", wrong)
    d = folder / f"{stem}.dir{suffix}"
    d.mkdir()
    out["directory"] = d
    out["missing"] = folder / f"{stem}.missing{suffix}"
    link = folder / f"{stem}.dangling{suffix}"
    link.symlink_to(folder / "gone" / f"{stem}{suffix}")
    out["dangling-symlink"] = link
    name = os.path.join(os.fsencode(folder), f"{stem}.\xff".encode("latin-1") + b"."
                        + suffix.lstrip(".").encode())
    with open(name, "wb") as fh:  # a file whose name is not UTF-8, holding random bytes
        fh.write(bytes(rng.randrange(256) for _ in range(512)))
    out["non-utf8-name"] = Path(os.fsdecode(name))
    fifo = folder / f"{stem}.fifo{suffix}"
    os.mkfifo(fifo)  # a reader that opens it blocks until a writer comes: never opened
    out["fifo"] = fifo
    out["device"] = Path("/dev/zero")  # endless zeros: never read to the end
    return out


def build(folder: Path) -> list[Case]:
    """Write the corpus into ``folder`` (empty or new) and return its cases."""
    folder.mkdir(parents=True, exist_ok=True)
    good = folder / "good"
    good.mkdir(exist_ok=True)
    model = valid_onnx(good / "model.onnx")
    results = valid_results(good / "results.json")
    policy = good / "policy.yaml"
    policy.write_bytes(VALID_POLICY)
    out = folder / "out"
    cases: list[Case] = []

    def add(kind: str, variant: str, *args: object, outputs: list[Path] | None = None) -> None:
        cases.append(Case(kind, variant, [str(a) for a in args], list(outputs or [])))

    report_dir = out / "report"
    results_out = out / "results.json"
    # ONNX models
    files = _variants(folder, "model", ".onnx", model.read_bytes(), results.read_bytes())
    files["huge-dims"] = onnx_with_dims(folder / "model.huge.onnx", [2**62, 2**62])
    files["zero-dims"] = onnx_with_dims(folder / "model.zero.onnx", [0, 0, 80])
    files["negative-dims"] = onnx_with_dims(folder / "model.negative.onnx", [-5, 8])
    for variant, p in files.items():
        add("onnx", variant, "inspect", p)
        add("onnx", variant, "bench", p, "--batch", "1", "--shapes", "x:1x8",
            "--min-duration", "0.01", "--warmup", "0", "-o", results_out,
            outputs=[results_out])
        add("onnx", variant, "build", p, "-o", out / "m.plan", outputs=[out / "m.plan"])
    # plans
    plan = valid_plan_bytes()
    files = _variants(folder, "engine", ".plan", plan, model.read_bytes())
    huge = bytearray(plan)
    huge[16:24] = struct.pack("<Q", 2**63)
    (folder / "engine.huge-length.plan").write_bytes(bytes(huge))
    files["huge-dims"] = folder / "engine.huge-length.plan"
    zero = b"ftrt" + b"\0" * 12 + struct.pack("<Q", 0) + bytes((10, 8, 0, 43)) + b"\0" * 4068
    (folder / "engine.zero-filled.plan").write_bytes(zero)
    files["zero-values"] = folder / "engine.zero-filled.plan"
    for variant, p in files.items():
        add("plan", variant, "preflight", p)
        add("plan", variant, "inspect", p)
    # trtexec exports (one layer-information file)
    graph = json.dumps({"Layers": [{"Name": "conv", "LayerType": "CaskConvolution",
                                    "Inputs": [{"Name": "x", "Dimensions": [1, 3, 8, 8],
                                                "Format/Datatype": "Row major linear FP32"}],
                                    "Outputs": [{"Name": "y", "Dimensions": [1, 8, 8, 8],
                                                 "Format/Datatype": "Row major linear FP32"}]}],
                        "Bindings": ["x", "y"]}).encode()
    files = _variants(folder, "engine", ".graph.json", graph, VALID_POLICY)
    for variant, text in {
            "huge-dims": '{"Layers": [{"Name": "a", "Inputs": [{"Name": "x", "Dimensions": '
                         f'[{2**70}]}}]}}]}}',
            "non-integer-dims": '{"Layers": [{"Name": "a", "Inputs": [{"Name": "x", '
                                '"Dimensions": [3.5, "N"]}]}]}',
            "negative-values": '{"Layers": [{"Name": "a", "Weights": {"Count": -4}}]}',
            "deep-nesting": '{"Layers": ' + "[" * 3000 + "]" * 3000 + "}",
            "nan": '{"Layers": [{"Name": "a", "Inputs": [{"Name": "x", '
                   '"Dimensions": [NaN]}]}]}'}.items():
        p = folder / f"engine.{variant}.graph.json"
        p.write_text(text)
        files[variant] = p
    for kind_name, text in (("profile-nan", '[{"name": "a", "averageMs": NaN}]'),
                            ("times-negative", '[{"computeMs": -1}]')):
        suffix = ".profile.json" if kind_name.startswith("profile") else ".timing.json"
        p = folder / f"engine.{kind_name}{suffix}"
        p.write_text(text)
        files[kind_name] = p
    for variant, p in files.items():
        add("trtexec-export", variant, "inspect", p)
    # results files
    doc = json.loads(results.read_text())
    files = _variants(folder, "results", ".json", results.read_bytes(), VALID_POLICY)
    for variant, change in {
            "huge-dims": lambda d: d["bench"][0]["batches"][0].update(batch_size=2**63),
            "zero-values": lambda d: d["bench"][0]["batches"][0].update(batch_size=0),
            "negative-values": lambda d: d["bench"][0]["batches"][0]["samples_ms"]
            .__setitem__(0, -1.0),
            "nan": lambda d: d["bench"][0]["batches"][0]["samples_ms"].__setitem__(0, "NaN"),
            "inf": lambda d: d["bench"][0]["batches"][0]["samples_ms"]
            .__setitem__(0, "Infinity")}.items():
        bad = json.loads(json.dumps(doc))
        change(bad)
        p = folder / f"results.{variant}.json"
        p.write_text(json.dumps(bad))
        files[variant] = p
    (folder / "results.deep.json").write_text("[" * 3000 + "]" * 3000)
    files["deep-nesting"] = folder / "results.deep.json"
    (folder / "results.bigint.json").write_text('{"schema_version": ' + "9" * 5000 + "}")
    files["huge-integer"] = folder / "results.bigint.json"
    for variant, p in files.items():
        add("results", variant, "advise", "--from", p, "--arrival-rate", "100", "-o",
            results_out, outputs=[results_out])
        add("results", variant, "report", "--from", p, "-o", report_dir, outputs=[report_dir])
        add("results", variant, "gate", p, "--policy", policy)
        add("results", variant, "compare", p, results)
    # gate policies
    files = _variants(folder, "policy", ".yaml", VALID_POLICY, model.read_bytes())
    for variant, data in {
            "deep-nesting": b"[" * 3000,
            "aliases": b"a: &a [1,1,1]\nb: &b [*a,*a,*a]\nbudgets:\n  - metric: "
                       b"bench.batch[1].p99_ms\n    max: *b\n",
            "control-character": b"budgets:\n  - bench.batch[1].p99_ms <= 5 ms\x07\n",
            "huge-number": b"budgets:\n  - metric: bench.batch[1].p99_ms\n    max: "
                           + b"9" * 5000 + b"\n",
            "nan": b"budgets:\n  - metric: bench.batch[1].p99_ms\n    max: .nan\n",
            "negative-values": b"settings:\n  confidence: -0.5\nbudgets:\n"
                               b"  - bench.batch[1].p99_ms <= 5 ms\n",
            "zero-values": b"settings:\n  confidence: 0\nbudgets:\n"
                           b"  - bench.batch[1].p99_ms <= 5 ms\n"}.items():
        p = folder / f"policy.{variant}.yaml"
        p.write_bytes(data)
        files[variant] = p
    for variant, p in files.items():
        add("policy", variant, "gate", results, "--policy", p, "--junit-xml",
            out / "gate.xml", outputs=[out / "gate.xml"])
    # arrival traces
    trace = json.dumps([i * 0.01 for i in range(50)]).encode()  # a cut breaks the list
    files = _variants(folder, "trace", ".txt", trace, model.read_bytes())
    for variant, text in {"nan": "0\nnan\n", "inf": "0\ninf\n", "huge-values": "0\n1e300\n",
                          "deep-nesting": "[" * 3000, "huge-integer": "[" + "9" * 5000 + "]",
                          "negative-values": "[-1e300, 1e300]"}.items():
        p = folder / f"trace.{variant}.txt"
        p.write_text(text)
        files[variant] = p
    for variant, p in files.items():
        add("trace", variant, "advise", "--latency-curve", "1:1,8:4", "--arrival-rate", "100",
            "--arrival", f"trace:{p}")
        add("trace", variant, "serve", "--synthetic-curve", "1:0.3,8:1", "--load",
            f"trace:{p}", "--window-ms", "0", "--max-batch", "8", "--repeats", "1",
            "-o", results_out, outputs=[results_out])
    # .npz inputs
    good_npz = folder / "good" / "inputs.npz"
    np.savez(good_npz, x=np.ones((1, 8), np.float32))
    files = _variants(folder, "inputs", ".npz", good_npz.read_bytes(), model.read_bytes())
    for variant, make in {
            "nan": lambda p: np.savez(p, x=np.full((1, 8), np.nan, np.float32)),
            "inf": lambda p: np.savez(p, x=np.full((1, 8), np.inf, np.float32)),
            "huge-values": lambda p: np.savez(p, x=np.full((1, 8), 1e300)),
            "text": lambda p: np.savez(p, x=np.array(["a"] * 8)),
            "complex": lambda p: np.savez(p, x=np.ones((1, 8), np.complex64)),
            "no-arrays": lambda p: np.savez(p),
            "huge-dims": lambda p: _npz_header(p, (10**13,)),
            "zero-dims": lambda p: np.savez(p, x=np.ones((0, 8), np.float32)),
            "wrong-shape": lambda p: np.savez(p, x=np.ones((1, 9), np.float32))}.items():
        p = folder / f"inputs.{variant}.npz"
        make(str(p))
        files[variant] = p
    for variant, p in files.items():
        add("npz", variant, "bench", model, "--inputs", p, "--batch", "1", "--min-duration",
            "0.01", "--warmup", "0", "-o", results_out, outputs=[results_out])
    # list options
    lists: dict[str, list[tuple[str, list[str]]]] = {
        "--batch": [("bench", [str(model)])],
        "--shapes": [("bench", [str(model)])],
        "--precision": [("precision", [str(model)])],
        "--window-ms": [("serve", ["--synthetic-curve", "1:1"])],
        "--max-batch": [("serve", ["--synthetic-curve", "1:1"])],
        "--load": [("serve", ["--synthetic-curve", "1:1"])],
        "--synthetic-curve": [("serve", [])],
        "--latency-curve": [("advise", ["--arrival-rate", "100"])],
        "--input-value": [("bench", [str(model), "--batch", "1"])],
    }
    values = {"empty": "", "separators-only": ",,,", "huge": "1" + "0" * 30,
              "zero": "0", "negative": "-1", "nan": "nan", "inf": "inf",
              "non-number": "abc", "duplicate": "1,1", "control-character": "1\x07",
              "huge-integer": "9" * 5000}
    valid_here = {("--window-ms", "zero"), ("--input-value", "zero"),
                  ("--input-value", "negative"), ("--input-value", "huge")}
    for option, uses in lists.items():
        for variant, value in values.items():
            if (option, variant) in valid_here:  # a value the option accepts
                continue
            if option == "--shapes":
                value = f"x:{value}"
            elif option in ("--latency-curve", "--synthetic-curve"):
                value = f"{value}:1" if variant != "duplicate" else "1:1,1:2"
            elif option == "--input-value":
                value = f"x={value}"
            elif option == "--load":
                value = f"open:{value}"
            for command, extra in uses:
                add("list-option", f"{option} {variant}", command, *extra, option, value,
                    "-o", results_out, outputs=[results_out])
    return cases


def _npz_header(path: str, shape: tuple[int, ...]) -> None:
    import io
    import zipfile

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False,
                                               "shape": shape})
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", buf.getvalue() + b"\0" * 64)


def main(argv: list[str]) -> None:  # pragma: no cover - a convenience
    folder = Path(argv[0] if argv else "bad-inputs")
    for c in build(folder):
        print(c.id, " ".join(c.args))


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])

