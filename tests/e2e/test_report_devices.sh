#!/usr/bin/env bash
# test_report_devices.sh — the report against simcuda's truth on two devices
# (simcuda `devices 2`; tests/e2e/report_devices.cu): per-device streams, a
# cross-device event dependency, synchronizes of one device's stream and
# event while the other is current, blocking and peer copies, cudaSetDevice
# switching, and the usual multi-GPU step (the same kernel on each device,
# each device synchronized in turn). Every phase must equal the truth per
# operator and per stream (--group-by stream: "device D stream S", so a wait
# charged to the right kernel on the wrong device shows), GPU busy is the
# union per device, idle at most devices x wall, both devices listed, and
# every blocking call keeps its call site. Run with CUPTI pinned to the kind
# one and again as awkward as the real one (records late and interleaved,
# GPU clock off the host's).
# A device-wide or event wait during which an op of the other device ended
# (a loaded host keeping the call past the end of what it waited for, or a
# call that waited for nothing) is ambiguous in a trace: it records no device
# for such a wait (docs/metrics.md §3, several devices). The check then takes
# the report's choice for that wait and says so; more than a quarter of them
# ambiguous fails. Likewise a blocking copy that waited for nothing while an
# op of a non-blocking stream ended inside it, before its own transfer.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME; KEEP=1
# keeps the files.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
CHECK="python3 $S/tests/e2e/report_truth_check.py"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/tests/e2e/report_devices"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_report_devices.XXXXXX)
if [ -n "${KEEP:-}" ]; then echo "files kept in $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
fi
PIN="SIMCUDA_CUPTI_CLOCK_OFFSET_NS=0 SIMCUDA_CUPTI_CLOCK_DRIFT_PPM=0 SIMCUDA_CUPTI_API_OVERHEAD_NS=0"
PIN="$PIN SIMCUDA_CUPTI_LAUNCH_OVERHEAD_NS=0"
AWKWARD="SIMCUDA_CUPTI_DELIVERY_DELAY_NS=300000000 SIMCUDA_CUPTI_CLOCK_OFFSET_NS=3000 SIMCUDA_CUPTI_CLOCK_DRIFT_PPM=2"

# one NAME ENV...: run, report (kernel and stream grouping, SQLite waits), check
one() {
	local name=$1
	shift
	rm -f "$tmp/$name".*
	# shellcheck disable=SC2086 # the env lists are lists of words
	(cd "$tmp" && env "$@" ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$S/tests/e2e/report_devices.simcuda" SIMCUDA_TRUTH="$tmp/$name.truth" \
		GPUPHASE_OUTPUT="$tmp/$name.gpht" GPUPHASE_STACKS=sync "$B/tests/e2e/report_devices" \
		>"$tmp/$name.out" 2>&1) || { echo "$name: program failed: $(tail -2 "$tmp/$name.out")"; return 1; }
	"$R" --format json "$tmp/$name.gpht" >"$tmp/$name.json" 2>"$tmp/$name.err" &&
		"$R" --format json --group-by stream "$tmp/$name.gpht" >"$tmp/$name.s.json" 2>>"$tmp/$name.err" &&
		"$R" --export sqlite "$tmp/$name.db" "$tmp/$name.gpht" 2>>"$tmp/$name.err" ||
		{ echo "$name: report failed: $(head -2 "$tmp/$name.err")"; return 1; }
	# the truth, with the ambiguous waits given the report's choice
	python3 - "$tmp/$name.truth" "$tmp/$name.db" "$tmp/$name.truth2" <<'PY' || return 1
import json, sqlite3, sys
truth = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ops = {t["corr"]: t for t in truth if t["type"] in ("kernel", "memcpy", "memset")}
dev = lambda o: 1 if o["stream"] in (8, 14) else 0  # report_devices.cu: device 1's legacy and own stream
got = {r[0]: r[1] for r in sqlite3.connect(sys.argv[2]).execute(
    "SELECT correlationId, CASE WHEN attributed = 1 THEN op_correlationId ELSE 0 END FROM GPUPHASE_SYNCS")}
waits = {}  # api corr -> the truth's sync lines (a call may have none)
for t in truth:
    if t["type"] == "sync":
        waits.setdefault(t["api_corr"], []).append(t)
n = calls = 0
for t in truth:
    if t["type"] != "api" or t["name"] not in ("cudaDeviceSynchronize", "cudaEventSynchronize"):
        continue
    calls += 1
    s = (waits.get(t["corr"]) or [None])[0]
    w, g = ops.get(s["waited_corr"]) if s else None, ops.get(got.get(t["corr"], 0))
    # the report's op ended inside the call (or within the clock tolerance
    # after it), on another device than the one the call waited for, or the
    # call waited for nothing: the trace has no device for a device-wide or
    # event wait (docs/metrics.md §3)
    if g and g is not w and t["start"] < g["end"] <= t["end"] + 10000 and (w is None or dev(g) != dev(w)):
        print(f"ambiguous: {t['name']} ({(t['end'] - t['start']) / 1e3:.0f} us, waited for"
              f" {'stream %d' % w['stream'] if w else 'nothing'}): an op of the other device (stream"
              f" {g['stream']}) ended in it; the report's choice is taken")
        waits[t["corr"]] = [dict(s or {"type": "sync", "kind": "device" if "Device" in t["name"] else "event",
                                       "tid": t["tid"], "start": t["start"], "end": t["end"],
                                       "api_corr": t["corr"]}, waited_corr=g["corr"])]
        n += 1
with open(sys.argv[3], "w") as out:
    for t in truth:
        if t["type"] != "sync":
            out.write(json.dumps(t) + "\n")
    for ws in waits.values():
        for t in ws:
            out.write(json.dumps(t) + "\n")
# a blocking copy that waited for nothing while an op of a non-blocking
# stream of its device ended inside it, before its own transfer: the trace
# cannot tell that stream from one the legacy stream waits for
own = {t["api_corr"]: t for t in ops.values()}
for t in truth:
    if t["type"] != "api" or t["name"] != "cudaMemcpy" or waits.get(t["corr"]) or not got.get(t["corr"]):
        continue
    g, o = ops.get(got[t["corr"]]), own.get(t["corr"])
    if g and o and g["stream"] != o["stream"] and t["start"] < g["end"] <= o["start"]:
        print(f"ambiguous: cudaMemcpy waited for nothing; stream {g['stream']}'s op ended in it before its transfer")
        waits[t["corr"]] = [{"type": "sync", "kind": "memcpy", "tid": t["tid"], "start": t["start"],
                             "end": g["end"], "api_corr": t["corr"], "waited_corr": g["corr"]}]
print(f"{n} of {calls} device-wide and event waits ambiguous")
if n > calls // 4:
    print(f"MISMATCH too many ambiguous waits ({n} of {calls}): not the loaded host alone")
    sys.exit(1)
PY
	echo "--- $name"
	$CHECK "$tmp/$name.truth2" "$tmp/$name.s.json" >"$tmp/$name.s.check" || {
		grep MISMATCH "$tmp/$name.s.check"
		return 1
	}
	STREAM_REPORT="$tmp/$name.s.json" $CHECK "$tmp/$name.truth2" "$tmp/$name.json" \
		>"$tmp/$name.check" || { grep MISMATCH "$tmp/$name.check"; return 1; }
	python3 - "$tmp/$name.json" "$tmp/$name.s.json" <<'PY'
import json, sys
r, rs = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
s = r["summary"]
devs = sorted({o["name"].split()[1] for o in rs["operators"]})
bad = []
if devs != ["0", "1"]:
    bad.append(f"ops on devices {devs}, expected 0 and 1")
if len(r["trace"].get("devices", [])) != 2 if isinstance(r.get("trace"), dict) and "devices" in r["trace"] else False:
    bad.append("the header does not list two devices")
if s["gpu_idle_ns"] + s["gpu_busy_ns"] != 2 * s["wall_ns"]:
    bad.append(f"idle {s['gpu_idle_ns']} + busy {s['gpu_busy_ns']} != 2 devices x wall {s['wall_ns']}")
sites = r.get("sync_callsites", [])
if any(c["site"] == "(no stack)" for c in sites):
    bad.append("a blocking call lost its call site")
print("devices", devs, "busy", s["gpu_busy_ns"], "idle", s["gpu_idle_ns"], "wall", s["wall_ns"],
      "sync calls", {k["kind"]: k["count"] for k in s["sync_calls"]})
for b in bad:
    print("MISMATCH", b)
sys.exit(1 if bad else 0)
PY
}

# best of ATTEMPTS (3) runs each (tests/e2e/counting.sh): a loaded host can
# stretch a call over a kernel's end that it did not wait for (a blocking
# copy, an implicit sync), which no trace can tell from a wait
. "$S/tests/e2e/counting.sh"
variant_attempt() { # VARIANT: one run of it
	local variant=$1
	if [ "$variant" = kind ]; then
		# shellcheck disable=SC2086
		one "$variant" $PIN
	else
		# (the check corrects the GPU clock's offset and drift with their
		# sign: the truth's gpu_clock line)
		# shellcheck disable=SC2086
		one "$variant" $AWKWARD
	fi
}
for variant in ${VARIANTS:-kind awkward}; do
	gp_majority -n "${ATTEMPTS:-3}" "$variant" variant_attempt "$variant" ||
		fail "$variant: report disagrees with the truth on two devices in a majority of runs"
done
[ "$fails" = 0 ] && echo "test_report_devices.sh: all checks passed"
[ "$fails" = 0 ]
