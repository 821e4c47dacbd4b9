# app.py — waits on the GPU at two known lines (test_pyframes.sh greps them:
# keep the line numbers of the two cs_wait() calls below in step with it).
import ctypes
import os
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.cs_setup()


def forward_wait():
    lib.cs_wait()  # line 12


def step_wait():
    for _ in range(3):
        lib.cs_wait()  # line 17


for step in range(300):  # many calls: see native_app.c on short traces
    forward_wait()
    step_wait()
