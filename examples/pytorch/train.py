#!/usr/bin/env python3
"""examples/pytorch/train.py - a small PyTorch training loop to profile with gpuphase.

A two-layer MLP (or, with --model transformer, one small transformer encoder
layer) trained on random data with Adam. Each step ends with loss.item(), a
host-device sync, like most real training loops - the kind of sync point
gpuphase attributes to the operator it waited for.

    gpuphase record -w skip=20,iters=10 -- python3 examples/pytorch/train.py
    gpuphase record --nvtx -w skip=20,iters=10 -- python3 examples/pytorch/train.py --nvtx
    gpuphase report gpuphase-*.gpht

or without the command:

    LD_PRELOAD=build/lib/libgpuphase.so GPUPHASE_WINDOW=skip=20,iters=10 \\
        python3 examples/pytorch/train.py

--nvtx wraps the loop in torch.autograd.profiler.emit_nvtx(), so operators
are named by their ATen op (aten::addmm, aten::mm, ...) - record with --nvtx
too. Where PyTorch or a CUDA GPU is missing it says so and exits 0 (skipped).
"""
import argparse
import contextlib
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description="Small PyTorch training loop for gpuphase.")
    p.add_argument("--steps", type=int, default=50, help="training steps (default 50)")
    p.add_argument("--batch", type=int, default=256, help="batch size (default 256)")
    p.add_argument("--width", type=int, default=1024, help="hidden width (default 1024)")
    p.add_argument("--model", choices=("mlp", "transformer"), default="mlp")
    p.add_argument("--nvtx", action="store_true",
                   help="name operators with NVTX ranges (torch.autograd.profiler.emit_nvtx)")
    return p.parse_args()


def build_model(torch, args):
    nn = torch.nn
    if args.model == "mlp":
        return nn.Sequential(nn.Linear(args.width, args.width), nn.ReLU(),
                             nn.Linear(args.width, args.width), nn.ReLU(),
                             nn.Linear(args.width, 10))
    layer = nn.TransformerEncoderLayer(d_model=args.width, nhead=8,
                                       dim_feedforward=2 * args.width, batch_first=True)
    return nn.Sequential(layer, nn.Flatten(), nn.LazyLinear(10))


def main():
    args = parse_args()
    try:
        import torch
    except ImportError:
        print("train.py: skipped: PyTorch is not installed (pip install torch)", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        print("train.py: skipped: no CUDA GPU available to PyTorch", file=sys.stderr)
        return 0

    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = build_model(torch, args).to(dev)
    if args.model == "mlp":
        x = torch.randn(args.batch, args.width, device=dev)
    else:
        x = torch.randn(args.batch, 16, args.width, device=dev)
    y = torch.randint(0, 10, (args.batch,), device=dev)
    if args.model == "transformer":
        model(x)  # materialise the lazy layer before the optimiser sees it
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()

    ctx = torch.autograd.profiler.emit_nvtx() if args.nvtx else contextlib.nullcontext()
    t0 = time.perf_counter()
    with ctx:
        for step in range(args.steps):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            value = loss.item()  # host-device sync every step
            if step % 10 == 0:
                print(f"step {step:4d}  loss {value:.4f}")
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"train.py: {args.steps} steps in {dt:.3f} s ({dt / args.steps * 1e3:.2f} ms/step)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
