#!/usr/bin/env bash
# The cost of Negotiate (SPNEGO/Kerberos) in Courier's WebSocket handshake: `ws-bench-courier
# handshakes` (Benchmarks/WebSocket) opens connections one after another, each pinged and closed,
# against the Negotiate tests' Python server (Tests/CourierTests/TestServers/negotiate_server.py),
# once on `/ws` (a 401, the delegate's challenge, a GSS-API token, a new connection, the 101) and
# once on `/ws-open` (the same server's WebSocket without authentication: the baseline); both over
# ws and, with BENCH_NEG_TLS, over wss (the server's TLS port, with a self-signed certificate for
# 127.0.0.1 made here and trusted through SSL_CERT_FILE). A realm of its own is set up in a temporary
# directory, as the tests do (KerberosTestRealm.swift): a KDC on a free 127.0.0.1 port, the
# principals, a keytab for the server and a ticket cache for the client.
#
# Each repetition runs every endpoint, their order reversed every other repetition (interleaved). With perf, each run is
# under `perf stat -e task-clock,context-switches` and the table shows CPU time and context switches
# per handshake (the whole client process divided by the handshakes it made, warm-up included),
# which the machine's load does not move much. (No instruction counts: perf has no hardware
# counters in this VM, and valgrind 3.19 stops with an internal SIGSEGV on the client.)
#
# Knobs (defaults in brackets):
#   BENCH_NEG_REPS [5]                 repetitions
#   BENCH_NEG_HANDSHAKES [200]         handshakes per run (after 10 not counted)
#   BENCH_NEG_TLS [1]                  also measure wss (0: ws only)
#   BENCH_TIMEOUT [120]                seconds one run may take
set -euo pipefail

NEG_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NEG_PACKAGE="$NEG_HERE/WebSocket"
NEG_SERVER="$NEG_HERE/../Tests/CourierTests/TestServers/negotiate_server.py"
NEG_REPS="${BENCH_NEG_REPS:-5}"
NEG_COUNT="${BENCH_NEG_HANDSHAKES:-200}"
NEG_TIMEOUT="${BENCH_TIMEOUT:-120}"
NEG_PYTHON="${PYTHON:-python3}"
NEG_TLS="${BENCH_NEG_TLS:-1}"
REALM=COURIER.TEST

neglog() { printf '== %s\n' "$*" >&2; }

for tool in /usr/sbin/krb5kdc /usr/sbin/kdb5_util /usr/sbin/kadmin.local /usr/bin/kinit; do
    [ -x "$tool" ] || { neglog "$tool is missing: run scripts/setup"; exit 1; }
done
"$NEG_PYTHON" -c "import spnego, gssapi, krb5" 2>/dev/null || { neglog "pyspnego[kerberos] is missing: run scripts/setup"; exit 1; }
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then PATH="/opt/swift/usr/bin:$PATH"; fi

neglog "building ws-bench-courier (release)"
swift build -c release --package-path "$NEG_PACKAGE" --product ws-bench-courier >&2
NEG_CLIENT="$(swift build -c release --package-path "$NEG_PACKAGE" --show-bin-path)/ws-bench-courier"

NEG_WORK="$(mktemp -d)"
NEG_PIDS=()
cleanup() {
    for pid in "${NEG_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$NEG_WORK"
}
trap cleanup EXIT

# --- The realm -----------------------------------------------------------------------------------
KDC_PORT="$("$NEG_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat >"$NEG_WORK/krb5.conf" <<EOF
[libdefaults]
    default_realm = $REALM
    dns_canonicalize_hostname = false
    rdns = false
    dns_lookup_kdc = false
    dns_lookup_realm = false
    udp_preference_limit = 1
[realms]
    $REALM = {
        kdc = 127.0.0.1:$KDC_PORT
    }
EOF
cat >"$NEG_WORK/kdc.conf" <<EOF
[realms]
    $REALM = {
        database_name = $NEG_WORK/principal
        key_stash_file = $NEG_WORK/stash
        acl_file = $NEG_WORK/kadm5.acl
        kdc_listen = 127.0.0.1:$KDC_PORT
        kdc_tcp_listen = 127.0.0.1:$KDC_PORT
    }
[logging]
    kdc = FILE:$NEG_WORK/kdc.log
EOF
: >"$NEG_WORK/kadm5.acl"
export KRB5_CONFIG="$NEG_WORK/krb5.conf" KRB5_KDC_PROFILE="$NEG_WORK/kdc.conf" KRB5CCNAME="FILE:$NEG_WORK/ccache"
export KRB5_KTNAME="FILE:$NEG_WORK/http.keytab" KRB5RCACHEDIR="$NEG_WORK"
kdb5_util create -s -r "$REALM" -P "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" >/dev/null 2>&1
for command in "addprinc -randkey bench" "addprinc -randkey HTTP/127.0.0.1" \
               "ktadd -k $NEG_WORK/http.keytab HTTP/127.0.0.1" "ktadd -k $NEG_WORK/client.keytab bench"; do
    kadmin.local -q "$command" >/dev/null 2>&1
done
krb5kdc -n >"$NEG_WORK/krb5kdc.out" 2>&1 &
NEG_PIDS+=($!)
for _ in $(seq 100); do kinit -k -t "$NEG_WORK/client.keytab" bench 2>/dev/null && break; sleep 0.1; done
klist -s || { neglog "no ticket from the KDC: $(cat "$NEG_WORK/kdc.log" 2>/dev/null | tail -5)"; exit 1; }

NEG_SCHEMES=(ws)
NEG_TLS_ARGUMENTS=()
if [ "$NEG_TLS" = 1 ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 -keyout "$NEG_WORK/server.key" -out "$NEG_WORK/server.pem" >/dev/null 2>&1 \
        || { neglog "openssl could not make the wss certificate"; exit 1; }
    NEG_SCHEMES=(ws wss)
    NEG_TLS_ARGUMENTS=(--cert "$NEG_WORK/server.pem" --key "$NEG_WORK/server.key")
fi
"$NEG_PYTHON" "$NEG_SERVER" --port-file "$NEG_WORK/port" "${NEG_TLS_ARGUMENTS[@]}" >"$NEG_WORK/server.log" 2>&1 &
NEG_PIDS+=($!)
for _ in $(seq 100); do [ -s "$NEG_WORK/port" ] && break; sleep 0.1; done
[ -s "$NEG_WORK/port" ] || { neglog "negotiate_server.py did not start: $(cat "$NEG_WORK/server.log")"; exit 1; }
declare -A NEG_PORTS
for scheme in ws wss; do
    NEG_PORTS[$scheme]="$("$NEG_PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" \
        "$NEG_WORK/port" "$([ "$scheme" = ws ] && echo http || echo https)")"
done
neglog "KDC on 127.0.0.1:$KDC_PORT, server on 127.0.0.1:${NEG_PORTS[ws]} (wss: ${NEG_PORTS[wss]}); load $(cut -d' ' -f1-3 /proc/loadavg)"

NEG_PERF=0
perf stat -e task-clock,context-switches -x, true >/dev/null 2>&1 && NEG_PERF=1

declare -A NEG

# run SCHEME ENDPOINT: one run of the client against SCHEME://…/ENDPOINT; appends its numbers to NEG
# under "SCHEME:ENDPOINT".
run() {
    local endpoint="$1:$2" out perf=() trust=() handshakes=$((NEG_COUNT + 10))
    [ "$NEG_PERF" = 1 ] && perf=(perf stat -x, -e task-clock,context-switches -o "$NEG_WORK/perf")
    [ "$1" = wss ] && trust=(env SSL_CERT_FILE="$NEG_WORK/server.pem")
    out="$(timeout "$NEG_TIMEOUT" "${trust[@]}" "${perf[@]}" "$NEG_CLIENT" handshakes \
        --url "$1://127.0.0.1:${NEG_PORTS[$1]}/$2" --count "$NEG_COUNT" --user bench:)"
    NEG["$endpoint:rate"]+="$(awk '/^RESULT handshakes /{print $3}' <<<"$out") "
    if [ "$NEG_PERF" = 1 ]; then
        NEG["$endpoint:cpu"]+="$(awk -F, -v n="$handshakes" '$3 == "task-clock" { printf "%.1f", $1 * 1000 / n }' "$NEG_WORK/perf") "
        NEG["$endpoint:switches"]+="$(awk -F, -v n="$handshakes" '$3 == "context-switches" { printf "%.1f", $1 / n }' "$NEG_WORK/perf") "
    fi
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

NEG_ENDPOINTS=()
for scheme in "${NEG_SCHEMES[@]}"; do NEG_ENDPOINTS+=("$scheme ws-open" "$scheme ws"); done
for rep in $(seq "$NEG_REPS"); do
    order=("${NEG_ENDPOINTS[@]}")
    if [ $((rep % 2)) -eq 0 ]; then
        order=(); for ((i = ${#NEG_ENDPOINTS[@]} - 1; i >= 0; i--)); do order+=("${NEG_ENDPOINTS[i]}"); done
    fi
    for endpoint in "${order[@]}"; do run "${endpoint% *}" "${endpoint#* }"; done
    neglog "repetition $rep of $NEG_REPS done; load $(cut -d' ' -f1-3 /proc/loadavg)"
done

echo "Courier WebSocket handshakes, $NEG_COUNT per run, $NEG_REPS repetitions interleaved (medians); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| endpoint | handshakes/s | CPU µs per handshake | context switches per handshake |"
echo "| --- | --- | --- | --- |"
for endpoint in "${NEG_ENDPOINTS[@]}"; do
    endpoint="${endpoint/ /:}"
    echo "| ${endpoint/:/ \/} | $(median <<<"${NEG[$endpoint:rate]}") | $(median <<<"${NEG[$endpoint:cpu]:-}") | $(median <<<"${NEG[$endpoint:switches]:-}") |"
done
