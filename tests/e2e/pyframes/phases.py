# phases.py — a training loop's shape without PyTorch (test_pyframes.sh):
# a blocking copy in a forward(), in a backward() and in Optimizer.step(),
# 200 times each; --group-by phase must split them 200 / 200 / 200.
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.cs_setup()


class Model:
    def forward(self):
        lib.cs_copy()


def backward():
    lib.cs_copy()


class Optimizer:
    def step(self):
        lib.cs_copy()


model, opt = Model(), Optimizer()
for _ in range(200):
    model.forward()
    backward()
    opt.step()
