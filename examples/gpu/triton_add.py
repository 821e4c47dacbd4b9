#!/usr/bin/env python3
"""triton_add.py — a Triton vector-add kernel for the real-GPU validation kit
(tests/gpu/run.sh, check "triton").

Triton launches its kernels with cuLaunchKernel / cuLaunchKernelEx straight
into the driver, so no cudart preload hook ever sees them; only CUPTI does
(DRIVER API records + kernel records). The kit runs this script under the
preload and checks that the report holds exactly ITERS + 1 launches of
`add_kernel` (one warm-up that compiles, ITERS timed) and that each has a
launch time taken from a CUPTI API record.

Usage: triton_add.py [ITERS] (default 50). Exit status: 0 ok, 1 wrong result,
2 bad argument, 77 skipped (torch, triton or a CUDA device missing; the
reason is printed on stderr). stdout is deterministic; timings go to stderr
as "timing: <what> <ms>" (CUDA events around the timed loop).
"""
import sys

SKIP = 77

# Imported at module level: a @triton.jit function resolves the names it uses
# (tl) in its module's globals, not in an enclosing function's locals.
try:
    import torch
    import triton
    import triton.language as tl
    IMPORT_ERROR = None
except Exception as e:  # ImportError, or a broken install raising anything else
    IMPORT_ERROR = e

if IMPORT_ERROR is None:
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(axis=0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x + y, mask=mask)


def main(argv):
    iters = 50
    if len(argv) > 2:
        print("usage: triton_add.py [ITERS]", file=sys.stderr)
        return 2
    if len(argv) == 2:
        try:
            iters = int(argv[1])
        except ValueError:
            iters = -1
        if not 1 <= iters <= 100000:
            print("triton_add.py: ITERS='%s': expected an integer from 1 to 100000" % argv[1],
                  file=sys.stderr)
            return 2
    if IMPORT_ERROR is not None:
        print("triton_add.py: SKIP: cannot import torch/triton: %s" % IMPORT_ERROR, file=sys.stderr)
        return SKIP
    if not torch.cuda.is_available():
        print("triton_add.py: SKIP: torch sees no CUDA device", file=sys.stderr)
        return SKIP

    n = 1 << 24
    # Exact small integers, so the result is checked exactly.
    x = (torch.arange(n, device="cuda", dtype=torch.int64) % 7).to(torch.float32)
    y = (torch.arange(n, device="cuda", dtype=torch.int64) % 5).to(torch.float32)
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)

    add_kernel[grid](x, y, out, n, BLOCK=1024)  # warm-up: compiles and loads
    torch.cuda.synchronize()
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(iters):
        add_kernel[grid](x, y, out, n, BLOCK=1024)
    e1.record()
    e1.synchronize()
    ok = bool(torch.equal(out, x + y))
    total = int(out.sum().item())
    print("triton_add: n=%d iters=%d launches=%d sum=%d %s" % (n, iters, iters + 1, total,
                                                                "ok" if ok else "WRONG"))
    print("timing: add_kernel_loop %.3f" % e0.elapsed_time(e1), file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
