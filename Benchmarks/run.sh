#!/usr/bin/env bash
# Courier's benchmark run: builds bench-courier and bench-foundation (one source, two imports) in
# release, measures both plus curl and cat on the same machine in one run, prints a Markdown table
# with the ratios the project targets and writes it to Benchmarks/results/latest.md.
# See Documentation/Performance.md for what each number means.
#
# Environment knobs (defaults in brackets):
#   BENCH_REPS [3]            repetitions of every measurement; the best is kept
#   BENCH_TASKS [20000]       data: tasks in the throughput measurement
#   BENCH_WINDOW [256]        data: tasks in flight at most
#   BENCH_LATENCY_TASKS [2000] sequential tasks in the latency measurement
#   BENCH_FILE_MIB [512]      size of the file: URL body, MiB
#   BENCH_TIMEOUT [120]       seconds one measurement may take before it is reported as timeout
#   BENCH_PACKAGE_PATH [this folder]  the benchmark package to build
#   BENCH_SKIP_COURIER [0]    1: measure FoundationNetworking and the baselines only
#   BENCH_CALLGRIND [1]       0: skip counting instructions per data: task (done only when
#                             valgrind is installed; about 40 s)
#   BENCH_REVISION [git]      the commit to name in the table (for a copy of the tree without .git)
#   BENCH_LOCAL [1]           0: skip the data: and file: measurements (HTTP only)
#   BENCH_HTTP [1]            0: skip the HTTP measurements (they need nginx and openssl; see http-part.sh)
#   BENCH_GET_COUNT [10000]   1 KiB GETs per measurement (after a warm-up that is not counted)
#   BENCH_GET_WINDOW [32]     GETs in flight in the concurrent measurement
#   BENCH_HTTP_MIB [512]      size of the HTTP download and data-task body, MiB
#   BENCH_UPLOAD_MIB [64]     size of the HTTP upload, MiB
#   BENCH_HTTP_REPS [3]       repetitions of the large HTTP, FTP and SFTP transfers (the small GETs use BENCH_REPS)
#   BENCH_FTP [1]             0: skip the FTP measurements (they need vsftpd; see ftp-part.sh)
#   BENCH_FTP_MIB [512]       size of the FTP download and upload, MiB
#   BENCH_SFTP [1]            0: skip the SFTP measurements (they need OpenSSH's sshd; see sftp-part.sh)
#   BENCH_SFTP_MIB [512]      size of the SFTP download and upload, MiB
#   BENCH_TOOL [1]            0: skip the courier tool's -o / -T against curl's (see tool-part.sh)
#   BENCH_BACKGROUND [1]      0: skip the download task in a background against a default session
#                             (see background-part.sh)
#   BENCH_WEBSOCKET [0]       1: also run websocket-part.sh (Courier's WebSocket client against
#                             websocket-kit's, swift-websocket's and Python's; its own package,
#                             which builds swift-nio) and append its table
#   BENCH_WEBSOCKET_AUTH [0]  1: also run websocket-auth-part.sh (what Basic, NTLM and Negotiate add
#                             to a WebSocket handshake; needs perf, and scripts/setup's Kerberos
#                             packages and pyspnego) and append its table
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PACKAGE="${BENCH_PACKAGE_PATH:-$HERE}"
RESULTS="$HERE/results"
REPS="${BENCH_REPS:-3}"
TASKS="${BENCH_TASKS:-20000}"
WINDOW="${BENCH_WINDOW:-256}"
LATENCY_TASKS="${BENCH_LATENCY_TASKS:-2000}"
FILE_MIB="${BENCH_FILE_MIB:-512}"
TIMEOUT="${BENCH_TIMEOUT:-120}"
SKIP_COURIER="${BENCH_SKIP_COURIER:-0}"
CALLGRIND="${BENCH_CALLGRIND:-1}"
LOCAL_PART="${BENCH_LOCAL:-1}"
HTTP_REPS="${BENCH_HTTP_REPS:-3}"

log() { printf '== %s\n' "$*" >&2; }

# ---------------------------------------------------------------- tools
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    PATH="/opt/swift/usr/bin:$PATH"
fi
NEEDED=()
command -v curl >/dev/null 2>&1 || NEEDED+=(curl)
# GNU time: the peak RSS of the command lines (curl's, and courier's in tool-part.sh).
[ -x /usr/bin/time ] || NEEDED+=(time)
# The HTTP part: its knobs, functions, and nginx and openssl in NEEDED when missing.
source "$HERE/http-part.sh"
# The FTP part: its knobs, functions, and vsftpd in NEEDED when missing.
source "$HERE/ftp-part.sh"
# The SFTP part: the same for OpenSSH's sshd and sftp client.
source "$HERE/sftp-part.sh"
# The courier tool part: courier -o / -T against curl's, on the HTTP part's nginx.
source "$HERE/tool-part.sh"
# The background-session part: the same download task in a default and a background session.
source "$HERE/background-part.sh"
if [ "${#NEEDED[@]}" -gt 0 ]; then
    log "installing ${NEEDED[*]}"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${NEEDED[@]}" >/dev/null
fi
# GNU time for curl's peak RSS, once it is installed.
CURL_CAN_TIME=""
[ -x /usr/bin/time ] && CURL_CAN_TIME=/usr/bin/time
HYPERFINE=""
if command -v hyperfine >/dev/null 2>&1; then HYPERFINE="$(command -v hyperfine)"; fi

mkdir -p "$RESULTS"
RAW="$RESULTS/latest-raw.txt"
: >"$RAW"

# ---------------------------------------------------------------- build
# SwiftPM keeps the list of a path dependency's source files in its build manifest and does not
# notice files added to Courier since: drop the manifest so that every build starts from the tree.
rm -f "$PACKAGE/.build/release.yaml"
log "building bench-foundation (release)"
swift build -c release --package-path "$PACKAGE" --product bench-foundation >&2
BIN="$(swift build -c release --package-path "$PACKAGE" --show-bin-path)"
COURIER_STATUS="measured"
if [ "$SKIP_COURIER" = "1" ]; then
    COURIER_STATUS="not measured (BENCH_SKIP_COURIER=1)"
else
    log "building bench-courier (release)"
    if ! swift build -c release --package-path "$PACKAGE" --product bench-courier >&2; then
        log "bench-courier did not build: measuring FoundationNetworking and the baselines only"
        COURIER_STATUS="not measured (bench-courier did not build)"
    fi
fi

# ---------------------------------------------------------------- the test file
WORK="$(mktemp -d "${TMPDIR:-/tmp}/courier-bench.XXXXXX")"
cleanup() {
    http_stop
    ftp_stop
    sftp_stop
    rm -rf "$WORK"
}
trap cleanup EXIT
FILE="$WORK/body.bin"
OUT="$WORK/out.bin"
FILE_BYTES=""
if [ "$LOCAL_PART" = "1" ]; then
    log "creating a ${FILE_MIB} MiB test file from /dev/urandom in $WORK"
    head -c "$((FILE_MIB * 1024 * 1024))" /dev/urandom >"$FILE"
    FILE_BYTES="$(stat -c %s "$FILE")"
    sync
fi

# ---------------------------------------------------------------- results store
num() { [[ "${1:-}" =~ ^[0-9.]+$ ]]; }
# V["impl:name"] = best value over the repetitions; units in U["impl:name"].
declare -A V U
# better NAME UNIT OLD NEW: prints whichever of OLD and NEW is kept. Throughputs keep the largest,
# times the smallest, peak RSS (bytes and ratio) the largest: the worst run, to be conservative.
keep() {
    local name="$1" unit="$2" old="$3" new="$4"
    if [ -z "$old" ]; then echo "$new"; return; fi
    if ! [[ "$new" =~ ^[0-9.]+$ ]]; then echo "$old"; return; fi
    if ! [[ "$old" =~ ^[0-9.]+$ ]]; then echo "$new"; return; fi
    local want=max
    case "$unit:$name" in
        us:* | s:*) want=min ;;
    esac
    awk -v a="$old" -v b="$new" -v w="$want" 'BEGIN { if ((w == "max" && b > a) || (w == "min" && b < a)) print b; else print a }'
}
record() { # record IMPL < lines
    local impl="$1" tag name value unit
    while read -r tag name value unit; do
        [ "$tag" = "RESULT" ] || continue
        V["$impl:$name"]="$(keep "$name" "$unit" "${V["$impl:$name"]:-}" "$value")"
        U["$impl:$name"]="$unit"
    done
}

# bench IMPL MEASUREMENT ARGS...: runs the measurement REPS times, each in its own process.
bench() {
    local impl="$1" what="$2"; shift 2
    local rep out rc
    for ((rep = 1; rep <= REPS; rep++)); do
        log "$impl $what ($rep/$REPS)"
        rc=0
        out="$(timeout "$((TIMEOUT + 30))" "$BIN/bench-$impl" "$what" --timeout "$TIMEOUT" "$@" 2>&1)" || rc=$?
        printf '### %s %s run %d (exit %d)\n%s\n' "$impl" "$what" "$rep" "$rc" "$out" >>"$RAW"
        grep '^NOTE' <<<"$out" >&2 || true
        record "$impl" <<<"$out"
        if [ "$rc" -ne 0 ]; then
            V["$impl:$what:crash"]="exit $rc"
            log "bench-$impl $what exited with $rc (see $RAW)"
            break
        fi
        # A measurement that is unsupported, failed or timed out will not do better next time.
        if grep -Eq '^RESULT [a-z_]+ (unsupported|failed|timeout) ' <<<"$out"; then break; fi
        sync
    done
}

LOAD_AT_START="$(cut -d' ' -f1-3 /proc/loadavg)"
IMPLS=(foundation)
if [ "$COURIER_STATUS" = "measured" ]; then IMPLS=(courier foundation); fi
if [ "$LOCAL_PART" = "1" ]; then
    for impl in "${IMPLS[@]}"; do
        bench "$impl" data-tasks --count "$TASKS" --window "$WINDOW"
        bench "$impl" latency --count "$LATENCY_TASKS"
        bench "$impl" file-data --file "$FILE"
        bench "$impl" file-download --file "$FILE"
    done
    # A reference point for the data task: the file read into memory by Data(contentsOf:), no URLSession.
    bench foundation file-read --file "$FILE"
fi

# ---------------------------------------------------------------- instructions per data: task
# Wall-clock numbers move with the machine's load; instruction counts do not. callgrind counts the
# instructions of two runs (2,000 and 6,000 tasks, the same warm-up); the difference ÷ 4,000 is the
# cost of one data: task, every thread included.
# valgrind runs a copy without debug information: its DWARF reader gives up on some that clang writes
# (C targets); the instructions are the same.
collected() { # collected IMPL COUNT: callgrind's instruction total for a data-tasks run, or nothing
    local binary="$WORK/bench-$1.stripped"
    [ -x "$binary" ] || objcopy --strip-debug "$BIN/bench-$1" "$binary" 2>/dev/null || cp "$BIN/bench-$1" "$binary"
    { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" data-tasks \
        --count "$2" --window "$WINDOW" --timeout 600 2>&1 >/dev/null || true; } | awk '/Collected :/ { print $NF }'
}
if [ "$LOCAL_PART" = "1" ] && [ "$CALLGRIND" = "1" ] && command -v valgrind >/dev/null 2>&1; then
    for impl in "${IMPLS[@]}"; do
        log "$impl: instructions per data: task (callgrind)"
        small="$(collected "$impl" 2000)"
        large="$(collected "$impl" 6000)"
        if num "$small" && num "$large"; then
            V["$impl:instructions_per_task"]="$(awk -v a="$small" -v b="$large" 'BEGIN { printf "%.0f", (b - a) / 4000 }')"
            printf '### %s callgrind: 2000 tasks %s, 6000 tasks %s instructions\n' "$impl" "$small" "$large" >>"$RAW"
        else
            log "$impl: callgrind gave no instruction count"
        fi
    done
fi

# ---------------------------------------------------------------- baselines: curl and cat
# best_seconds NAME COMMAND [PREPARE]: best wall time of REPS runs of COMMAND (run by bash).
best_seconds() {
    local name="$1" cmd="$2" prepare="${3:-true}" best="" t0 t1 s rep
    log "baseline: $cmd"
    if [ -n "$HYPERFINE" ]; then
        "$HYPERFINE" --style none --runs "$REPS" --shell bash --prepare "$prepare" \
            --export-csv "$WORK/hf.csv" "$cmd" >/dev/null 2>&1
        # columns: command,mean,stddev,median,user,system,min,max (counted from the end: the
        # command may hold commas)
        best="$(awk -F, 'NR == 2 { print $(NF - 1) }' "$WORK/hf.csv")"
    else
        for ((rep = 1; rep <= REPS; rep++)); do
            bash -c "$prepare"
            t0="$(date +%s%N)"
            bash -c "$cmd"
            t1="$(date +%s%N)"
            s="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')"
            best="$(keep "$name" s "$best" "$s")"
        done
    fi
    bash -c "$prepare"
    sync
    printf '### baseline %s: %s\nRESULT %s %s s\n' "$name" "$cmd" "$name" "$best" >>"$RAW"
    V["base:$name"]="$best"
}
if [ "$LOCAL_PART" = "1" ]; then
    best_seconds curl_o_devnull "curl -s -o /dev/null 'file://$FILE'"
    best_seconds curl_stdout_devnull "curl -s 'file://$FILE' > /dev/null"
    best_seconds cat_devnull "cat '$FILE' > /dev/null"
    best_seconds cat_file "cat '$FILE' > '$OUT'" "rm -f '$OUT'"
fi

# ---------------------------------------------------------------- HTTP: nginx on 127.0.0.1 (http-part.sh)
http_part

# ---------------------------------------------------------------- FTP: vsftpd on 127.0.0.1
ftp_part

# ---------------------------------------------------------------- SFTP: OpenSSH's sshd on 127.0.0.1
sftp_part

# ---------------------------------------------------------------- the table
# fmt VALUE DECIMALS: a number with thousands separators, or the word the benchmark printed.
fmt() {
    local v="${1:-}" d="${2:-0}"
    if [ -z "$v" ]; then echo "—"; return; fi
    if ! num "$v"; then echo "$v"; return; fi
    LC_ALL=C awk -v v="$v" -v d="$d" 'BEGIN {
        s = sprintf("%." d "f", v); split(s, p, "."); i = p[1]; out = ""
        while (length(i) > 3) { out = "," substr(i, length(i) - 2) out; i = substr(i, 1, length(i) - 3) }
        out = i out; if (d > 0) out = out "." p[2]; print out }'
}
ratio() { # ratio A B DECIMALS: A ÷ B, or — when either is not a number
    if num "${1:-}" && num "${2:-}"; then
        awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN { if (b == 0) print "—"; else printf "%." d "f×\n", a / b }'
    else echo "—"; fi
}
verdict() { # verdict A B OP TARGET: "yes"/"no" for (A ÷ B) OP TARGET
    if num "${1:-}" && num "${2:-}"; then
        awk -v a="$1" -v b="$2" -v op="$3" -v t="$4" 'BEGIN {
            r = (b == 0) ? 0 : a / b
            ok = (op == ">=") ? (r >= t) : (op == "<") ? (r < t) : (r <= t)
            print ok ? "yes" : "**no**" }'
    else echo "—"; fi
}
mbps() { # mbps SECONDS: the test file's MB/s for a wall time
    if num "${1:-}" && num "$FILE_BYTES"; then awk -v s="$1" -v b="$FILE_BYTES" 'BEGIN { printf "%.1f", b / s / 1e6 }'; fi
}
mib() { if num "${1:-}"; then awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; else echo "${1:-}"; fi; }
cell() { # the Courier column: a value, or why there is none
    if [ "$COURIER_STATUS" = "measured" ]; then fmt "$1" "$2"; else echo "not measured"; fi
}

C() { echo "${V["courier:$1"]:-}"; }
F() { echo "${V["foundation:$1"]:-}"; }

CPU="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' || echo unknown)"
SWIFT_VERSION="$(swift --version 2>/dev/null | head -1)"
if [ -n "${BENCH_REVISION:-}" ]; then
    REVISION="$BENCH_REVISION"
else
    REVISION="$(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    if [ -n "$(git -C "$HERE/.." status --porcelain --untracked-files=no -- Sources 2>/dev/null)" ]; then
        REVISION+=" with uncommitted changes under Sources/"
    fi
fi
TIMING="bash, best of $REPS"
if [ -n "$HYPERFINE" ]; then TIMING="hyperfine, best of $REPS"; fi

TABLE="$(
    cat <<EOF
# Courier benchmark: latest results

Measured $(date -u '+%Y-%m-%d %H:%M UTC') on one machine in one run: $(nproc) cores ($CPU),
$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r); $SWIFT_VERSION; $(curl --version | head -1 | cut -d' ' -f1-3).
Load average (1, 5, 15 min) when the measurements started: $LOAD_AT_START (other work on the machine makes numbers vary).
Every number is the best of its runs (peak RSS: the largest of them), each run in its own process. MB = 10^6 bytes.
Courier: $COURIER_STATUS, at commit $REVISION.
EOF
)"

if [ "$LOCAL_PART" = "1" ]; then
    CURL_O="$(mbps "${V[base:curl_o_devnull]:-}")"
    CURL_S="$(mbps "${V[base:curl_stdout_devnull]:-}")"
    CURL_BEST="$(awk -v a="$CURL_O" -v b="$CURL_S" 'BEGIN { print (a > b) ? a : b }')"
    CAT_NULL="$(mbps "${V[base:cat_devnull]:-}")"
    CAT_FILE="$(mbps "${V[base:cat_file]:-}")"
    TABLE+=$'\n\n'"$(
        cat <<EOF
## data: and file: URLs

Best of $REPS runs. Body: a ${FILE_MIB} MiB file of random bytes ($(fmt "$FILE_BYTES") bytes) in the page cache.

| Measurement | Courier | FoundationNetworking | Ratio | Target | Met |
| --- | ---: | ---: | ---: | --- | --- |
| data: tasks per second ($(fmt "$TASKS") tasks, ≤ $WINDOW in flight) | $(cell "$(C data_tasks_per_sec)" 0) | $(fmt "$(F data_tasks_per_sec)" 0) | $(ratio "$(C data_tasks_per_sec)" "$(F data_tasks_per_sec)" 2) Courier ÷ Foundation | ≥ 10× | $(verdict "$(C data_tasks_per_sec)" "$(F data_tasks_per_sec)" ">=" 10) |
| data: task cost, instructions per task (callgrind; lower is better) | $(cell "$(C instructions_per_task)" 0) | $(fmt "$(F instructions_per_task)" 0) | $(ratio "$(F instructions_per_task)" "$(C instructions_per_task)" 2) Foundation ÷ Courier | — | — |
| data: task latency, median (µs, $(fmt "$LATENCY_TASKS") sequential) | $(cell "$(C latency_median_us)" 1) | $(fmt "$(F latency_median_us)" 1) | $(ratio "$(F latency_median_us)" "$(C latency_median_us)" 2) Foundation ÷ Courier | — | — |
| data: task latency, p99 (µs) | $(cell "$(C latency_p99_us)" 1) | $(fmt "$(F latency_p99_us)" 1) | $(ratio "$(F latency_p99_us)" "$(C latency_p99_us)" 2) Foundation ÷ Courier | — | — |
| file: data task, MB/s | $(cell "$(C file_data_mbps)" 1) | $(fmt "$(F file_data_mbps)" 1) | $(ratio "$(C file_data_mbps)" "$CURL_BEST" 2) Courier ÷ curl file:// | ≥ 1.0× | $(verdict "$(C file_data_mbps)" "$CURL_BEST" ">=" 1.0) |
| file: data task, peak RSS (MiB) | $(cell "$(mib "$(C file_data_peak_rss)")" 1) | $(fmt "$(mib "$(F file_data_peak_rss)")" 1) | $(ratio "$(C file_data_peak_rss)" "$FILE_BYTES" 3) peak RSS ÷ body | ≤ 1.1× | $(verdict "$(C file_data_peak_rss)" "$FILE_BYTES" "<=" 1.1) |
| file: download task, MB/s | $(cell "$(C file_download_mbps)" 1) | $(fmt "$(F file_download_mbps)" 1) | $(ratio "$(C file_download_mbps)" "$CAT_FILE" 2) Courier ÷ \`cat FILE > OUT\` | ≥ 0.8× | $(verdict "$(C file_download_mbps)" "$CAT_FILE" ">=" 0.8) |
| file: download task, peak RSS (MiB) | $(cell "$(mib "$(C file_download_peak_rss)")" 1) | $(fmt "$(mib "$(F file_download_peak_rss)")" 1) | $(ratio "$(C file_download_peak_rss)" "$FILE_BYTES" 3) peak RSS ÷ body | — | — |

| Baseline (same file, $TIMING) | seconds | MB/s |
| --- | ---: | ---: |
| \`curl -s -o /dev/null file://FILE\` | $(fmt "${V[base:curl_o_devnull]:-}" 3) | $(fmt "$CURL_O" 1) |
| \`curl -s file://FILE > /dev/null\` | $(fmt "${V[base:curl_stdout_devnull]:-}" 3) | $(fmt "$CURL_S" 1) |
| \`cat FILE > /dev/null\` | $(fmt "${V[base:cat_devnull]:-}" 3) | $(fmt "$CAT_NULL" 1) |
| \`cat FILE > OUT\` (a copy, as a download makes) | $(fmt "${V[base:cat_file]:-}" 3) | $(fmt "$CAT_FILE" 1) |
| \`Data(contentsOf:)\` (the body read into memory, no URLSession; peak RSS $(fmt "$(mib "$(F file_read_peak_rss)")" 1) MiB) | $(fmt "$(F file_read_seconds)" 3) | $(fmt "$(F file_read_mbps)" 1) |

"unsupported": the implementation answered URLError.unsupportedURL (FoundationNetworking has no
file: protocol for URLSession tasks). "failed"/"timeout": the measurement ran but did not succeed;
the raw output of every run is in results/latest-raw.txt.
EOF
    )"
fi

if [ "$HTTP_PART" = "1" ]; then TABLE+=$'\n\n'"$(http_table)"; fi
if [ "$FTP_PART" = "1" ]; then TABLE+=$'\n\n'"$(ftp_table)"; fi
if [ "$SFTP_PART" = "1" ]; then TABLE+=$'\n\n'"$(sftp_table)"; fi
if [ "$HTTP_STATUS" = "measured" ] && [ "$TOOL_PART" = "1" ]; then TABLE+=$'\n\n'"$(tool_table)"; fi
if [ "$HTTP_STATUS" = "measured" ] && [ "$BACKGROUND_PART" = "1" ]; then TABLE+=$'\n\n'"$(background_table)"; fi
for key in "${!V[@]}"; do
    case "$key" in *:crash) TABLE+=$'\n'"Crashed: ${key%:crash} (${V[$key]})." ;; esac
done

if [ "${BENCH_WEBSOCKET:-0}" = "1" ]; then
    log "the WebSocket part (websocket-part.sh)"
    if "$HERE/websocket-part.sh" >/dev/null; then
        TABLE+=$'\n\n'"$(cat "$RESULTS/websocket.md")"
    else
        TABLE+=$'\n\n'"WebSocket part: failed (see Benchmarks/results/websocket-raw.txt)."
    fi
fi

if [ "${BENCH_WEBSOCKET_AUTH:-0}" = "1" ]; then
    log "the WebSocket authentication part (websocket-auth-part.sh)"
    if "$HERE/websocket-auth-part.sh" >"$RESULTS/websocket-auth.md" 2>"$RESULTS/websocket-auth-raw.txt"; then
        TABLE+=$'\n\n'"$(cat "$RESULTS/websocket-auth.md")"
    else
        TABLE+=$'\n\n'"WebSocket authentication part: failed (see Benchmarks/results/websocket-auth-raw.txt)."
    fi
fi

printf '%s\n' "$TABLE" | tee "$RESULTS/latest.md"
