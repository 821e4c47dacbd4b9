#!/usr/bin/env bash
# test_python_dask.sh — the Python package (python/: pip install ./python) on
# Dask: four ranks of one job recorded on simcuda (RANK / WORLD_SIZE set);
# gpuphase.report() on a 2-worker LocalCluster (one --partial task per
# trace, one --merge task) gives the report one process gives: the same
# operators and sums — the whole JSON document, in fact — with a --group-by,
# report options, a glob, and its own LocalCluster; to_dataframe() has one
# row per operator with the same sums; a missing trace is a GpuphaseError.
# Dask and pandas come from the package index into a scratch virtual
# environment (scripts/deps.sh dask, $GP_DASK_VENV, default build/dask-venv
# in the source tree): exit 77 (skipped, never passed) when the index cannot
# be reached and the environment is not there yet.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
V=${GP_DASK_VENV:-$S/build/dask-venv}
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/sync_bound"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
bash "$S/scripts/deps.sh" dask "$V"
rc=$?
if [ "$rc" != 0 ] && ! "$V/bin/python" -c "import dask.distributed, pandas, setuptools, wheel" 2>/dev/null; then
	echo "SKIP: the package index cannot be reached: no Dask or pandas to run the Python package on"
	exit 77
fi
tmp=$(mktemp -d /tmp/gp_pydask.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# the package as users install it (its dependencies are in the venv already;
# from a copy: setuptools builds in the tree it is given)
cp -r "$S/python" "$tmp/python"
"$V/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation --force-reinstall \
	"$tmp/python" >"$tmp/pip.log" 2>&1 || { echo "FAIL: pip install ./python"; tail -5 "$tmp/pip.log"; exit 1; }
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
fi
# rank K COSTMODEL PROGRAM: rank K of 4 of job 77 into $tmp/job/gpuphase-77-rK.gpht
mkdir -p "$tmp/job"
rank() {
	(cd "$tmp/job" && env RANK="$1" WORLD_SIZE=4 SLURM_JOB_ID=77 ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" \
		GPUPHASE_STACKS=sync LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		SIMCUDA_CONFIG="$2" GPUPHASE_OUTPUT="$tmp/job/gpuphase-77-r$1.gpht" "$3" >/dev/null 2>&1) ||
		{ echo "FAIL: rank $1: $3 failed"; exit 1; }
}
sed 's/^kernel step_kernel exec_ns=300000/kernel step_kernel exec_ns=900000/' "$S/examples/sync_bound.simcuda" >"$tmp/slow.simcuda"
rank 0 "$S/examples/sync_bound.simcuda" "$B/examples/sync_bound"
rank 1 "$S/examples/sync_bound.simcuda" "$B/examples/sync_bound"
rank 2 "$tmp/slow.simcuda" "$B/examples/sync_bound"
rank 3 "$S/examples/launch_bound.simcuda" "$B/examples/launch_bound"

cd "$tmp" || exit 1 # import the installed package, not the source tree's
GPUPHASE_REPORT=$R timeout 600 "$V/bin/python" "$S/tests/e2e/python_dask_check.py" "$tmp/job"
rc=$?
[ "$rc" = 0 ] && echo "test_python_dask: gpuphase.report on Dask equals the one-process report" ||
	echo "FAIL: test_python_dask (exit $rc)"
exit "$rc"
