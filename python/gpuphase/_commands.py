"""The `gpuphase` and `gpuphase-report` commands of the wheel.

The wheel installs the native programs inside this package
(gpuphase/bin/gpuphase, gpuphase/bin/gpuphase-report, gpuphase/bin/gpuphase-agent,
gpuphase/lib/libgpuphase.so: the layout `make install` uses, so `gpuphase`
finds ../lib/libgpuphase.so, and gpuphase-report and gpuphase-agent next to
itself, from any directory). These entry points
replace the Python process with the program (exec): arguments, signals and
the exit status are the program's own.

Single threaded; never returns unless the exec fails.
"""

import os
import sys

_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")


def _exec(name):
    path = os.path.join(_BIN, name)
    try:
        os.execv(path, [name] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write(f"{name}: cannot run {path}: {e.strerror} (this gpuphase was installed "
                         "without its native programs: install the wheel built by `pip install .`)\n")
        return 127


def gpuphase():
    return _exec("gpuphase")


def gpuphase_report():
    return _exec("gpuphase-report")
