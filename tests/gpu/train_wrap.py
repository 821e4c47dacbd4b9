#!/usr/bin/env python3
"""train_wrap.py — runs a PyTorch training script unchanged for the GPU
validation kit (tests/gpu/run.sh, checks train/* and overhead/train) and
records when each optimizer step ends.

    train_wrap.py [--torch-profiler SKIP,ITERS] -- TRAIN.py [ARGS...]

The script runs as __main__ (runpy) in this process. An optimizer step
post-hook appends time.clock_gettime_ns(CLOCK_MONOTONIC_RAW) — the clock of
gpuphase traces — at the end of every optimizer step; at exit the list goes
to ./steps.json ({"step_end_ns": [...], "wall_ns": N, "exit": CODE,
"hook": HOW}). HOW is the first of these that the installed PyTorch offers
(hook_steps()): "global" — register_optimizer_step_post_hook imported from
the submodule torch.optim.optimizer (PyTorch 2.11 removes the name
`optimizer` from the torch.optim namespace, so the attribute path fails
while the import works); "instance" — Optimizer.__init__ wrapped to call
the documented per-instance Optimizer.register_step_post_hook on every new
optimizer; "step" — each new optimizer's bound step() wrapped. If none is
possible the wrapper prints "train_wrap.py: cannot hook optimizer steps: ..."
and exits 3 without running the script (the kit reports that line). The hook
adds no CUDA call, so the program's GPU work and sync points are unchanged,
and the same hook runs in the bare, gpuphase and torch.profiler runs, so its
cost cancels in the ratios.

With --torch-profiler SKIP,ITERS the run is profiled by torch.profiler
(CPU + CUDA activities) with schedule(skip_first=SKIP, wait=0, warmup=0,
active=ITERS, repeat=1), stepped by the same hook, and the trace is exported
to ./torch-trace.json: what a user would otherwise pay for the same window.

Single-threaded (the hook runs on whichever thread steps the optimizer).
"""
import json
import os
import runpy
import sys
import time


WRAPPER_FAILED = 3  # exit status when the steps cannot be hooked (gpukit.py knows it)


def hook_steps(torch, on_step):
    """Make on_step(optimizer, args, kwargs) run after every optimizer step
    of every optimizer the script will create. Returns how ("global",
    "instance" or "step"); raises RuntimeError naming what is missing."""
    why = []
    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook
        register_optimizer_step_post_hook(on_step)
        return "global"
    except (ImportError, AttributeError) as e:
        why.append("torch.optim.optimizer.register_optimizer_step_post_hook: %s" % e)
    opt_cls = getattr(getattr(torch, "optim", None), "Optimizer", None)
    if not isinstance(opt_cls, type):
        why.append("torch.optim.Optimizer: missing")
        raise RuntimeError("; ".join(why))
    orig_init = opt_cls.__init__
    if callable(getattr(opt_cls, "register_step_post_hook", None)):
        def init_hooked(self, *a, **kw):
            orig_init(self, *a, **kw)
            if not getattr(self, "_gpukit_hooked", False):  # subclasses chain __init__
                self._gpukit_hooked = True
                self.register_step_post_hook(on_step)
        opt_cls.__init__ = init_hooked
        return "instance"
    why.append("Optimizer.register_step_post_hook: missing")

    def init_wrapped(self, *a, **kw):
        orig_init(self, *a, **kw)
        if not getattr(self, "_gpukit_hooked", False):
            self._gpukit_hooked = True
            step = self.step

            def step_wrapped(*sa, **skw):
                r = step(*sa, **skw)
                on_step(self, sa, skw)
                return r
            self.step = step_wrapped
    opt_cls.__init__ = init_wrapped
    return "step"


def main(argv):
    prof_spec = None
    args = list(argv)
    if args[:1] == ["--torch-profiler"]:
        if len(args) < 2:
            print("train_wrap.py: --torch-profiler needs SKIP,ITERS", file=sys.stderr)
            return 2
        try:
            skip, iters = (int(x) for x in args[1].split(","))
        except ValueError:
            print("train_wrap.py: --torch-profiler '%s': expected SKIP,ITERS" % args[1], file=sys.stderr)
            return 2
        prof_spec = (skip, iters)
        args = args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        print("usage: train_wrap.py [--torch-profiler SKIP,ITERS] -- TRAIN.py [ARGS...]", file=sys.stderr)
        return 2

    import torch  # the kit probed it before running us

    clock = getattr(time, "CLOCK_MONOTONIC_RAW", time.CLOCK_MONOTONIC)
    steps = []
    state = {"prof": None}

    def on_step(_opt, _args, _kwargs):
        steps.append(time.clock_gettime_ns(clock))
        if state["prof"] is not None:
            state["prof"].step()

    try:
        how = hook_steps(torch, on_step)
    except Exception as e:  # any failure here is the wrapper's, said as such
        print("train_wrap.py: cannot hook optimizer steps: %s" % e, file=sys.stderr)
        return WRAPPER_FAILED

    if prof_spec is not None:
        from torch.profiler import ProfilerActivity, profile, schedule

        def ready(p):
            p.export_chrome_trace("torch-trace.json")

        state["prof"] = profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            schedule=schedule(skip_first=prof_spec[0], wait=0, warmup=0, active=prof_spec[1], repeat=1),
            on_trace_ready=ready)
        state["prof"].start()

    code = 0
    t0 = time.clock_gettime_ns(clock)
    sys.argv = list(args)
    try:
        runpy.run_path(args[0], run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        if state["prof"] is not None:
            try:
                state["prof"].stop()
            except Exception as e:  # a profiler failure must not hide the run's result
                print("train_wrap.py: torch.profiler stop failed: %s" % e, file=sys.stderr)
        with open("steps.json", "w") as f:
            json.dump({"step_end_ns": steps, "wall_ns": time.clock_gettime_ns(clock) - t0,
                       "exit": code, "argv": args, "hook": how}, f)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
