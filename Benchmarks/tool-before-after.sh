#!/usr/bin/env bash
# Interleaved before/after comparison of the `courier` tool against the curl command line: each
# repetition runs `curl -o FILE`, the old `courier -o FILE` and the new one right after each other on
# the same URL, then prints, per courier, the median of the per-repetition ratios (curl seconds ÷
# courier seconds), the median MB/s, the median CPU seconds (user + system) and the peak RSS.
#
# Usage: BEFORE=/path/to/old/courier AFTER=/path/to/new/courier URL=http://127.0.0.1:PORT/big.bin \
#        [REPS=15] [OUT=/tmp/courier-tool-out.bin] [SIZE=bytes, 536870912] Benchmarks/tool-before-after.sh
# The server is yours to start (Benchmarks/run.sh's nginx, or any that serves a large file on
# 127.0.0.1); OUT should be on the file system of $TMPDIR (or /tmp), as a real download's would be.
# Needs GNU time (/usr/bin/time) and python3. Results: Documentation/Performance.md, "The courier tool".
set -euo pipefail
: "${BEFORE:?the old courier binary}" "${AFTER:?the new courier binary}" "${URL:?the URL of a large file on 127.0.0.1}"
REPS="${REPS:-15}"
OUT="${OUT:-/tmp/courier-tool-out.bin}"
RUNS="$(mktemp)"
trap 'rm -f "$RUNS" "$OUT"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((rep = 1; rep <= REPS; rep++)); do
    for pair in "curl=curl" "before=$BEFORE" "after=$AFTER"; do
        name="${pair%%=*}" binary="${pair#*=}"
        rm -f "$OUT"
        sync
        /usr/bin/time -a -o "$RUNS" -f "$rep $name %e %U %S %M" "$binary" -sS -o "$OUT" "$URL" >/dev/null
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
SIZE="${SIZE:-536870912}" python3 - "$RUNS" <<'PY'
import collections, os, statistics, sys
SIZE = int(os.environ.get("SIZE", 512 << 20))
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    fields = line.split()
    if len(fields) == 6:
        rep, name, wall, user, system, rss = fields
        runs[name][int(rep)] = (float(wall), float(user) + float(system), int(rss))
curl = runs["curl"]
def mbps(seconds): return SIZE / seconds / 1e6
def line(name, rows, ratios=None):
    walls = [r[0] for r in rows.values()]
    text = f"{name}: {mbps(statistics.median(walls)):.0f} MB/s (median), CPU {statistics.median(r[1] for r in rows.values()):.2f} s, peak RSS {max(r[2] for r in rows.values()) / 1024:.1f} MiB"
    if ratios:
        text += f"; ÷ curl: median {statistics.median(ratios):.2f} (per repetition: {', '.join(f'{x:.2f}' for x in ratios)})"
    print(text)
line("curl", curl)
for name in ("before", "after"):
    rows = runs[name]
    line(name, rows, [curl[rep][0] / rows[rep][0] for rep in sorted(rows) if rep in curl])
PY
