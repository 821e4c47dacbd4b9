#!/usr/bin/env bash
# tests/layout/test_report_layers.sh — the report's folders keep one direction
# of calls (report/module.mk lists the layers). Reads sources only, builds
# nothing, runs in a second. Parts:
#   layers   no file of report/ includes a header of a higher layer:
#            util (0) < core (1) < analyses (2) < outputs (3) < top (4: the
#            driver in report/ itself, report/bench/, report/tests/); a
#            folder under report/ with no layer is a failure too
#   circles  no two folders include each other, directly or round a loop
#   maps     the module maps are true and complete: report/core/analysis_int.h
#            names every .c of report/core/ and only files that exist;
#            report/core/analysis.h names only files that exist;
#            report/module.mk names every folder of report/ and no other
#   tamper   the checks run on a copy of report/ with an upward include, a
#            folder circle, a file left out of a map and a map naming a file
#            that does not exist injected: each must be caught
# Environment (make test): GP_SRC (default: this checkout).
set -u
S=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null || { echo "SKIP: python3 is missing"; exit 77; }

# check ROOT PART: runs one part's check on the tree at ROOT (its report/,
# collector/); prints one line per violation, exits 1 when there is one.
check() {
	python3 - "$1" "$2" <<'EOF'
import os, re, sys
root, part = sys.argv[1], sys.argv[2]
R = os.path.join(root, 'report')
LAYERS = {'report/util': 0, 'report/core': 1, 'report/analyses': 2, 'report/outputs': 3,
          'report/outputs/assets': 3, 'report': 4, 'report/bench': 4, 'report/tests': 4}
NAMES = ['util', 'core', 'analyses', 'outputs', 'top']
def rel(p):
    return os.path.relpath(p, root)
files, folders = [], []
for d, ds, fs in os.walk(R):
    ds.sort()
    folders.append(rel(d))
    files += [rel(os.path.join(d, f)) for f in sorted(fs) if f.endswith(('.c', '.h'))]
def resolve(frm, s):
    for c in (os.path.join(os.path.dirname(frm), s), s, os.path.join('collector', s)):
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None
inc = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
edges = {}  # (from folder, to folder) -> an example
bad = []
for f in files:
    for n, line in enumerate(open(os.path.join(root, f), errors='replace'), 1):
        m = inc.match(line)
        t = m and resolve(f, m.group(1))
        if not t or not t.startswith('report/'):
            continue
        a, b = os.path.dirname(f), os.path.dirname(t)
        if part == 'layers' and a in LAYERS and b in LAYERS and LAYERS[b] > LAYERS[a]:
            bad.append('%s:%d includes %s: %s layer above %s' % (f, n, t, NAMES[LAYERS[b]], NAMES[LAYERS[a]]))
        if a != b:
            edges.setdefault((a, b), '%s:%d' % (f, n))
if part == 'layers':
    bad += ['%s/: a folder with no layer (add it to this test and report/module.mk)' % d
            for d in folders if d not in LAYERS]
elif part == 'circles':
    succ = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
    def path(a, goal, seen):  # a folder path a -> ... -> goal, or None
        for b in sorted(succ.get(a, [])):
            if b == goal:
                return [a, b]
            if b not in seen:
                seen.add(b)
                p = path(b, goal, seen)
                if p:
                    return [a] + p
        return None
    for a in sorted(succ):
        p = path(a, a, set())
        if p and min(p[:-1]) == a:  # each loop once, from its smallest folder
            bad.append('folder circle %s (%s)' % (' -> '.join(p), ', '.join(
                edges[(p[i], p[i + 1])] for i in range(len(p) - 1))))
elif part == 'maps':
    tok = re.compile(r'[A-Za-z0-9_./-]*[A-Za-z0-9_]\.[ch]\b')
    def head(path):  # the file's opening comment
        t = open(os.path.join(root, path)).read()
        return t[:t.index('*/')] if '*/' in t else ''
    def exists(mapfile, name):
        d = os.path.dirname(mapfile)
        return any(os.path.isfile(os.path.join(root, c, name))
                   for c in (d, os.path.dirname(d), 'report/util', '', 'collector'))
    for m, whole in (('report/core/analysis_int.h', 'report/core'), ('report/core/analysis.h', None)):
        if not os.path.isfile(os.path.join(root, m)):
            bad.append('%s: the module map is gone' % m)
            continue
        names = set(tok.findall(head(m)))
        bad += ['%s names %s, which does not exist' % (m, x) for x in sorted(names) if not exists(m, x)]
        if whole:
            base = {os.path.basename(x) for x in names}
            bad += ['%s leaves out %s' % (m, f) for f in files
                    if os.path.dirname(f) == whole and f.endswith('.c') and os.path.basename(f) not in base]
    mk = ''.join(l for l in open(os.path.join(R, 'module.mk')) if l.startswith('#'))
    named = {x.rstrip('/') for x in re.findall(r'report/[a-z_/]+/', mk)}
    bad += ['report/module.mk leaves out the folder %s/' % d for d in folders if d != 'report' and d not in named]
    bad += ['report/module.mk names %s/, which does not exist' % d for d in sorted(named) if d not in folders]
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
}

rc=0
for part in layers circles maps; do
	if out=$(check "$S" $part); then
		echo "PART $part: PASS"
	else
		echo "PART $part: FAIL $(echo "$out" | head -1)"; echo "$out" | sed 's/^/  /'; rc=1
	fi
done

# The tamper control: each injected fault on a copy must make its check fail.
tmp=$(mktemp -d /tmp/gp_layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fresh() { rm -rf "$tmp/t" && mkdir -p "$tmp/t" && cp -r "$S/report" "$S/collector" "$tmp/t/"; }
missed=""
expect_fail() { # PART WHAT PATTERN: the check of PART on $tmp/t fails, naming PATTERN
	check "$tmp/t" "$1" >"$tmp/out" 2>&1 && missed="$missed; $2 passed"
	grep -q -- "$3" "$tmp/out" || missed="$missed; $2 not named"
}
fresh; sed -i '0,/^#include/s//#include "report\/core\/analysis.h"\n#include/' "$tmp/t/report/util/map.c"
expect_fail layers "util/map.c including core/analysis.h" 'report/util/map.c:[0-9]* includes report/core/analysis.h'
fresh; sed -i '0,/^#include/s//#include "report\/outputs\/output.h"\n#include/' "$tmp/t/report/analyses/registry.c"
expect_fail layers "analyses/registry.c including outputs/output.h" 'registry.c:[0-9]* includes report/outputs/output.h: outputs layer above analyses'
fresh; mkdir "$tmp/t/report/extra" && echo '/* extra.h */' >"$tmp/t/report/extra/extra.h"
expect_fail layers "a folder with no layer" 'report/extra/: a folder with no layer'
fresh; printf '/* loop.h */\n#include "report/pipeline.h"\n' >"$tmp/t/report/bench/loop.h"
sed -i '0,/^#include/s//#include "report\/bench\/loop.h"\n#include/' "$tmp/t/report/pipeline.c"
expect_fail circles "report/ and report/bench/ including each other" 'folder circle report -> report/bench -> report'
fresh; sed -i 's/symbolize\.c/symbolise/g' "$tmp/t/report/core/analysis_int.h"
expect_fail maps "analysis_int.h leaving out symbolize.c" 'leaves out report/core/symbolize.c'
fresh; sed -i '0,/ \*   join\.c /s// *   ghost.c  gone\n *   join.c /' "$tmp/t/report/core/analysis_int.h"
expect_fail maps "analysis_int.h naming ghost.c" 'names ghost.c, which does not exist'
fresh; sed -i 's#report/bench/#report/bnch/#g' "$tmp/t/report/module.mk"
expect_fail maps "module.mk leaving out report/bench/" 'leaves out the folder report/bench/'
if [ -z "$missed" ]; then
	echo "PART tamper: PASS 7 injected faults caught"
else
	echo "PART tamper: FAIL not caught${missed}"; rc=1
fi
exit $rc
