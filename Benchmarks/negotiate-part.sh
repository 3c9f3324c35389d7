#!/usr/bin/env bash
# The cost of Negotiate (SPNEGO/Kerberos) in Courier's WebSocket handshake: `ws-bench-courier
# handshakes` (Benchmarks/WebSocket) opens connections one after another, each pinged and closed,
# against the Negotiate tests' Python server (Tests/CourierTests/TestServers/negotiate_server.py),
# once on `/ws` (a 401, the delegate's challenge, a GSS-API token, a new connection, the 101) and
# once on `/ws-open` (the same server's WebSocket without authentication: the baseline). A realm of
# its own is set up in a temporary directory, as the tests do (KerberosTestRealm.swift): a KDC on a
# free 127.0.0.1 port, the principals, a keytab for the server and a ticket cache for the client.
#
# Each repetition runs both endpoints, their order alternating (interleaved). With perf, each run is
# under `perf stat -e task-clock,context-switches` and the table shows CPU time and context switches
# per handshake (the whole client process divided by the handshakes it made, warm-up included),
# which the machine's load does not move much. (No instruction counts: perf has no hardware
# counters in this VM, and valgrind 3.19 stops with an internal SIGSEGV on the client.)
#
# Knobs (defaults in brackets):
#   BENCH_NEG_REPS [5]                 repetitions
#   BENCH_NEG_HANDSHAKES [200]         handshakes per run (after 10 not counted)
#   BENCH_TIMEOUT [120]                seconds one run may take
set -euo pipefail

NEG_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NEG_PACKAGE="$NEG_HERE/WebSocket"
NEG_SERVER="$NEG_HERE/../Tests/CourierTests/TestServers/negotiate_server.py"
NEG_REPS="${BENCH_NEG_REPS:-5}"
NEG_COUNT="${BENCH_NEG_HANDSHAKES:-200}"
NEG_TIMEOUT="${BENCH_TIMEOUT:-120}"
NEG_PYTHON="${PYTHON:-python3}"
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

"$NEG_PYTHON" "$NEG_SERVER" --port-file "$NEG_WORK/port" >"$NEG_WORK/server.log" 2>&1 &
NEG_PIDS+=($!)
for _ in $(seq 100); do [ -s "$NEG_WORK/port" ] && break; sleep 0.1; done
[ -s "$NEG_WORK/port" ] || { neglog "negotiate_server.py did not start: $(cat "$NEG_WORK/server.log")"; exit 1; }
NEG_PORT="$("$NEG_PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))['http'])" "$NEG_WORK/port")"
neglog "KDC on 127.0.0.1:$KDC_PORT, server on 127.0.0.1:$NEG_PORT; load $(cut -d' ' -f1-3 /proc/loadavg)"

NEG_PERF=0
perf stat -e task-clock,context-switches -x, true >/dev/null 2>&1 && NEG_PERF=1

declare -A NEG

# run ENDPOINT: one run of the client against /ENDPOINT; appends its numbers to NEG.
run() {
    local endpoint="$1" out perf=() handshakes=$((NEG_COUNT + 10))
    [ "$NEG_PERF" = 1 ] && perf=(perf stat -x, -e task-clock,context-switches -o "$NEG_WORK/perf")
    out="$(timeout "$NEG_TIMEOUT" "${perf[@]}" "$NEG_CLIENT" handshakes --url "ws://127.0.0.1:$NEG_PORT/$endpoint" --count "$NEG_COUNT" --user bench:)"
    NEG["$endpoint:rate"]+="$(awk '/^RESULT handshakes /{print $3}' <<<"$out") "
    if [ "$NEG_PERF" = 1 ]; then
        NEG["$endpoint:cpu"]+="$(awk -F, -v n="$handshakes" '$3 == "task-clock" { printf "%.1f", $1 * 1000 / n }' "$NEG_WORK/perf") "
        NEG["$endpoint:switches"]+="$(awk -F, -v n="$handshakes" '$3 == "context-switches" { printf "%.1f", $1 / n }' "$NEG_WORK/perf") "
    fi
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for rep in $(seq "$NEG_REPS"); do
    if [ $((rep % 2)) -eq 1 ]; then order=(ws-open ws); else order=(ws ws-open); fi
    for endpoint in "${order[@]}"; do run "$endpoint"; done
    neglog "repetition $rep of $NEG_REPS done; load $(cut -d' ' -f1-3 /proc/loadavg)"
done

echo "Courier WebSocket handshakes, $NEG_COUNT per run, $NEG_REPS repetitions interleaved (medians); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| endpoint | handshakes/s | CPU µs per handshake | context switches per handshake |"
echo "| --- | --- | --- | --- |"
for endpoint in ws-open ws; do
    echo "| /$endpoint | $(median <<<"${NEG[$endpoint:rate]}") | $(median <<<"${NEG[$endpoint:cpu]:-}") | $(median <<<"${NEG[$endpoint:switches]:-}") |"
done
