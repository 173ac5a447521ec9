"""Collage: run an ONNX model partitioned across inference backends by measurement.

    import collage, numpy as np
    result = collage.tune("model.onnx", threads=2)          # search, verify, keep the faster
    session = collage.Session("model.onnx", plan=result["plan"])
    outputs = session.run({"input": np.zeros((1, 3, 224, 224), np.float32)})

Every error is a collage.Error carrying the one-line message the `collage`
command line prints.
"""
from ._collage import (
    Error, Session, backends, compare, load_backend_plugin, tune, version)

__all__ = ["Error", "Session", "backends", "compare", "load_backend_plugin", "tune", "version"]
__version__ = version()
