#!/usr/bin/env bash
# What authentication costs a WebSocket handshake in Courier's client: connections opened and closed
# one after another (handshake, a ping answered, close handshake) against Tests/CourierTests/
# TestServers/ntlm_server.py (Python, pyspnego), on three paths: /ws-open (no authentication),
# /ws-basic (a 401, then Basic on a new connection) and /ws (a 401, then NTLM: NEGOTIATE, CHALLENGE
# and AUTHENTICATE on one new connection). The server is slow (Python) and sets the wall-clock pace,
# so the numbers that matter are the client's: each run goes under `perf stat -e
# task-clock,context-switches` with N and with 2N handshakes, and (2N run − N run) ÷ N is the cost
# of one handshake, process start and warm-up cancelled out; the load barely moves CPU time and
# switches. (Instruction counts are not available: this VM's perf has no hardware counters, and
# valgrind 3.19 crashes on the WebSocket benchmark's binaries.) Interleaved: each repetition runs the
# three paths in turn; the table shows medians. Needs perf.
#
# Knobs: BENCH_WSA_REPS [5], BENCH_WSA_HANDSHAKES [200] (N), BENCH_TIMEOUT [120].
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PACKAGE="$HERE/WebSocket"
REPS="${BENCH_WSA_REPS:-5}"
N="${BENCH_WSA_HANDSHAKES:-200}"
TIMEOUT="${BENCH_TIMEOUT:-120}"
PYTHON="${PYTHON:-python3}"
say() { printf '== %s\n' "$*" >&2; }

if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then PATH="/opt/swift/usr/bin:$PATH"; fi
perf stat -e task-clock,context-switches -x, true >/dev/null 2>&1 || { say "perf stat does not work here"; exit 1; }
"$PYTHON" -c "import spnego" 2>/dev/null || "$PYTHON" -m pip install -q -r "$HERE/../scripts/requirements-test.txt"

say "building ws-bench-courier (release)"
swift build -c release --package-path "$PACKAGE" --product ws-bench-courier >&2
BIN="$(swift build -c release --package-path "$PACKAGE" --show-bin-path)/ws-bench-courier"
WORK="$(mktemp -d)"
"$PYTHON" "$HERE/../Tests/CourierTests/TestServers/ntlm_server.py" --port-file "$WORK/ports" 2>"$WORK/server.log" &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do [ -s "$WORK/ports" ] && break; sleep 0.1; done
PORT="$("$PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))['http'])" "$WORK/ports")"
say "ntlm_server.py on port $PORT; load: $(cat /proc/loadavg)"

# run PATH COUNT: "task-clock-ms switches handshakes/s" of one run.
run() {
    local user=()
    [ "$1" != /ws-open ] && user=(--user user:secret)
    timeout "$TIMEOUT" perf stat -x, -e task-clock,context-switches -o "$WORK/perf" \
        "$BIN" handshakes --url "ws://127.0.0.1:$PORT$1" --count "$2" "${user[@]}" >"$WORK/out"
    awk -F, '/task-clock/{t=$1} /context-switches/{s=$1} END{printf "%s %s ", t, s}' "$WORK/perf"
    awk '/^RESULT handshakes/{print $3}' "$WORK/out"
}

for rep in $(seq "$REPS"); do
    for path in /ws-open /ws-basic /ws; do
        echo "$path $(run "$path" "$N") $(run "$path" $((2 * N)))"
    done
done | tee "$WORK/raw" >&2

"$PYTHON" - "$WORK/raw" "$N" <<'PY'
import statistics, sys
rows, n = {}, int(sys.argv[2])
for line in open(sys.argv[1]):
    path, t1, s1, r1, t2, s2, r2 = line.split()
    rows.setdefault(path, []).append(((float(t2) - float(t1)) * 1000 / n, (float(s2) - float(s1)) / n, float(r2)))
print("| path | client CPU µs per handshake | context switches per handshake | handshakes/s (wall, 2N run) |")
print("| --- | ---: | ---: | ---: |")
for path, values in rows.items():
    med = [statistics.median(v[k] for v in values) for k in range(3)]
    print(f"| {path} | {med[0]:.0f} | {med[1]:.1f} | {med[2]:.0f} |")
PY
say "load after: $(cat /proc/loadavg)"
