"""python_dask_check.py JOBDIR — the checks of tests/e2e/test_python_dask.sh,
run with the scratch environment's Python (from a file, not stdin: Dask's
worker processes start by importing the main module). The four ranks'
traces in JOBDIR go through gpuphase.report() on a 2-worker LocalCluster and
through gpuphase-report ($GPUPHASE_REPORT) in one process; exit 0 when every
report agrees."""
import glob
import json
import os
import subprocess
import sys

import gpuphase
from dask.distributed import Client, LocalCluster

FAILS = []


def one_process(args, paths):
    """gpuphase-report --format json in this process."""
    out = subprocess.run([os.environ["GPUPHASE_REPORT"], "--format", "json", *args, *paths], check=True,
                         stdout=subprocess.PIPE).stdout
    return json.loads(out)


def check(what, got, want):
    """The same operators and sums, four ranks, and the same document."""
    gops = {o["name"]: o for o in got["operators"]}
    wops = {o["name"]: o for o in want["operators"]}
    if set(gops) != set(wops):
        FAILS.append(f"{what}: operators {sorted(gops)} != {sorted(wops)}")
        return
    for n, o in wops.items():
        for k in ("count", "launch_ns", "queue_ns", "execute_ns", "sync_ns", "total_ns", "execute_p99_ns"):
            if gops[n][k] != o[k]:
                FAILS.append(f"{what}: {n}.{k} {gops[n][k]} != {o[k]}")
    if len(got["ranks"]) != 4:
        FAILS.append(f"{what}: {len(got['ranks'])} ranks, not 4")
    if got != want:  # the whole document: the report one process gives
        FAILS.append(f"{what}: the JSON reports differ")
    else:
        print(f"ok   {what}: {len(gops)} operators, {len(got['ranks'])} ranks, the same JSON report")


def main():
    job = sys.argv[1]
    traces = sorted(glob.glob(os.path.join(job, "gpuphase-77-r*.gpht")))
    assert len(traces) == 4, traces
    assert gpuphase.__file__.startswith(sys.prefix), f"not the installed package: {gpuphase.__file__}"

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        rep = gpuphase.report(traces, client=client)
        check("2-worker LocalCluster", rep, one_process([], traces))
        opts = ["--straggler-pct", "5", "--top", "3"]
        check("group_by=callsite, --straggler-pct 5 --top 3",
              gpuphase.report(traces, client=client, group_by="callsite", args=opts),
              one_process(["--group-by", "callsite", *opts], traces))
        check("a glob", gpuphase.report(os.path.join(job, "gpuphase-77-r*.gpht"), client=client), rep)
        try:
            gpuphase.report([traces[0], os.path.join(job, "missing.gpht")], client=client)
            FAILS.append("a missing trace did not raise")
        except gpuphase.GpuphaseError as e:
            assert "missing.gpht" in str(e), e
            print("ok   a missing trace: GpuphaseError:", str(e).splitlines()[0])

    # its own LocalCluster, started and closed
    check("its own LocalCluster", gpuphase.report(traces, n_workers=2), rep)

    df = gpuphase.to_dataframe(rep)
    names = [o["name"] for o in rep["operators"]]
    assert list(df["name"]) == names, (list(df["name"]), names)
    for k in ("count", "launch_ns", "execute_ns", "sync_ns"):
        if int(df[k].sum()) != sum(o[k] for o in rep["operators"]):
            FAILS.append(f"to_dataframe: the {k} column does not sum to the operators'")
    print(f"ok   to_dataframe: {len(df)} rows x {len(df.columns)} columns")
    for f in FAILS:
        print("FAIL:", f)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
