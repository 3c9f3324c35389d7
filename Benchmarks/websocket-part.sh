#!/usr/bin/env bash
# The WebSocket benchmark: Courier's URLSessionWebSocketTask against vapor/websocket-kit
# (`WebSocket.connect`), hummingbird-project/swift-websocket (`WebSocketClient`) and Python's
# `websockets` (a reference), all against one local echo server (swift-nio, one event-loop thread;
# Benchmarks/WebSocket/Sources/WSBenchServer) in one run. Measures, per client:
#   - 1 KiB binary echo round trips per second, one after another on one connection;
#   - MB/s of 1 MiB binary messages echoed, at most 4 in flight on one connection;
#   - peak RSS with 1,000 idle open connections, and KiB per connection ((RSS after − RSS before) / N).
# `courier-loop` is Courier's client with its round trips inside Courier's loop task executor
# (`URLSession.loopTaskExecutor`, WS_BENCH_EXECUTOR=loop): round trips only.
# With perf installed, each round-trip measurement runs under `perf stat -e task-clock,context-switches`
# and a second table shows CPU time and context switches per round trip (the whole process, connection
# included, divided by the round trips made; the machine's load does not move these much).
# Each repetition runs every client once per measurement, the clients' order rotating between
# repetitions (interleaved, so a busy moment of the machine does not hit one client only); the table
# shows the medians. Results: Benchmarks/results/websocket.md (and standard output); raw lines in
# Benchmarks/results/websocket-raw.txt. Runs alone, or from Benchmarks/run.sh with BENCH_WEBSOCKET=1.
#
# Knobs (defaults in brackets):
#   BENCH_WS_REPS [5]          repetitions
#   BENCH_WS_ROUND_TRIPS [20000]  round trips per measurement (after 200 not counted)
#   BENCH_WS_MESSAGES [256]    1 MiB messages per throughput measurement
#   BENCH_WS_IDLE [1000]       idle connections
#   BENCH_WS_CLIENTS ["courier courier-loop websocketkit hummingbird python"]
#   BENCH_WS_PERF [1 when perf works]  per-round-trip CPU and context switches (0: off)
#   BENCH_TIMEOUT [120]        seconds one measurement may take
set -euo pipefail

WS_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WS_PACKAGE="$WS_HERE/WebSocket"
WS_RESULTS="$WS_HERE/results"
WS_REPS="${BENCH_WS_REPS:-5}"
WS_ROUND_TRIPS="${BENCH_WS_ROUND_TRIPS:-20000}"
WS_MESSAGES="${BENCH_WS_MESSAGES:-256}"
WS_IDLE="${BENCH_WS_IDLE:-1000}"
WS_CLIENTS=(${BENCH_WS_CLIENTS:-courier courier-loop websocketkit hummingbird python})
WS_PERF="${BENCH_WS_PERF:-}"
if [ -z "$WS_PERF" ]; then
    if perf stat -e task-clock,context-switches -x, true >/dev/null 2>&1; then WS_PERF=1; else WS_PERF=0; fi
fi
WS_TIMEOUT="${BENCH_TIMEOUT:-120}"
WS_PYTHON="${PYTHON:-python3}"

wslog() { printf '== %s\n' "$*" >&2; }

if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then PATH="/opt/swift/usr/bin:$PATH"; fi
if ! "$WS_PYTHON" -c "import websockets" 2>/dev/null; then
    wslog "installing Python websockets (scripts/requirements-test.txt)"
    "$WS_PYTHON" -m pip install -q -r "$WS_HERE/../scripts/requirements-test.txt"
fi

wslog "building the WebSocket benchmark (release; the first build compiles swift-nio)"
swift build -c release --package-path "$WS_PACKAGE" >&2
WS_BIN="$(swift build -c release --package-path "$WS_PACKAGE" --show-bin-path)"
mkdir -p "$WS_RESULTS"
WS_WORK="$(mktemp -d)"
WS_RAW="$WS_RESULTS/websocket-raw.txt"
: >"$WS_RAW"
# 1,000 connections on each side, and the server's.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

"$WS_BIN/ws-bench-server" 0 >"$WS_WORK/server.out" 2>"$WS_WORK/server.err" &
WS_SERVER=$!
trap 'kill "$WS_SERVER" 2>/dev/null || true; rm -rf "$WS_WORK"' EXIT
for _ in $(seq 100); do grep -q '^PORT ' "$WS_WORK/server.out" 2>/dev/null && break; sleep 0.1; done
WS_PORT="$(awk '/^PORT /{print $2}' "$WS_WORK/server.out")"
[ -n "$WS_PORT" ] || { wslog "the echo server did not start: $(cat "$WS_WORK/server.err")"; exit 1; }
WS_URL="ws://127.0.0.1:$WS_PORT/"
wslog "echo server on $WS_URL"

declare -A WS

# ws_client CLIENT: the command line of that client.
ws_client() {
    case "$1" in
        courier) echo "$WS_BIN/ws-bench-courier" ;;
        courier-loop) echo "env WS_BENCH_EXECUTOR=loop $WS_BIN/ws-bench-courier" ;;
        websocketkit) echo "$WS_BIN/ws-bench-websocketkit" ;;
        hummingbird) echo "$WS_BIN/ws-bench-hummingbird" ;;
        python) echo "$WS_PYTHON $WS_PACKAGE/python_client.py" ;;
    esac
}

# ws_run CLIENT MEASUREMENT ARGS...: one measurement; appends each RESULT value to WS[client:name].
ws_run() {
    local client="$1" measurement="$2" out rc=0 perf=(); shift 2
    if [ "$WS_PERF" = 1 ] && [ "$measurement" = round-trips ]; then
        perf=(perf stat -x, -e task-clock,context-switches -o "$WS_WORK/perf")
        rm -f "$WS_WORK/perf"
    fi
    out="$(timeout "$WS_TIMEOUT" "${perf[@]}" $(ws_client "$client") "$measurement" --url "$WS_URL" "$@" 2>"$WS_WORK/err")" || rc=$?
    if [ "${#perf[@]}" -gt 0 ] && [ "$rc" -eq 0 ] && [ -s "$WS_WORK/perf" ]; then
        # Per round trip, the 200 warm-up ones included: task-clock (ms) → µs, and context switches.
        local trips=$((WS_ROUND_TRIPS + 200))
        WS["$client:cpu-us"]+="$(awk -F, -v n="$trips" '$3 == "task-clock" { printf "%.2f", $1 * 1000 / n }' "$WS_WORK/perf") "
        WS["$client:switches"]+="$(awk -F, -v n="$trips" '$3 == "context-switches" { printf "%.3f", $1 / n }' "$WS_WORK/perf") "
        cat "$WS_WORK/perf" >>"$WS_RAW"
    fi
    printf '### %s %s (exit %d)\n%s\n%s\n' "$client" "$measurement" "$rc" "$out" "$(head -c 2000 "$WS_WORK/err")" >>"$WS_RAW"
    if [ "$rc" -ne 0 ]; then
        WS["$client:$measurement:failed"]="exit $rc"
        wslog "$client $measurement failed (exit $rc, see $WS_RAW)"
        return 0
    fi
    while read -r tag name value _; do
        [ "$tag" = "RESULT" ] && WS["$client:$name"]+="$value "
    done <<<"$out"
}

# ws_median VALUES...: the median (the mean of the middle two for an even count), or "–"; printed
# with WS_MEDIAN_FORMAT (%.1f).
ws_median() {
    [ "$#" -gt 0 ] || { echo "–"; return; }
    printf '%s\n' "$@" | sort -g | awk -v f="${WS_MEDIAN_FORMAT:-%.1f}" '{ v[NR] = $1 } END { if (NR % 2) printf f, v[(NR + 1) / 2]; else printf f, (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for ((rep = 0; rep < WS_REPS; rep++)); do
    count=${#WS_CLIENTS[@]}
    for ((i = 0; i < count; i++)); do
        client="${WS_CLIENTS[$(((i + rep) % count))]}"
        wslog "repetition $((rep + 1))/$WS_REPS: $client"
        ws_run "$client" round-trips --count "$WS_ROUND_TRIPS"
        # The loop executor changes only where the round trips' code runs.
        [ "$client" = courier-loop ] && continue
        ws_run "$client" throughput --count "$WS_MESSAGES" --window 4
        ws_run "$client" idle --count "$WS_IDLE"
    done
done

{
    echo "# WebSocket benchmark"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$WS_HERE" rev-parse --short HEAD 2>/dev/null || echo "?"), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end;"
    echo "server: swift-nio echo (one event-loop thread) on 127.0.0.1; medians of $WS_REPS interleaved repetitions."
    echo
    echo "| client | 1 KiB round trips/s | 1 MiB messages MB/s | peak RSS, $WS_IDLE idle (MiB) | KiB per idle connection |"
    echo "|---|---:|---:|---:|---:|"
    for client in "${WS_CLIENTS[@]}"; do
        rtt="$(ws_median ${WS["$client:round-trips"]:-})"
        mbs="$(ws_median ${WS["$client:throughput"]:-})"
        peak="$(ws_median ${WS["$client:idle-peak-rss"]:-})"
        [ "$peak" = "–" ] || peak="$(awk -v k="$peak" 'BEGIN { printf "%.1f", k / 1024 }')"
        per="$(ws_median ${WS["$client:idle-per-connection"]:-})"
        failed=""
        for m in round-trips throughput idle; do
            [ -n "${WS["$client:$m:failed"]:-}" ] && failed+=" ($m failed: ${WS["$client:$m:failed"]})"
        done
        echo "| $client$failed | $rtt | $mbs | $peak | $per |"
    done
    echo
    if [ "$WS_PERF" = 1 ]; then
        echo "Per 1 KiB round trip (perf stat, whole process, medians; round trips/s relative to websocketkit: median of the per-repetition ratios):"
        echo
        echo "| client | CPU (task-clock) µs | context switches | round trips/s ÷ websocketkit's |"
        echo "|---|---:|---:|---:|"
        for client in "${WS_CLIENTS[@]}"; do
            ratios=()
            read -r -a mine <<<"${WS["$client:round-trips"]:-}"
            read -r -a theirs <<<"${WS["websocketkit:round-trips"]:-}"
            for ((r = 0; r < ${#mine[@]} && r < ${#theirs[@]}; r++)); do
                ratios+=("$(awk -v a="${mine[$r]}" -v b="${theirs[$r]}" 'BEGIN { if (b > 0) printf "%.3f", a / b }')")
            done
            echo "| $client | $(WS_MEDIAN_FORMAT=%.2f ws_median ${WS["$client:cpu-us"]:-}) | $(WS_MEDIAN_FORMAT=%.3f ws_median ${WS["$client:switches"]:-}) | $(WS_MEDIAN_FORMAT=%.3f ws_median ${ratios[@]+"${ratios[@]}"}) |"
        done
        echo
    fi
    echo "All values per repetition:"
    echo
    echo '<!-- fragment: every repetition'"'"'s values, in the order they ran -->'
    echo '```text'
    for client in "${WS_CLIENTS[@]}"; do
        for name in round-trips throughput idle-peak-rss idle-per-connection cpu-us switches; do
            echo "$client $name: ${WS["$client:$name"]:-–}"
        done
    done
    echo '```'
} | tee "$WS_RESULTS/websocket.md"
