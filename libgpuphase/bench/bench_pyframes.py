# bench_pyframes.py — N blocking calls from a Python stack 8 frames deep
# through ctypes (bench_pyframes.sh); prints ns per call, best of 5 rounds.
import ctypes
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
lib.cs_setup()
N = int(sys.argv[2])


def deep(k):
    if k:
        return deep(k - 1)
    best = None
    for _ in range(5):
        t = time.perf_counter_ns()
        for _ in range(N):
            lib.cs_wait()
        d = (time.perf_counter_ns() - t) / N
        best = d if best is None or d < best else best
    return best


print("%.1f" % deep(6))
