#!/usr/bin/env bash
# What authentication costs a WebSocket handshake in Courier's client. `ws-bench-courier handshakes`
# (Benchmarks/WebSocket) opens connections one after another (handshake with its authentication, a
# ping answered, close handshake), through a session whose delegate answers the challenge, against
# the tests' Python servers (Tests/CourierTests/TestServers/):
#   ntlm_server.py (pyspnego):      /ws-open (no authentication, the baseline), /ws-basic (a 401,
#                                   then Basic on a new connection), /ws (a 401, then NTLM's
#                                   NEGOTIATE, CHALLENGE and AUTHENTICATE on one new connection);
#   negotiate_server.py (pyspnego   /ws-open (its baseline), /ws (a 401, a GSS-API token made on a
#   with gssapi):                   global queue, a new connection, the 101); it needs a realm,
#                                   which kerberos-realm.sh sets up as the tests do.
# With BENCH_WSA_TLS, every row is also measured over wss (the servers' TLS ports, with a
# self-signed certificate for 127.0.0.1 made here and trusted through SSL_CERT_FILE).
# The Python servers set the wall-clock pace, so the numbers that matter are the client's: each run
# goes under `perf stat -e task-clock,context-switches` with N and with 2N handshakes, and
# (2N run − N run) ÷ N is the cost of one handshake, process start and warm-up cancelled out; the
# load barely moves CPU time and switches. (No instruction counts: this VM's perf has no hardware
# counters, and valgrind 3.19 crashes on the WebSocket benchmark's binaries.) Interleaved: each
# repetition runs every row, in the opposite order every other repetition; the table shows
# medians. Needs perf. Only 127.0.0.1.
#
# Knobs (defaults in brackets):
#   BENCH_WSA_SERVERS ["ntlm negotiate"]  which servers' rows to measure
#   BENCH_WSA_REPS [5]                    repetitions
#   BENCH_WSA_HANDSHAKES [200]            N
#   BENCH_WSA_TLS [1]                     also measure wss (0: ws only)
#   BENCH_TIMEOUT [120]                   seconds one run may take
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SERVERS_DIR="$HERE/../Tests/CourierTests/TestServers"
PACKAGE="$HERE/WebSocket"
SERVERS="${BENCH_WSA_SERVERS:-ntlm negotiate}"
REPS="${BENCH_WSA_REPS:-5}"
N="${BENCH_WSA_HANDSHAKES:-200}"
TLS="${BENCH_WSA_TLS:-1}"
TIMEOUT="${BENCH_TIMEOUT:-120}"
PYTHON="${PYTHON:-python3}"
say() { printf '== %s\n' "$*" >&2; }
wants() { case " $SERVERS " in *" $1 "*) return 0;; *) return 1;; esac; }

if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then PATH="/opt/swift/usr/bin:$PATH"; fi
perf stat -e task-clock,context-switches -x, true >/dev/null 2>&1 || { say "perf stat does not work here"; exit 1; }
modules="spnego"
wants negotiate && modules="spnego, gssapi, krb5"
"$PYTHON" -c "import $modules" 2>/dev/null || "$PYTHON" -m pip install -q -r "$HERE/../scripts/requirements-test.txt"

say "building ws-bench-courier (release)"
swift build -c release --package-path "$PACKAGE" --product ws-bench-courier >&2
BIN="$(swift build -c release --package-path "$PACKAGE" --show-bin-path)/ws-bench-courier"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

SCHEMES=(ws)
TLS_ARGUMENTS=()
if [ "$TLS" = 1 ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/server.key" -out "$WORK/server.pem" >/dev/null 2>&1 \
        || { say "openssl could not make the wss certificate"; exit 1; }
    SCHEMES=(ws wss)
    TLS_ARGUMENTS=(--cert "$WORK/server.pem" --key "$WORK/server.key")
fi

# start_server SCRIPT PORTFILE: starts a test server (with the TLS port when TLS is on) and waits,
# bounded, for its port file ({"http": port, "https": port}).
start_server() {
    "$PYTHON" "$SERVERS_DIR/$1" --port-file "$2" "${TLS_ARGUMENTS[@]}" >"$2.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do [ -s "$2" ] && break; sleep 0.1; done
    [ -s "$2" ] || { say "$1 did not start: $(cat "$2.log")"; exit 1; }
    say "$1 on 127.0.0.1: $(cat "$2")"
}

# add_rows SERVER PORTFILE "PATH USER"...: a row per scheme and path, "label url user" (user "-"
# for none).
ROWS=()
add_rows() {
    local server="$1" file="$2" scheme port path user
    shift 2
    for scheme in "${SCHEMES[@]}"; do
        port="$("$PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$file" \
            "$([ "$scheme" = ws ] && echo http || echo https)")"
        for entry in "$@"; do
            read -r path user <<<"$entry"
            ROWS+=("$server:$scheme:$path $scheme://127.0.0.1:$port$path $user")
        done
    done
}

if wants ntlm; then
    start_server ntlm_server.py "$WORK/ntlm-port"
    add_rows ntlm-server "$WORK/ntlm-port" "/ws-open -" "/ws-basic user:secret" "/ws user:secret"
fi
if wants negotiate; then
    mkdir "$WORK/realm"
    source "$HERE/kerberos-realm.sh"
    kerberos_realm "$WORK/realm"
    start_server negotiate_server.py "$WORK/negotiate-port"
    add_rows negotiate-server "$WORK/negotiate-port" "/ws-open -" "/ws bench:"
fi
[ "${#ROWS[@]}" -gt 0 ] || { say "BENCH_WSA_SERVERS names no known server (ntlm, negotiate)"; exit 1; }
say "load: $(cut -d' ' -f1-3 /proc/loadavg)"

# run URL USER COUNT: "task-clock-ms switches handshakes/s" of one run.
run() {
    local user=() trust=()
    [ "$2" != - ] && user=(--user "$2")
    [ "${1%%:*}" = wss ] && trust=(env SSL_CERT_FILE="$WORK/server.pem")
    timeout "$TIMEOUT" "${trust[@]}" perf stat -x, -e task-clock,context-switches -o "$WORK/perf" \
        "$BIN" handshakes --url "$1" --count "$3" "${user[@]}" >"$WORK/out"
    awk -F, '/task-clock/{t=$1} /context-switches/{s=$1} END{printf "%s %s ", t, s}' "$WORK/perf"
    awk '/^RESULT handshakes/{print $3}' "$WORK/out"
}

for rep in $(seq "$REPS"); do
    order=("${ROWS[@]}")
    if [ $((rep % 2)) -eq 0 ]; then
        order=(); for ((i = ${#ROWS[@]} - 1; i >= 0; i--)); do order+=("${ROWS[$i]}"); done
    fi
    for row in "${order[@]}"; do
        read -r label url user <<<"$row"
        echo "$label $(run "$url" "$user" "$N") $(run "$url" "$user" $((2 * N)))"
    done
    say "repetition $rep of $REPS done; load $(cut -d' ' -f1-3 /proc/loadavg)"
done | tee "$WORK/raw" >&2

echo "Courier WebSocket handshakes with authentication: $REPS repetitions of $N and $((2 * N)), interleaved (medians); load $(cut -d' ' -f1-3 /proc/loadavg)"
"$PYTHON" - "$WORK/raw" "$N" <<'PY'
import statistics, sys
rows, n = {}, int(sys.argv[2])
for line in open(sys.argv[1]):
    label, t1, s1, r1, t2, s2, r2 = line.split()
    rows.setdefault(label, []).append(((float(t2) - float(t1)) * 1000 / n, (float(s2) - float(s1)) / n, float(r2)))
print("| server: path | client CPU µs per handshake | context switches per handshake | handshakes/s (wall, 2N run) |")
print("| --- | ---: | ---: | ---: |")
for label, values in rows.items():
    med = [statistics.median(v[k] for v in values) for k in range(3)]
    print(f"| {label} | {med[0]:.0f} | {med[1]:.1f} | {med[2]:.0f} |")
PY
