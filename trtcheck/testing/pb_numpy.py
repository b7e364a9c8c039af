"""Numpy in and out of Triton's python backend under numpy 1 and numpy 2, as the source
text of helpers that the test models' ``model.py`` files embed (:data:`PB_NUMPY_PY`).

The stub of Triton 2.51's python backend reads and builds numpy arrays through a
pybind11 path compiled against numpy 1's array layout. Under numpy 2 in the stub:

- ``pb_utils.Tensor(name, ndarray)`` answers empty tensors (the output trap that
  ``trtcheck serve`` diagnoses);
- ``InferenceRequest`` inputs read with ``.as_numpy()`` hold wrong values (an
  ``arange`` input came back as zeros or ones), so a model computes on garbage while
  its shapes and timings look right.

The helpers go through DLPack instead, which carries the data pointer, shape and dtype
without numpy's array layout:

- ``input_array(request, name)``: ``np.from_dlpack`` of the input tensor (a view of
  the request's memory, valid during ``execute``); ``.as_numpy()`` under numpy 1.
- ``output_tensor(name, array)``: ``pb_utils.Tensor.from_dlpack`` of the array's DLPack
  capsule. The stub renames a capsule it consumed to ``"used_dlpack"``, where numpy's
  capsule destructor accepts only DLPack's ``"used_dltensor"`` and otherwise reports
  ``ValueError: PyCapsule_GetPointer called with incorrect name`` once per output (a
  traceback in the server log per response). The capsule is given DLPack's name after
  the stub took it; the stub releases the array through the DLPack deleter. Under numpy
  1, ``pb_utils.Tensor(name, ndarray)``.
"""

from __future__ import annotations

PB_NUMPY_PY = '''\
import ctypes

import numpy as np
import triton_python_backend_utils as pb_utils

NUMPY_2 = int(np.__version__.split(".")[0]) >= 2

_SET_CAPSULE_NAME = ctypes.pythonapi.PyCapsule_SetName
_SET_CAPSULE_NAME.argtypes = [ctypes.py_object, ctypes.c_char_p]
_SET_CAPSULE_NAME.restype = ctypes.c_int
_USED_DLTENSOR = ctypes.c_char_p(b"used_dltensor")


def input_array(request, name):
    """The request's input ``name`` as a numpy array (a view, valid in ``execute``)."""
    tensor = pb_utils.get_input_tensor_by_name(request, name)
    if NUMPY_2:
        return np.from_dlpack(tensor)
    return tensor.as_numpy()


def output_tensor(name, array):
    """A ``pb_utils.Tensor`` that carries ``array`` (copied to C order if needed)."""
    array = np.ascontiguousarray(array)
    if not NUMPY_2:
        return pb_utils.Tensor(name, array)
    capsule = array.__dlpack__()
    tensor = pb_utils.Tensor.from_dlpack(name, capsule)
    _SET_CAPSULE_NAME(capsule, _USED_DLTENSOR)
    return tensor
'''
