"""wheel_backend.py — the PEP 517 build backend of `pip install .`:
meson-python, with one addition. When no CUDA toolkit is found ($CUDA_HOME, or
/usr/local/cuda when it is unset, holds no include/cuda_runtime_api.h), the build
also asks the front end for NVIDIA's CUDA header wheels, which install their
headers in site-packages/nvidia/cu13/include; scripts/wheel_make.sh then
builds against those. Everything else is meson-python's.

Runs in the build front end's process (pip's build subprocess), single
threaded. Invariant: the requirements it adds are the same set of headers
the Makefile reads (cuda_runtime_api.h, cuda_profiler_api.h, cupti*.h,
nvtx3/), all of CUDA 13.
"""

import os

import mesonpy as _mesonpy
from mesonpy import build_editable, build_sdist, build_wheel, get_requires_for_build_sdist  # noqa: F401 (unchanged hooks)

_CUDA_HEADER_WHEELS = [
    "nvidia-cuda-runtime>=13,<14",
    "nvidia-cuda-cupti>=13,<14",
    "nvidia-cuda-profiler-api>=13,<14",
    "nvidia-nvtx>=13,<14",
]


def _has_toolkit():
    """A $CUDA_HOME that is set is the only toolkit looked at (so that a
    CUDA_HOME without headers, e.g. a runtime-only install, takes the
    wheels); unset, /usr/local/cuda."""
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    return os.path.isfile(os.path.join(home, "include", "cuda_runtime_api.h"))


def get_requires_for_build_wheel(config_settings=None):
    extra = [] if _has_toolkit() else _CUDA_HEADER_WHEELS
    return _mesonpy.get_requires_for_build_wheel(config_settings) + extra


def get_requires_for_build_editable(config_settings=None):
    extra = [] if _has_toolkit() else _CUDA_HEADER_WHEELS
    return _mesonpy.get_requires_for_build_editable(config_settings) + extra
