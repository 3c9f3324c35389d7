#!/usr/bin/env bash
# Sourced by websocket-auth-part.sh: a Kerberos realm of its own in "$1" (a temporary directory), as
# the tests make one (Tests/CourierTests/TestServers/KerberosTestRealm.swift): a KDC on a free
# 127.0.0.1 port, the principals `bench` and `HTTP/127.0.0.1`, a keytab for the server, and a ticket
# for `bench` in a cache of its own. It exports the krb5 environment (KRB5_CONFIG, KRB5CCNAME,
# KRB5_KTNAME, ...) that the server and the client then use, and appends the KDC's pid to PIDS.
# Returns non-zero with a message when a tool is missing or no ticket comes.

kerberos_realm() {
    local dir="$1" realm=COURIER.TEST port tool
    for tool in /usr/sbin/krb5kdc /usr/sbin/kdb5_util /usr/sbin/kadmin.local /usr/bin/kinit; do
        [ -x "$tool" ] || { say "$tool is missing: run scripts/setup"; return 1; }
    done
    port="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    cat >"$dir/krb5.conf" <<CONF
[libdefaults]
    default_realm = $realm
    dns_canonicalize_hostname = false
    rdns = false
    dns_lookup_kdc = false
    dns_lookup_realm = false
    udp_preference_limit = 1
[realms]
    $realm = {
        kdc = 127.0.0.1:$port
    }
CONF
    cat >"$dir/kdc.conf" <<CONF
[realms]
    $realm = {
        database_name = $dir/principal
        key_stash_file = $dir/stash
        acl_file = $dir/kadm5.acl
        kdc_listen = 127.0.0.1:$port
        kdc_tcp_listen = 127.0.0.1:$port
    }
[logging]
    kdc = FILE:$dir/kdc.log
CONF
    : >"$dir/kadm5.acl"
    export KRB5_CONFIG="$dir/krb5.conf" KRB5_KDC_PROFILE="$dir/kdc.conf" KRB5CCNAME="FILE:$dir/ccache"
    export KRB5_KTNAME="FILE:$dir/http.keytab" KRB5RCACHEDIR="$dir"
    kdb5_util create -s -r "$realm" -P "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" >/dev/null 2>&1
    local command
    for command in "addprinc -randkey bench" "addprinc -randkey HTTP/127.0.0.1" \
                   "ktadd -k $dir/http.keytab HTTP/127.0.0.1" "ktadd -k $dir/client.keytab bench"; do
        kadmin.local -q "$command" >/dev/null 2>&1
    done
    krb5kdc -n >"$dir/krb5kdc.out" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do kinit -k -t "$dir/client.keytab" bench 2>/dev/null && break; sleep 0.1; done
    klist -s || { say "no ticket from the KDC: $(tail -5 "$dir/kdc.log" 2>/dev/null)"; return 1; }
    say "KDC on 127.0.0.1:$port, realm $realm, a ticket for bench"
}
