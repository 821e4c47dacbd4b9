"""gpuphase on Dask: the report of many traces, analysed across a cluster.

A job of many ranks writes one trace per rank. ``gpuphase.report`` maps the
report's per-trace pass (``gpuphase-report --partial``: two streaming passes
over the trace, bounded memory) over a Dask cluster, one task per trace, and
merges the partial results (``gpuphase-report --merge``: linear in operators,
not records) into the JSON report, as a dict — the same report
``gpuphase-report --merge --format json TRACE...`` gives in one process
(docs/partial-format.md says why it is exact).

This module holds no compiled code: it runs ``gpuphase-report`` (the one
installed with this package by the wheel of ``pip install .``, else the one in
``PATH``; ``$GPUPHASE_REPORT`` or ``tool=`` name another one), which every
worker needs. Traces are read where the workers run: on a
cluster, give paths every worker can open (a shared file system). The partial
results travel back through Dask as bytes (kilobytes per trace), so the merge
needs no shared directory.

    import gpuphase
    rep = gpuphase.report(["r0.gpht", "r1.gpht"])        # a LocalCluster
    rep = gpuphase.report(traces, client=Client("tcp://scheduler:8786"))
    df = gpuphase.to_dataframe(rep)                       # one row per operator
"""

import glob as _glob
import json as _json
import os as _os
import shutil as _shutil
import subprocess as _subprocess
import tempfile as _tempfile
import warnings as _warnings

__all__ = ["report", "partial", "merge", "to_dataframe", "GpuphaseError", "GpuphaseWarning"]
__version__ = "0.1.0"

# gpuphase-report's exit statuses (docs/metrics.md "Exit status")
_EXIT_TRUNCATED = 3


class GpuphaseError(RuntimeError):
    """gpuphase-report failed: its message and exit status."""

    def __init__(self, message, returncode=None):
        super().__init__(message)
        self.returncode = returncode

    def __reduce__(self):  # raised on a worker, re-raised here: keep both
        return (type(self), (str(self), self.returncode))


class GpuphaseWarning(UserWarning):
    """A trace was truncated (no footer): the report covers it up to its last whole block."""


# where the wheel built by `pip install .` puts its programs (_commands.py)
_BUNDLED_REPORT = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "bin", "gpuphase-report")


def _tool(tool=None):
    """The gpuphase-report to run: tool, $GPUPHASE_REPORT, the wheel's own, or the one in PATH."""
    bundled = _BUNDLED_REPORT if _os.access(_BUNDLED_REPORT, _os.X_OK) else None
    path = tool or _os.environ.get("GPUPHASE_REPORT") or bundled or _shutil.which("gpuphase-report")
    if not path:
        raise GpuphaseError("gpuphase-report is not installed here (put it in PATH, set GPUPHASE_REPORT "
                            "or pass tool=)")
    return path


def _shaping(group_by=None, outlier_factor=None, whatif=None):
    """The options that shape the per-trace aggregates (given to --partial)."""
    args = []
    if group_by is not None:
        args += ["--group-by", str(group_by)]
    if outlier_factor is not None:
        args += ["--outlier-factor", repr(float(outlier_factor))]
    if whatif is not None:
        args += ["--whatif", str(whatif)]
    return args


def _run(cmd, cwd=None):
    """Run gpuphase-report; (stdout bytes, stderr text, exit status). A tool
    that cannot be run (missing, not executable) is a GpuphaseError."""
    try:
        p = _subprocess.run(cmd, cwd=cwd, stdout=_subprocess.PIPE, stderr=_subprocess.PIPE)
    except OSError as e:
        raise GpuphaseError(f"cannot run {cmd[0]}: {e.strerror or e}") from e
    return p.stdout, p.stderr.decode("utf-8", "replace"), p.returncode


def partial(trace, *, tool=None, cwd=None, group_by=None, outlier_factor=None, whatif=None):
    """The partial results of one trace, as bytes (what a map task returns).

    cwd: the directory a relative trace path is read from (the report prints
    the path as given). A truncated trace still gives its partial results
    (the merge warns about it)."""
    d = _tempfile.mkdtemp(prefix="gpuphase-partial-")
    try:
        out = _os.path.join(d, "trace.gpp")
        if cwd is not None and not _os.path.isdir(cwd):
            cwd = None  # a worker on another host: its own directory
        # "--": a trace path that starts with "-" is a path, not an option
        cmd = [_tool(tool), "--partial", "--allow-truncated", *_shaping(group_by, outlier_factor, whatif),
               "-o", out, "--", _os.fspath(trace)]
        _, err, rc = _run(cmd, cwd=cwd)
        if rc != 0:
            raise GpuphaseError(err.strip() or f"gpuphase-report --partial exited {rc}", rc)
        try:
            with open(out, "rb") as f:
                return f.read()
        except OSError as e:
            raise GpuphaseError(f"{cmd[0]} --partial wrote no partial results for {_os.fspath(trace)}: "
                                f"{e.strerror or e}") from e
    finally:
        _shutil.rmtree(d, ignore_errors=True)


def merge(partials, *, tool=None, args=(), strict=False):
    """The JSON report (a dict) of partial results: bytes or .gpp paths, in order.

    args: options of the printed report (--sort, --top, --filter, --thresholds,
    --straggler-pct, ...). A truncated trace is a GpuphaseWarning (strict:
    a GpuphaseError)."""
    d = _tempfile.mkdtemp(prefix="gpuphase-merge-")
    try:
        files = []
        for i, p in enumerate(partials):
            if isinstance(p, (bytes, bytearray, memoryview)):
                name = _os.path.join(d, f"{i:06d}.gpp")
                with open(name, "wb") as f:
                    f.write(p)
                files.append(name)
            else:
                files.append(_os.fspath(p))
        if not files:
            raise GpuphaseError("no partial results to merge")
        # args are options; "--" ends them: a .gpp path starting with "-" is a path
        cmd = [_tool(tool), "--merge", "--format", "json", *[str(a) for a in args], "--", *files]
        out, err, rc = _run(cmd)
        if rc == _EXIT_TRUNCATED and not strict:
            _warnings.warn(err.strip(), GpuphaseWarning, stacklevel=3)
        elif rc != 0:
            raise GpuphaseError(err.strip() or f"gpuphase-report --merge exited {rc}", rc)
        try:
            return _json.loads(out)
        except ValueError as e:  # json.JSONDecodeError, or bytes that are no UTF-8
            raise GpuphaseError(f"{cmd[0]} --merge printed no JSON report ({e})", rc) from e
    finally:
        _shutil.rmtree(d, ignore_errors=True)


def _traces(traces):
    """A list of trace paths: a glob pattern, a path, or an iterable of them."""
    if isinstance(traces, (str, bytes, _os.PathLike)):
        t = _os.fspath(traces)
        if isinstance(t, bytes):
            t = _os.fsdecode(t)
        found = sorted(_glob.glob(t)) if _glob.has_magic(t) else [t]
        if not found:
            raise GpuphaseError(f"{t}: no trace matches")
        return found
    return [_os.fspath(t) for t in traces]


def _map_task(trace, tool, cwd, shaping):
    """The map step on a worker: one trace's partial results (bytes)."""
    return partial(trace, tool=tool, cwd=cwd, **shaping)


def _merge_task(parts, tool, args, strict):
    """The reduce step on a worker: the JSON report and its warnings (texts:
    warnings do not travel back from a worker)."""
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        rep = merge(parts, tool=tool, args=args, strict=strict)
    return rep, [str(w.message) for w in caught]


def report(traces, client=None, *, group_by=None, outlier_factor=None, whatif=None, args=(), tool=None,
           n_workers=None, strict=False):
    """The JSON report of traces (a dict), analysed on a Dask cluster.

    traces: paths (or a glob pattern) of the traces, e.g. the ranks of one
    job. client: a dask.distributed.Client; without one a LocalCluster of
    n_workers processes (default: one per trace, at most the CPU count) is
    started and closed. group_by, outlier_factor, whatif: the options that
    shape each trace's analysis (gpuphase-report's --group-by,
    --outlier-factor, --whatif); args: options of the printed report
    (e.g. ["--straggler-pct", "5"]).

    One task per trace runs ``gpuphase-report --partial`` on a worker (the
    trace must be readable there); one task merges their partial results with
    ``gpuphase-report --merge --format json``. The result is the report one
    process gives on all the traces (docs/report-json.md, docs/multinode.md).
    Truncated traces are a GpuphaseWarning (strict=True: a GpuphaseError)."""
    paths = _traces(traces)
    if not paths:
        raise GpuphaseError("no trace given")
    from dask.distributed import Client, LocalCluster  # the package's one dependency

    own = None
    if client is None:
        n = n_workers or max(1, min(len(paths), _os.cpu_count() or 1))
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        own = (client, cluster)
    try:
        shaping = {"group_by": group_by, "outlier_factor": outlier_factor, "whatif": whatif}
        cwd = _os.getcwd()
        # pure=False: a trace may have changed since the last call
        parts = [client.submit(_map_task, p, tool, cwd, shaping, pure=False) for p in paths]
        done = client.submit(_merge_task, parts, tool, list(args), strict, pure=False)
        rep, warnings = done.result()
        for w in warnings:
            _warnings.warn(w, GpuphaseWarning, stacklevel=2)
        return rep
    finally:
        if own:
            own[0].close()
            own[1].close()


def to_dataframe(rep):
    """One row per operator of a JSON report (report()'s dict, or the
    parsed output of gpuphase-report --format json): a pandas DataFrame with
    the operators' fields (docs/report-json.md "operators[]") as columns,
    in report order."""
    import pandas as pd

    ops = rep.get("operators", []) if isinstance(rep, dict) else []
    df = pd.DataFrame.from_records(ops)
    if "name" in df.columns:
        df = df.set_index("name", drop=False)
        df.index.name = "operator"
    return df
