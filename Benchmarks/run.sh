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
#   BENCH_HTTP [1]            0: skip the HTTP measurements (they need nginx and openssl)
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
HTTP_PART="${BENCH_HTTP:-1}"
GET_COUNT="${BENCH_GET_COUNT:-10000}"
GET_WINDOW="${BENCH_GET_WINDOW:-32}"
HTTP_MIB="${BENCH_HTTP_MIB:-512}"
UPLOAD_MIB="${BENCH_UPLOAD_MIB:-64}"
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
if [ "$HTTP_PART" = "1" ]; then
    [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || NEEDED+=(nginx)
    command -v openssl >/dev/null 2>&1 || NEEDED+=(openssl)
fi
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
NGINX_PID=""
cleanup() {
    if [ -n "$NGINX_PID" ]; then
        kill "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
    fi
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

# ---------------------------------------------------------------- HTTP: nginx on 127.0.0.1
# One nginx (a single worker process) serves plain HTTP/1.1 and HTTPS (HTTP/2 by ALPN, a self-signed
# certificate) on two ephemeral ports of 127.0.0.1, from a configuration in the temporary folder. It
# logs each request's connection serial number and the measurement's tag (the query `?r=TAG`), so
# the connections a measurement used are counted from the access log. Uploads go to a WebDAV PUT
# location: nginx answers only after it has written the whole body to a file, whose size is checked.
HTTP_STATUS="not measured (BENCH_HTTP=0)"
FOUNDATION_HTTPS="measured"
UPLOAD_BYTES=""
HTTP_BYTES=""
CURL_CAN_TIME=""
[ -x /usr/bin/time ] && CURL_CAN_TIME=/usr/bin/time
declare -A CONN_MIN CONN_MAX CONNW_MIN CONNW_MAX PROTO

# start_nginx: writes the configuration, starts nginx on two free ports, waits until both answer.
start_nginx() {
    local nginx_bin attempt
    nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
    NGX="$WORK/nginx"
    mkdir -p "$NGX/docroot" "$NGX/logs" "$NGX/tmp" "$NGX/dav/upload"
    CERT="$NGX/cert.pem"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$NGX/key.pem" \
        -out "$CERT" -days 2 -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>/dev/null
    head -c 1024 /dev/urandom >"$NGX/docroot/1k.bin"
    if [ "$LOCAL_PART" = "1" ] && [ "$HTTP_MIB" = "$FILE_MIB" ]; then
        ln "$FILE" "$NGX/docroot/big.bin"
    else
        head -c "$((HTTP_MIB * 1024 * 1024))" /dev/urandom >"$NGX/docroot/big.bin"
    fi
    HTTP_BYTES="$(stat -c %s "$NGX/docroot/big.bin")"
    UPLOAD_FILE="$WORK/upload.bin"
    head -c "$((UPLOAD_MIB * 1024 * 1024))" /dev/urandom >"$UPLOAD_FILE"
    UPLOAD_BYTES="$(stat -c %s "$UPLOAD_FILE")"
    sync
    for ((attempt = 1; attempt <= 5; attempt++)); do
        HTTP_PORT="$((20000 + RANDOM % 20000))"
        HTTPS_PORT="$((HTTP_PORT + 1))"
        cat >"$NGX/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $NGX/nginx.pid;
error_log $NGX/logs/error.log warn;
events { worker_connections 4096; }
http {
    log_format bench '\$connection \$server_protocol \$request_method \$status \$body_bytes_sent \$request_length \$arg_r';
    access_log $NGX/logs/access.log bench;
    client_body_temp_path $NGX/tmp/body;
    proxy_temp_path $NGX/tmp/proxy;
    fastcgi_temp_path $NGX/tmp/fastcgi;
    uwsgi_temp_path $NGX/tmp/uwsgi;
    scgi_temp_path $NGX/tmp/scgi;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 300s;
    keepalive_requests 1000000;
    http2_max_requests 1000000;
    server {
        listen 127.0.0.1:$HTTP_PORT;
        listen 127.0.0.1:$HTTPS_PORT ssl http2;
        ssl_certificate $CERT;
        ssl_certificate_key $NGX/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        root $NGX/docroot;
        # Nothing is cacheable: every request goes to the server.
        add_header Cache-Control no-store always;
        location /upload/ {
            root $NGX/dav;
            dav_methods PUT;
            client_max_body_size 0;
            client_body_buffer_size 1m;
        }
    }
}
CONF
        "$nginx_bin" -p "$NGX" -c "$NGX/nginx.conf" -e "$NGX/logs/error.log" </dev/null >/dev/null 2>&1 &
        NGINX_PID=$!
        local tries
        for ((tries = 0; tries < 100; tries++)); do
            if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$HTTP_PORT/1k.bin?r=probe" &&
                curl -s -o /dev/null --max-time 2 --cacert "$CERT" "https://127.0.0.1:$HTTPS_PORT/1k.bin?r=probe"; then
                log "nginx serves http://127.0.0.1:$HTTP_PORT and https://127.0.0.1:$HTTPS_PORT"
                return 0
            fi
            kill -0 "$NGINX_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
        NGINX_PID=""
    done
    log "nginx did not start: $(tail -3 "$NGX/logs/error.log" 2>/dev/null)"
    return 1
}

# connections TAG KEY: counts the connections the requests tagged TAG used (the measured part) and
# those tagged TAG or TAG-warm (the whole process, warm-up included); keeps their ranges per KEY.
connections() {
    local tag="$1" key="$2" n w proto
    n="$(awk -v t="$tag" '$NF == t { print $1 }' "$NGX/logs/access.log" | sort -u | wc -l)"
    w="$(awk -v t="$tag" '$NF == t || $NF == t "-warm" { print $1 }' "$NGX/logs/access.log" | sort -u | wc -l)"
    proto="$(awk -v t="$tag" '$NF == t { print $2; exit }' "$NGX/logs/access.log")"
    printf 'CONNECTIONS %s measured %s, whole process %s, %s\n' "$tag" "$n" "$w" "$proto" >>"$RAW"
    [ "$n" -gt 0 ] || return 0
    if [ -z "${CONN_MIN[$key]:-}" ] || [ "$n" -lt "${CONN_MIN[$key]}" ]; then CONN_MIN[$key]="$n"; fi
    if [ -z "${CONN_MAX[$key]:-}" ] || [ "$n" -gt "${CONN_MAX[$key]}" ]; then CONN_MAX[$key]="$n"; fi
    if [ -z "${CONNW_MIN[$key]:-}" ] || [ "$w" -lt "${CONNW_MIN[$key]}" ]; then CONNW_MIN[$key]="$w"; fi
    if [ -z "${CONNW_MAX[$key]:-}" ] || [ "$w" -gt "${CONNW_MAX[$key]}" ]; then CONNW_MAX[$key]="$w"; fi
    PROTO[$key]="$proto"
}

# hbench KEY REPS IMPL MEASUREMENT ARGS...: like bench, for the HTTP measurements: results are kept
# under IMPL:KEY, "@TAG@" in ARGS becomes the run's tag, and the connections of every run are
# counted. FoundationNetworking's https runs see the test certificate as the system's CA bundle;
# Courier's are given it as SSL_CERT_FILE.
hbench() {
    local key="$1" reps="$2" impl="$3" what="$4"; shift 4
    local rep out rc tag args=() runner=()
    for ((rep = 1; rep <= reps; rep++)); do
        tag="$impl-$key-$rep"
        args=("${@//@TAG@/$tag}")
        runner=("$BIN/bench-$impl")
        if [ "$impl" = "courier" ]; then
            # Courier verifies the test certificate as curl does with --cacert (TLSTrustAnchors).
            runner=(env SSL_CERT_FILE="$CERT" "$BIN/bench-$impl")
        fi
        if [ "$impl" = "foundation" ] && [[ "$key" == *https* ]]; then
            if [ "$FOUNDATION_HTTPS" != "measured" ]; then
                V["$impl:$key:unsupported"]=1
                return 0
            fi
            runner=(unshare --mount sh -c 'mount --bind "$1" /etc/ssl/certs/ca-certificates.crt && shift && exec "$@"'
                sh "$CERT" "$BIN/bench-$impl")
        fi
        log "$impl $key ($rep/$reps)"
        rc=0
        out="$(timeout "$((TIMEOUT + 30))" "${runner[@]}" "$what" --timeout "$TIMEOUT" "${args[@]}" 2>&1)" || rc=$?
        printf '### %s %s run %d (exit %d)\n%s\n' "$impl" "$key" "$rep" "$rc" "$out" >>"$RAW"
        grep '^NOTE' <<<"$out" >&2 || true
        if [ "$what" = "http-upload" ]; then
            local stored
            stored="$(stat -c %s "$NGX/dav/upload/$tag.bin" 2>/dev/null || echo 0)"
            printf 'STORED %s %s bytes\n' "$tag" "$stored" >>"$RAW"
            if [ "$stored" != "$UPLOAD_BYTES" ]; then
                log "nginx stored $stored bytes of $UPLOAD_BYTES for $tag"
                out="$(sed 's/^RESULT http_upload_mbps .*/RESULT http_upload_mbps failed MB\/s/' <<<"$out")"
            fi
            rm -f "$NGX/dav/upload/$tag.bin"
        fi
        record "$impl:$key" <<<"$out"
        connections "$tag" "$impl:$key"
        if [ "$rc" -ne 0 ]; then
            V["$impl:$key:crash"]="exit $rc"
            log "bench-$impl $what exited with $rc (see $RAW)"
            break
        fi
        if grep -Eq '^RESULT [a-z_]+ (unsupported|failed|timeout) ' <<<"$out"; then break; fi
        sync
    done
}

# curl_run KEY REPS PREPARE CURL-ARGS...: times the curl command line (best of REPS, wall clock,
# the whole process) and its peak RSS; "@TAG@" in the arguments becomes the run's tag.
curl_run() {
    local key="$1" reps="$2" prepare="$3"; shift 3
    local rep tag args t0 t1 s rc rss
    for ((rep = 1; rep <= reps; rep++)); do
        tag="curl-$key-$rep"
        args=("${@//@TAG@/$tag}")
        bash -c "$prepare"
        log "curl $key ($rep/$reps)"
        rc=0
        t0="$(date +%s%N)"
        if [ -n "$CURL_CAN_TIME" ]; then
            timeout "$TIMEOUT" "$CURL_CAN_TIME" -f '%M' -o "$WORK/curl-rss" curl -sS --fail "${args[@]}" >/dev/null 2>"$WORK/curl-err" || rc=$?
        else
            timeout "$TIMEOUT" curl -sS --fail "${args[@]}" >/dev/null 2>"$WORK/curl-err" || rc=$?
        fi
        t1="$(date +%s%N)"
        s="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')"
        rss="$(tail -1 "$WORK/curl-rss" 2>/dev/null || true)"
        printf '### curl %s run %d (exit %d): %s s, peak RSS %s kB\n%s\n' "$key" "$rep" "$rc" "$s" "$rss" "$(head -c 2000 "$WORK/curl-err")" >>"$RAW"
        if [ "$rc" -ne 0 ]; then
            V["curl:$key:seconds"]="failed"
            log "curl $key failed (exit $rc, see $RAW)"
            break
        fi
        V["curl:$key:seconds"]="$(keep seconds s "${V["curl:$key:seconds"]:-}" "$s")"
        if num "$rss"; then V["curl:$key:peak_rss"]="$(keep peak_rss bytes "${V["curl:$key:peak_rss"]:-}" "$((rss * 1024))")"; fi
        connections "$tag" "curl:$key"
        sync
    done
}

if [ "$HTTP_PART" = "1" ]; then
    if start_nginx; then
        HTTP_STATUS="measured"
    else
        HTTP_STATUS="not measured (nginx did not start)"
    fi
fi
if [ "$HTTP_STATUS" = "measured" ]; then
    # FoundationNetworking trusts only its libcurl's CA bundle (no server-trust challenge on Linux):
    # its https runs happen in a private mount namespace where that file is the test certificate.
    if ! unshare --mount sh -c "mount --bind '$CERT' /etc/ssl/certs/ca-certificates.crt" 2>/dev/null; then
        FOUNDATION_HTTPS="unsupported: no trust override (needs a private mount namespace, which unshare could not make)"
        log "FoundationNetworking https: $FOUNDATION_HTTPS"
    fi
    HTTP_BASE="http://127.0.0.1:$HTTP_PORT"
    HTTPS_BASE="https://127.0.0.1:$HTTPS_PORT"
    # curl's URL lists: GET_COUNT GETs of the 1 KiB file, each written to /dev/null.
    for scheme in http https; do
        base="$HTTP_BASE"
        [ "$scheme" = "https" ] && base="$HTTPS_BASE"
        for mode in seq par; do
            for ((rep = 1; rep <= REPS; rep++)); do
                awk -v n="$GET_COUNT" -v u="$base/1k.bin?r=curl-get_${scheme}_${mode}-$rep" \
                    'BEGIN { for (i = 0; i < n; i++) printf "url = \"%s\"\noutput = \"/dev/null\"\n", u }' \
                    >"$WORK/curl-get_${scheme}_${mode}-$rep.cfg"
            done
        done
    done
    LOAD_AT_HTTP="$(cut -d' ' -f1-3 /proc/loadavg)"
    for scheme in http https; do
        base="$HTTP_BASE"
        cacert=()
        if [ "$scheme" = "https" ]; then base="$HTTPS_BASE"; cacert=(--cacert "$CERT"); fi
        for impl in "${IMPLS[@]}"; do
            hbench "get_${scheme}_seq" "$REPS" "$impl" http-get --url "$base/1k.bin?r=@TAG@" --count "$GET_COUNT" --window 1 --size 1024
            hbench "get_${scheme}_par" "$REPS" "$impl" http-get --url "$base/1k.bin?r=@TAG@" --count "$GET_COUNT" --window "$GET_WINDOW" --size 1024
        done
        curl_run "get_${scheme}_seq" "$REPS" true "${cacert[@]}" -K "$WORK/@TAG@.cfg"
        curl_run "get_${scheme}_par" "$REPS" true "${cacert[@]}" -Z --parallel-max "$GET_WINDOW" -K "$WORK/@TAG@.cfg"
    done
    DL="$WORK/download.bin"
    for impl in "${IMPLS[@]}"; do
        hbench download "$HTTP_REPS" "$impl" http-download --url "$HTTP_BASE/big.bin?r=@TAG@" --size "$HTTP_BYTES" --file "$DL"
        hbench data "$HTTP_REPS" "$impl" http-data --url "$HTTP_BASE/big.bin?r=@TAG@" --size "$HTTP_BYTES"
        hbench upload "$HTTP_REPS" "$impl" http-upload --url "$HTTP_BASE/upload/@TAG@.bin" --file "$UPLOAD_FILE"
    done
    curl_run download "$HTTP_REPS" "rm -f '$DL'" -o "$DL" "$HTTP_BASE/big.bin?r=@TAG@"
    rm -f "$DL"
    curl_run download_devnull "$HTTP_REPS" true -o /dev/null "$HTTP_BASE/big.bin?r=@TAG@"
    # -H Expect: as Courier sends no Expect: 100-continue either.
    curl_run upload "$HTTP_REPS" true -H "Expect:" -T "$UPLOAD_FILE" -o /dev/null "$HTTP_BASE/upload/@TAG@.bin"
    for ((rep = 1; rep <= HTTP_REPS; rep++)); do
        stored="$(stat -c %s "$NGX/dav/upload/curl-upload-$rep.bin" 2>/dev/null || echo 0)"
        printf 'STORED curl-upload-%d %s bytes\n' "$rep" "$stored" >>"$RAW"
        [ "$stored" = "$UPLOAD_BYTES" ] || { V["curl:upload:seconds"]="failed"; log "nginx stored $stored bytes for curl's upload"; }
        rm -f "$NGX/dav/upload/curl-upload-$rep.bin"
    done
    tool_part
    background_part
    kill "$NGINX_PID" 2>/dev/null || true
    wait "$NGINX_PID" 2>/dev/null || true
    NGINX_PID=""
fi

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

if [ "$HTTP_PART" = "1" ]; then
    if [ "$HTTP_STATUS" != "measured" ]; then
        TABLE+=$'\n\n'"## HTTP"$'\n\n'"HTTP: $HTTP_STATUS."
    else
        # H IMPL KEY NAME: an HTTP result ("unsupported" where FoundationNetworking cannot do https).
        H() {
            if [ -n "${V["$1:$2:unsupported"]:-}" ]; then echo unsupported; return; fi
            echo "${V["$1:$2:$3"]:-}"
        }
        # CURL_RATE KEY: curl's GETs per second; CURL_MBPS KEY BYTES: curl's MB/s.
        CURL_RATE() {
            if num "${V["curl:$1:seconds"]:-}"; then
                awk -v n="$GET_COUNT" -v s="${V["curl:$1:seconds"]}" 'BEGIN { printf "%.1f", n / s }'
            else echo "${V["curl:$1:seconds"]:-}"; fi
        }
        CURL_MBPS() {
            if num "${V["curl:$1:seconds"]:-}"; then
                awk -v b="$2" -v s="${V["curl:$1:seconds"]}" 'BEGIN { printf "%.1f", b / s / 1e6 }'
            else echo "${V["curl:$1:seconds"]:-}"; fi
        }
        # range MIN MAX: "min–max", or one number when they agree.
        range() { if [ "$1" = "$2" ]; then echo "$1"; else echo "$1–$2"; fi; }
        # CONNS IMPL:KEY: the connections a measurement's processes used, warm-up included (a range
        # over its runs), followed by those of the measured part alone when they differ.
        CONNS() {
            if [ -n "${V["$1:unsupported"]:-}" ]; then echo unsupported; return; fi
            if [ -z "${CONNW_MAX[$1]:-}" ]; then echo "—"; return; fi
            local whole measured
            whole="$(range "${CONNW_MIN[$1]}" "${CONNW_MAX[$1]}")"
            measured="$(range "${CONN_MIN[$1]}" "${CONN_MAX[$1]}")"
            if [ "$whole" = "$measured" ]; then echo "$whole"; else echo "$whole (measured part: $measured)"; fi
        }
        CONNP() { # CONNP IMPL:KEY: connections and protocol
            local c
            c="$(CONNS "$1")"
            if [ -n "${PROTO[$1]:-}" ]; then echo "$c, ${PROTO[$1]}"; else echo "$c"; fi
        }
        both() { # both VERDICT VERDICT: yes when both are yes
            if [ "$1" = "yes" ] && [ "$2" = "yes" ]; then echo yes
            elif [ "$1" = "—" ] || [ "$2" = "—" ]; then echo "—"
            else echo "**no**"; fi
        }
        exactly() { # exactly IMPL:KEY N: every run used N connections, warm-up included
            if [ -z "${CONNW_MAX[$1]:-}" ]; then echo "—"
            elif [ "${CONNW_MIN[$1]}" = "$2" ] && [ "${CONNW_MAX[$1]}" = "$2" ]; then echo yes
            else echo "**no**"; fi
        }
        rss_cell() { # rss_cell IMPL KEY NAME: a peak RSS in MiB
            local v
            v="$(H "$1" "$2" "$3")"
            if num "$v"; then mib "$v"; else echo "${v:-—}"; fi
        }
        LIMIT=$((64 * 1048576))
        get_row() { # get_row KEY LABEL
            local c f k
            c="$(H courier "$1" http_get_per_sec)"; f="$(H foundation "$1" http_get_per_sec)"; k="$(CURL_RATE "$1")"
            printf '| %s | %s | %s | %s | %s | %s | ≥ 3× Foundation and ≥ 0.7× curl | %s |\n' "$2" \
                "$(cell "$c" 0)" "$(fmt "$f" 0)" "$(fmt "$k" 0)" "$(ratio "$c" "$f" 2)" "$(ratio "$c" "$k" 2)" \
                "$(both "$(verdict "$c" "$f" ">=" 3)" "$(verdict "$c" "$k" ">=" 0.7)")"
        }
        conn_row() { # conn_row KEY LABEL TARGET VERDICT
            printf '| %s | %s | %s | %s | — | — | %s | %s |\n' "$2" "$(CONNS "courier:$1")" "$(CONNS "foundation:$1")" \
                "$(CONNS "curl:$1")" "$3" "$4"
        }
        HTTPS_PROTO="${PROTO[curl:get_https_par]:-?}"
        HTTPS_CONN_VERDICT="—"
        if [ -n "${CONNW_MAX[curl:get_https_par]:-}" ]; then
            HTTPS_CONN_VERDICT="$(exactly courier:get_https_par "${CONNW_MAX[curl:get_https_par]}")"
        fi
        DL_C="$(H courier download http_download_mbps)"; DL_F="$(H foundation download http_download_mbps)"
        DL_K="$(CURL_MBPS download "$HTTP_BYTES")"; DLN_K="$(CURL_MBPS download_devnull "$HTTP_BYTES")"
        DA_C="$(H courier data http_data_mbps)"; DA_F="$(H foundation data http_data_mbps)"
        UP_C="$(H courier upload http_upload_mbps)"; UP_F="$(H foundation upload http_upload_mbps)"
        UP_K="$(CURL_MBPS upload "$UPLOAD_BYTES")"
        TABLE+=$'\n\n'"$(
            cat <<EOF
## HTTP (nginx on 127.0.0.1)

nginx $(nginx -v 2>&1 | sed 's/.*nginx\///'), one worker process, plain HTTP/1.1 and HTTPS ($HTTPS_PROTO by ALPN for curl, a self-signed
certificate), keep-alive. Load average (1, 5, 15 min) when the HTTP measurements started: $LOAD_AT_HTTP.
Small GETs: $(fmt "$GET_COUNT") GETs of a 1 KiB file per run, best of $REPS runs (Courier and FoundationNetworking
after a warm-up that is not counted; curl's time is its whole process). Large transfers: best of
$HTTP_REPS runs, over plain HTTP; body $(fmt "$HTTP_BYTES") bytes, upload $(fmt "$UPLOAD_BYTES") bytes, both random.
FoundationNetworking https: $FOUNDATION_HTTPS.

| Measurement | Courier | FoundationNetworking | curl | Courier ÷ Foundation | Courier ÷ curl | Target | Met |
| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |
$(get_row get_http_seq "1 KiB GETs per second, http, sequential")
$(get_row get_http_par "1 KiB GETs per second, http, $GET_WINDOW in flight")
$(conn_row get_http_par "connections used, http, $GET_WINDOW in flight" "exactly $GET_WINDOW" "$(exactly courier:get_http_par "$GET_WINDOW")")
$(get_row get_https_seq "1 KiB GETs per second, https, sequential")
$(get_row get_https_par "1 KiB GETs per second, https, $GET_WINDOW in flight")
$(conn_row get_https_par "connections used, https, $GET_WINDOW in flight" "as many as curl (HTTP/2 multiplexes)" "$HTTPS_CONN_VERDICT")
| ${HTTP_MIB} MiB download task to a file, MB/s (curl: \`-o FILE\`) | $(cell "$DL_C" 1) | $(fmt "$DL_F" 1) | $(fmt "$DL_K" 1) | $(ratio "$DL_C" "$DL_F" 2) | $(ratio "$DL_C" "$DL_K" 2) | ≥ 0.9× curl | $(verdict "$DL_C" "$DL_K" ">=" 0.9) |
| ${HTTP_MIB} MiB download task, peak RSS (MiB) | $(cell "$(rss_cell courier download http_download_peak_rss)" 1) | $(fmt "$(rss_cell foundation download http_download_peak_rss)" 1) | $(fmt "$(mib "${V[curl:download:peak_rss]:-}")" 1) | — | — | < 64 MiB | $(verdict "$(H courier download http_download_peak_rss)" "$LIMIT" "<" 1) |
| ${HTTP_MIB} MiB data task, MB/s (curl: \`-o /dev/null\`, for reference) | $(cell "$DA_C" 1) | $(fmt "$DA_F" 1) | $(fmt "$DLN_K" 1) | $(ratio "$DA_C" "$DA_F" 2) | $(ratio "$DA_C" "$DLN_K" 2) | — | — |
| ${HTTP_MIB} MiB data task, peak RSS ÷ body | $(cell "$(H courier data http_data_rss_ratio)" 3) | $(fmt "$(H foundation data http_data_rss_ratio)" 3) | — | — | — | ≤ 1.1× | $(verdict "$(H courier data http_data_peak_rss)" "$HTTP_BYTES" "<=" 1.1) |
| ${UPLOAD_MIB} MiB upload task from a file (PUT), MB/s (curl: \`-T FILE\`) | $(cell "$UP_C" 1) | $(fmt "$UP_F" 1) | $(fmt "$UP_K" 1) | $(ratio "$UP_C" "$UP_F" 2) | $(ratio "$UP_C" "$UP_K" 2) | ≥ 1.0× curl | $(verdict "$UP_C" "$UP_K" ">=" 1.0) |
| ${UPLOAD_MIB} MiB upload task, peak RSS (MiB) | $(cell "$(rss_cell courier upload http_upload_peak_rss)" 1) | $(fmt "$(rss_cell foundation upload http_upload_peak_rss)" 1) | $(fmt "$(mib "${V[curl:upload:peak_rss]:-}")" 1) | — | — | < 64 MiB | $(verdict "$(H courier upload http_upload_peak_rss)" "$LIMIT" "<" 1) |

Connections each small-GET measurement used: distinct connections in nginx's access log over the
whole process, warm-up included (a range when the runs differ; the measured part alone in brackets
when it differs), and the protocol nginx saw:

| GETs | Courier | FoundationNetworking | curl |
| --- | ---: | ---: | ---: |
| http, sequential | $(CONNP courier:get_http_seq) | $(CONNP foundation:get_http_seq) | $(CONNP curl:get_http_seq) |
| http, $GET_WINDOW in flight | $(CONNP courier:get_http_par) | $(CONNP foundation:get_http_par) | $(CONNP curl:get_http_par) |
| https, sequential | $(CONNP courier:get_https_seq) | $(CONNP foundation:get_https_seq) | $(CONNP curl:get_https_seq) |
| https, $GET_WINDOW in flight | $(CONNP courier:get_https_par) | $(CONNP foundation:get_https_par) | $(CONNP curl:get_https_par) |

Peak RSS (MiB), Courier / FoundationNetworking: small GETs, http sequential
$(fmt "$(rss_cell courier get_http_seq http_get_peak_rss)" 1) / $(fmt "$(rss_cell foundation get_http_seq http_get_peak_rss)" 1), http $GET_WINDOW in flight $(fmt "$(rss_cell courier get_http_par http_get_peak_rss)" 1) / $(fmt "$(rss_cell foundation get_http_par http_get_peak_rss)" 1),
https sequential $(fmt "$(rss_cell courier get_https_seq http_get_peak_rss)" 1) / $(fmt "$(rss_cell foundation get_https_seq http_get_peak_rss)" 1), https $GET_WINDOW in flight $(fmt "$(rss_cell courier get_https_par http_get_peak_rss)" 1) / $(fmt "$(rss_cell foundation get_https_par http_get_peak_rss)" 1);
${HTTP_MIB} MiB data task $(fmt "$(rss_cell courier data http_data_peak_rss)" 1) / $(fmt "$(rss_cell foundation data http_data_peak_rss)" 1).
EOF
        )"
    fi
fi
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

printf '%s\n' "$TABLE" | tee "$RESULTS/latest.md"
