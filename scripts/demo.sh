#!/usr/bin/env bash
# scripts/demo.sh — what `make demo` runs after building: the launch-bound
# and sync-bound examples recorded under `gpuphase record`, both reports
# printed, and an HTML report written for each. Without a GPU (nvidia-smi
# absent or failing) the examples run on simcuda, the simulated CUDA runtime
# built with the project, with each example's shipped cost model; with a GPU
# they run on the device. Each step says what it does.
#
# Environment (set by the Makefile): GP_BUILD (absolute build dir), GP_SRC.
set -u
B=${GP_BUILD:-$PWD/build}
SRC=${GP_SRC:-$PWD}
GPUPHASE=$B/bin/gpuphase
OUT=$B/demo
mkdir -p "$OUT"

step=0
say() { step=$((step + 1)); printf '\n==> demo step %d: %s\n' "$step" "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

for f in "$GPUPHASE" "$B/bin/gpuphase-report" "$B/lib/libgpuphase.so" \
	 "$B/examples/launch_bound" "$B/examples/sync_bound"; do
	[ -e "$f" ] || die "$f is missing: the build did not finish (run make and read its errors)"
done

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	say "a GPU is present ($(nvidia-smi -L | head -n 1)): the examples run on the device"
	sim=0
else
	say "no GPU here (nvidia-smi is absent or fails): the examples run on simcuda, the simulated CUDA runtime in $B/simcuda"
	[ -e "$B/simcuda/libcudart.so.13" ] || die "$B/simcuda/libcudart.so.13 is missing"
	export LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	sim=1
fi

for ex in launch_bound sync_bound; do
	trace=$OUT/$ex.gpht
	html=$OUT/$ex.html
	if [ "$sim" = 1 ]; then
		export SIMCUDA_CONFIG="$SRC/examples/$ex.simcuda"
		say "recording $ex (cost model examples/$ex.simcuda): gpuphase record -f -o $trace -- $B/examples/$ex"
	else
		unset SIMCUDA_CONFIG
		say "recording $ex: gpuphase record -f -o $trace -- $B/examples/$ex"
	fi
	"$GPUPHASE" record -f -o "$trace" -- "$B/examples/$ex" || die "$ex failed under gpuphase record (exit $?)"
	say "the report of $ex: gpuphase report $trace"
	"$GPUPHASE" report "$trace" || die "gpuphase report $trace failed (exit $?)"
	say "writing the HTML report of $ex: gpuphase export html $html $trace"
	"$GPUPHASE" export html "$html" "$trace" || die "gpuphase export html failed (exit $?)"
done

printf '\n==> demo done. HTML reports (open them in a browser):\n'
for ex in launch_bound sync_bound; do
	echo "    $OUT/$ex.html"
done
echo "Traces: $OUT/launch_bound.gpht $OUT/sync_bound.gpht (try: $GPUPHASE report --help)"
