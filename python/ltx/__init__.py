"""LTX-2 audio-video generation with the ltx C++ engine.

    import ltx
    engine = ltx.Engine()  # no model named: the embedded tiny default model (scripts/setup installs its Gemma)
    video = engine.generate("A red circle moves to the left across a plain blue background.", seed=7)
    print(video.frames.shape, video.audio.shape)  # (17, 128, 192, 3) uint8, (channels, samples) float32
    video.save("circle.mp4", wav="circle.wav")

Every failure is an ltx.Error (a RuntimeError) of the subclass of its kind: InvalidRequest (also a ValueError),
InvalidModel, IoError (also an OSError), OutOfMemory (also a MemoryError), Cancelled or InternalError.
"""

import os as _os

# oneDNN runs on OpenMP, whose idle workers spin by default and starve the engine's own thread pool (measured
# 40-200x slower small decodes on a busy 2-core machine: src/core/openmp_env.h). libgomp reads OMP_WAIT_POLICY once,
# when it loads, which is when the extension below is imported, unless the process loaded it earlier.
_os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from ._ltx import (  # noqa: E402
    Cancelled,
    Engine,
    Error,
    InternalError,
    InvalidModel,
    InvalidRequest,
    IoError,
    OutOfMemory,
    Progress,
    Video,
    available_backends,
    version,
)

__version__ = version()

__all__ = [
    "Cancelled",
    "Engine",
    "Error",
    "InternalError",
    "InvalidModel",
    "InvalidRequest",
    "IoError",
    "OutOfMemory",
    "Progress",
    "Video",
    "available_backends",
    "version",
    "__version__",
]
