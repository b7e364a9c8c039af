"""Runtimes behind one protocol (:class:`trtcheck.backends.base.Backend`).

Concrete backends import their runtime lazily (inside ``activate``), so importing this
package never imports onnxruntime, tensorrt or cuda-python.
"""

from trtcheck.backends.base import Backend, InferOutput

__all__ = ["Backend", "InferOutput"]
