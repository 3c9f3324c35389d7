# The SFTP part of Courier's benchmark, sourced by Benchmarks/run.sh (not run on its own): a
# BENCH_SFTP_MIB download and upload over sftp:// through Courier, OpenSSH's `sftp` client and the
# curl command line (libssh2), in one run, against one OpenSSH sshd that this part starts on
# 127.0.0.1 and stops. FoundationNetworking has no sftp: it is run once each way, to record that.
#
# Knobs (read by run.sh's environment; defaults in brackets):
#   BENCH_SFTP [1]         0: skip the SFTP measurements (they need openssh-server and
#                          openssh-client, installed when missing)
#   BENCH_SFTP_MIB [512]   size of the SFTP download and upload, MiB
# The number of runs of each transfer is BENCH_HTTP_REPS [3], as for the large HTTP and FTP transfers.
#
# It uses run.sh's variables and functions: WORK, RAW, BIN, IMPLS, COURIER_STATUS, TIMEOUT,
# HTTP_REPS, LOCAL_PART, FILE, FILE_MIB, FTPD and FTP_BYTES (a body of the same size is reused), V,
# NEEDED, CURL_CAN_TIME, log, record, keep, num, and for the table fmt, ratio, verdict, mib and cell.
#
# Every client checks the server's host key against one known_hosts file and logs in with one
# ed25519 key, both made here:
#   Courier     HOME=<work>/home (its .ssh/id_ed25519 and .ssh/known_hosts are Courier's defaults
#               when the task has no credential), SSH_AUTH_SOCK unset
#   OpenSSH     sftp -F /dev/null -i KEY -o UserKnownHostsFile=... -o StrictHostKeyChecking=yes
#   curl        HOME=<work>/home (curl checks $HOME/.ssh/known_hosts unless --insecure), --key, --pubkey
# sshd logs at DEBUG1, which names the cipher and MAC of every connection: the part reads them for
# each client, and measures OpenSSH's sftp twice — with its defaults (what the target is judged on)
# and restricted to the cipher and MAC Courier's libssh2 negotiated (for explanation).

SFTP_PART="${BENCH_SFTP:-1}"
SFTP_MIB="${BENCH_SFTP_MIB:-512}"
SFTP_STATUS="not measured (BENCH_SFTP=0)"
SFTP_PID=""
SFTP_BYTES=""
SFTP_LOAD=""
SFTP_USER="$(id -un)"
if [ "$SFTP_PART" = "1" ]; then
    [ -x /usr/sbin/sshd ] || NEEDED+=(openssh-server)
    { command -v sftp >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1; } || NEEDED+=(openssh-client)
fi

# sftp_stop: stops the sshd this part started (run.sh's cleanup calls it too). Its per-connection
# processes end with their connections, which are all closed by then.
sftp_stop() {
    if [ -n "$SFTP_PID" ]; then
        kill "$SFTP_PID" 2>/dev/null || true
        wait "$SFTP_PID" 2>/dev/null || true
        SFTP_PID=""
    fi
}

# start_sshd: keys, known_hosts and a configuration in SFTPD, then sshd in the foreground
# (-D, logging to stderr with -e) on a free port of 127.0.0.1. Public-key login only, for the user
# running run.sh; internal-sftp (in sshd's own session process); the body in SFTPD/root/big.bin,
# uploads to SFTPD/root/upload/.
start_sshd() {
    local attempt tries hostkey
    SFTPD="$WORK/sftp"
    mkdir -p "$SFTPD/home/.ssh" "$SFTPD/root/upload" "$SFTPD/logs"
    chmod 700 "$SFTPD/home/.ssh"
    ssh-keygen -q -t ed25519 -N '' -C courier-bench-host -f "$SFTPD/host_ed25519" </dev/null
    ssh-keygen -q -t ed25519 -N '' -C courier-bench-client -f "$SFTPD/home/.ssh/id_ed25519" </dev/null
    cp "$SFTPD/home/.ssh/id_ed25519.pub" "$SFTPD/authorized_keys"
    SFTP_KEY="$SFTPD/home/.ssh/id_ed25519"
    SFTP_KNOWN="$SFTPD/home/.ssh/known_hosts"
    hostkey="$(cut -d' ' -f1,2 "$SFTPD/host_ed25519.pub")"
    # sshd started as root wants its privilege-separation directory.
    if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then mkdir -p /run/sshd && chmod 755 /run/sshd; fi
    if [ "$LOCAL_PART" = "1" ] && [ "$SFTP_MIB" = "$FILE_MIB" ]; then
        ln "$FILE" "$SFTPD/root/big.bin"
    elif [ -n "${FTPD:-}" ] && [ -f "$FTPD/root/big.bin" ] && [ "${FTP_BYTES:-}" = "$((SFTP_MIB * 1024 * 1024))" ]; then
        ln "$FTPD/root/big.bin" "$SFTPD/root/big.bin"
    else
        log "creating a ${SFTP_MIB} MiB SFTP test file from /dev/urandom"
        head -c "$((SFTP_MIB * 1024 * 1024))" /dev/urandom >"$SFTPD/root/big.bin"
    fi
    SFTP_BYTES="$(stat -c %s "$SFTPD/root/big.bin")"
    head -c 1024 /dev/urandom >"$SFTPD/root/small.bin"
    sync
    for ((attempt = 1; attempt <= 5; attempt++)); do
        SFTP_PORT="$((20000 + RANDOM % 20000))"
        cat >"$SFTPD/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $SFTP_PORT
HostKey $SFTPD/host_ed25519
PidFile $SFTPD/sshd.pid
AuthorizedKeysFile $SFTPD/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
AllowUsers $SFTP_USER
Compression no
X11Forwarding no
PrintMotd no
Subsystem sftp internal-sftp
LogLevel DEBUG1
CONF
        echo "[127.0.0.1]:$SFTP_PORT $hostkey" >"$SFTP_KNOWN"
        /usr/sbin/sshd -D -e -f "$SFTPD/sshd_config" </dev/null >"$SFTPD/logs/sshd.log" 2>&1 &
        SFTP_PID=$!
        for ((tries = 0; tries < 100; tries++)); do
            if grep -q "Server listening on 127.0.0.1 port $SFTP_PORT" "$SFTPD/logs/sshd.log" 2>/dev/null; then
                log "sshd serves sftp://127.0.0.1:$SFTP_PORT"
                return 0
            fi
            kill -0 "$SFTP_PID" 2>/dev/null || break
            sleep 0.1
        done
        sftp_stop
    done
    log "sshd did not start: $(tail -3 "$SFTPD/logs/sshd.log" 2>/dev/null)"
    return 1
}

# sftp_mark: the number of lines in sshd's log now; sftp_cipher MARK CLIENT: reads the cipher and
# MAC of the connection(s) logged after MARK ("aes128-ctr hmac-sha2-256"; chacha20-poly1305's MAC is
# "<implicit>") and keeps the first seen under CLIENT:cipher.
sftp_mark() { wc -l <"$SFTPD/logs/sshd.log"; }
sftp_cipher() {
    local found
    found="$(tail -n "+$(($1 + 1))" "$SFTPD/logs/sshd.log" |
        sed -nE 's/.*kex: server->client cipher: ([^ ]+) MAC: ([^ ]+) .*/\1 \2/p' | head -1)"
    if [ -n "$found" ] && [ -z "${V["$2:cipher"]:-}" ]; then V["$2:cipher"]="$found"; fi
}

# sftp_server_ticks: the CPU time (clock ticks, user + system) of the sshd processes that served
# connections and have ended: the listener's cutime + cstime, which take in every connection's
# processes once the listener has reaped them. sftp_server_settle waits (up to 5 s) until the
# listener has no child left, so that a run's figure is complete before it is read.
sftp_server_ticks() { awk '{ print $16 + $17 }' "/proc/$SFTP_PID/stat" 2>/dev/null || echo 0; }
sftp_server_settle() {
    local tries
    for ((tries = 0; tries < 50; tries++)); do
        [ -s "/proc/$SFTP_PID/task/$SFTP_PID/children" ] || return 0
        sleep 0.1
    done
}
# sftp_server_record CLIENT KEY TICKS-BEFORE: keeps the CPU seconds sshd spent on a run (the least).
sftp_server_record() {
    local after cpu
    sftp_server_settle
    after="$(sftp_server_ticks)"
    num "$after" && num "$3" || return 0
    cpu="$(awk -v a="$3" -v b="$after" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz }')"
    V["$1:$2:server_cpu"]="$(keep cpu s "${V["$1:$2:server_cpu"]:-}" "$cpu")"
}

# sftp_time_record CLIENT KEY: reads /usr/bin/time's "%M %U %S" from WORK/sftp-time into peak RSS
# (bytes; the largest kept) and CPU seconds (user + system; the least kept).
sftp_time_record() {
    local client="$1" key="$2" rss user sys cpu
    [ -s "$WORK/sftp-time" ] || return 0
    read -r rss user sys < <(tail -1 "$WORK/sftp-time") || return 0
    if num "$rss"; then V["$client:$key:peak_rss"]="$(keep peak_rss bytes "${V["$client:$key:peak_rss"]:-}" "$((rss * 1024))")"; fi
    if num "$user" && num "$sys"; then
        cpu="$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')"
        V["$client:$key:cpu"]="$(keep cpu s "${V["$client:$key:cpu"]:-}" "$cpu")"
    fi
}

# sbench KEY REP IMPL MEASUREMENT ARGS...: run REP of a bench binary's measurement (as fbench in
# ftp-part.sh), with HOME set to the folder holding the client key and known_hosts and no ssh-agent,
# under /usr/bin/time for the process's CPU time. "@TAG@" in ARGS becomes the run's tag. After an
# upload, the size sshd stored is checked (a short file turns the run's MB/s into "failed") and the
# file removed. A crash after the results were printed (a signal, such as SIGSEGV: exit status 139,
# and the Swift runtime's "Program crashed") keeps the run's result and is counted under
# IMPL:KEY:exitcrash.
sbench() {
    local key="$1" rep="$2" impl="$3" what="$4"; shift 4
    local out rc tag stored="" mark ticks args=() timer=()
    [ -z "${V["$impl:$key:stopped"]:-}" ] || return 0
    tag="$impl-$key-$rep"
    args=("${@//@TAG@/$tag}")
    [ -n "$CURL_CAN_TIME" ] && timer=("$CURL_CAN_TIME" -f '%M %U %S' -o "$WORK/sftp-time")
    rm -f "$WORK/sftp-time"
    log "$impl $key ($rep/$HTTP_REPS)"
    sftp_server_settle
    ticks="$(sftp_server_ticks)"
    mark="$(sftp_mark)"
    rc=0
    out="$(timeout "$((TIMEOUT + 30))" "${timer[@]}" env -u SSH_AUTH_SOCK HOME="$SFTPD/home" \
        "$BIN/bench-$impl" "$what" --timeout "$TIMEOUT" "${args[@]}" 2>&1)" || rc=$?
    printf '### %s %s run %d (exit %d)\n%s\n' "$impl" "$key" "$rep" "$rc" "$out" >>"$RAW"
    grep '^NOTE' <<<"$out" >&2 || true
    sftp_cipher "$mark" "$impl"
    if [ "$what" = "http-upload" ]; then
        stored="$(stat -c %s "$SFTPD/root/upload/$tag.bin" 2>/dev/null || echo 0)"
        printf 'STORED %s %s bytes\n' "$tag" "$stored" >>"$RAW"
        if [ "$stored" != "$SFTP_BYTES" ] && grep -Eq '^RESULT http_upload_mbps [0-9.]+ ' <<<"$out"; then
            log "sshd stored $stored bytes of $SFTP_BYTES for $tag"
            out="$(sed -E 's/^RESULT http_upload_mbps [0-9.]+ /RESULT http_upload_mbps failed /' <<<"$out")"
        fi
        rm -f "$SFTPD/root/upload/$tag.bin"
    fi
    # http-download reports any error as "failed"; URLError.unsupportedURL is a missing protocol.
    if grep -q '^NOTE .*failed: NSURLErrorDomain -1002:' <<<"$out"; then
        out="$(sed -E 's/^RESULT (http_[a-z]+_mbps) failed /RESULT \1 unsupported /' <<<"$out")"
    fi
    record "$impl:$key" <<<"$out"
    if grep -Eq '^RESULT http_[a-z]+_mbps [0-9.]+ ' <<<"$out"; then
        sftp_time_record "$impl" "$key"
        sftp_server_record "$impl" "$key" "$ticks"
        # A crash after the measurement reported (and its file was checked) keeps the result; it
        # is counted and reported, and the next runs go on.
        if [ "$rc" -gt 128 ] || { [ "$rc" -ne 0 ] && grep -q 'Program crashed' <<<"$out"; }; then
            V["$impl:$key:exitcrash"]="$((${V["$impl:$key:exitcrash"]:-0} + 1))"
            log "bench-$impl $what ($key) crashed after reporting its result (exit $rc; see $RAW)"
            rc=0
        fi
    fi
    if [ "$rc" -ne 0 ]; then
        V["$impl:$key:crash"]="exit $rc"
        V["$impl:$key:stopped"]=1
        log "bench-$impl $what ($key) exited with $rc (see $RAW)"
    elif grep -Eq '^RESULT [a-z_]+ (unsupported|failed|timeout) ' <<<"$out"; then
        V["$impl:$key:stopped"]=1
        V["$impl:$key:why"]="$(grep -m1 '^NOTE' <<<"$out" | sed 's/^NOTE \[[a-z]*\] //')"
        if [ -n "$stored" ] && [ "$stored" != 0 ]; then V["$impl:$key:why"]+=" (sshd stored $stored of $SFTP_BYTES bytes)"; fi
    fi
    sync
}

# scommand KEY REP CLIENT OUTPUT COMMAND...: run REP of a command-line client (OpenSSH's sftp or
# curl): wall clock of the whole process (the best kept), peak RSS and CPU time from /usr/bin/time
# (sftp's figures include its ssh process, which it waits for). "@TAG@" in the arguments and in
# OUTPUT becomes the run's tag; OUTPUT is the file the run makes (the download, or the upload as sshd
# stored it): its size is checked (1,024 bytes for the key sftp_small, else the body's) and it is
# removed right after the run.
scommand() {
    local key="$1" rep="$2" client="$3" output="$4"; shift 4
    local tag t0 t1 s rc stored made mark ticks expected="$SFTP_BYTES" args=() timer=()
    [ "$key" = "sftp_small" ] && expected=1024
    [ -z "${V["$client:$key:stopped"]:-}" ] || return 0
    tag="$client-$key-$rep"
    args=("${@//@TAG@/$tag}")
    made="${output//@TAG@/$tag}"
    [ -n "$CURL_CAN_TIME" ] && timer=("$CURL_CAN_TIME" -f '%M %U %S' -o "$WORK/sftp-time")
    rm -f "$made" "$WORK/sftp-time"
    log "$client $key ($rep/$HTTP_REPS)"
    sftp_server_settle
    ticks="$(sftp_server_ticks)"
    mark="$(sftp_mark)"
    rc=0
    t0="$(date +%s%N)"
    timeout "$TIMEOUT" "${timer[@]}" "${args[@]}" >"$WORK/sftp-out" 2>&1 </dev/null || rc=$?
    t1="$(date +%s%N)"
    s="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')"
    sftp_cipher "$mark" "$client"
    printf '### %s %s run %d (exit %d): %s s, /usr/bin/time %s\n%s\n' "$client" "$key" "$rep" "$rc" "$s" \
        "$(tail -1 "$WORK/sftp-time" 2>/dev/null)" "$(head -c 2000 "$WORK/sftp-out")" >>"$RAW"
    stored="$(stat -c %s "$made" 2>/dev/null || echo 0)"
    printf 'STORED %s %s bytes\n' "$tag" "$stored" >>"$RAW"
    rm -f "$made"
    if [ "$rc" -ne 0 ] || [ "$stored" != "$expected" ]; then
        V["$client:$key:seconds"]="failed"
        V["$client:$key:stopped"]=1
        V["$client:$key:why"]="exit $rc, $stored of $expected bytes: $(head -c 200 "$WORK/sftp-out" | tr '\n' ' ')"
        log "$client $key failed (exit $rc, $stored bytes of $expected; see $RAW)"
        return 0
    fi
    V["$client:$key:seconds"]="$(keep seconds s "${V["$client:$key:seconds"]:-}" "$s")"
    sftp_time_record "$client" "$key"
    sftp_server_record "$client" "$key" "$ticks"
    sync
}

# sftp_part: starts sshd, measures the download and the upload of Courier, OpenSSH's sftp (default
# ciphers, then Courier's cipher and MAC) and curl against it, FoundationNetworking once, and stops
# it. The clients take turns: each round runs every client once (downloads, then uploads).
sftp_part() {
    [ "$SFTP_PART" = "1" ] || return 0
    if ! start_sshd; then
        SFTP_STATUS="not measured (sshd did not start)"
        return 0
    fi
    SFTP_STATUS="measured"
    SFTP_LOAD="$(cut -d' ' -f1-3 /proc/loadavg)"
    local base="sftp://127.0.0.1:$SFTP_PORT$SFTPD/root" dl="$WORK/sftp-download.bin" body="$SFTPD/root/big.bin"
    local impl rep same=() ssh=()
    ssh=(sftp -q -F /dev/null -P "$SFTP_PORT" -i "$SFTP_KEY" -o IdentitiesOnly=yes -o IdentityAgent=none
        -o UserKnownHostsFile="$SFTP_KNOWN" -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes
        -o BatchMode=yes)
    printf 'get %s %s\n' "$body" "$dl" >"$SFTPD/get.batch"
    printf 'get %s %s\n' "$SFTPD/root/small.bin" "$dl" >"$SFTPD/get-small.batch"
    for ((rep = 1; rep <= HTTP_REPS; rep++)); do
        printf 'put %s %s\n' "$body" "$SFTPD/root/upload/openssh-sftp_upload-$rep.bin" >"$SFTPD/put-openssh-$rep.batch"
        printf 'put %s %s\n' "$body" "$SFTPD/root/upload/openssh_same-sftp_upload-$rep.bin" >"$SFTPD/put-openssh_same-$rep.batch"
    done
    for ((rep = 1; rep <= HTTP_REPS; rep++)); do
        # The fixed cost of a session: a 1 KiB download (connection, key exchange, login, open).
        if [ "$COURIER_STATUS" = "measured" ]; then
            sbench sftp_small "$rep" courier http-download --url "$base/small.bin" --size 1024 --file "$dl"
            rm -f "$dl"
        fi
        scommand sftp_small "$rep" openssh "$dl" "${ssh[@]}" -b "$SFTPD/get-small.batch" "$SFTP_USER@127.0.0.1"
        scommand sftp_small "$rep" curl "$dl" env HOME="$SFTPD/home" curl -sS --fail -u "$SFTP_USER:" \
            --key "$SFTP_KEY" --pubkey "$SFTP_KEY.pub" -o "$dl" "$base/small.bin"
        for impl in "${IMPLS[@]}"; do
            sbench sftp_download "$rep" "$impl" http-download --url "$base/big.bin" --size "$SFTP_BYTES" --file "$dl"
            rm -f "$dl"
        done
        # OpenSSH restricted to what Courier negotiated (libssh2 1.10: aes128-ctr, hmac-sha2-256).
        if [ "${#same[@]}" -eq 0 ]; then
            local cipher mac
            read -r cipher mac <<<"${V[courier:cipher]:-aes128-ctr hmac-sha2-256}"
            same=(-o Ciphers="$cipher")
            [ "$mac" != "<implicit>" ] && same+=(-o MACs="$mac")
            V[openssh_same:options]="${same[*]}"
        fi
        scommand sftp_download "$rep" openssh "$dl" "${ssh[@]}" -b "$SFTPD/get.batch" "$SFTP_USER@127.0.0.1"
        scommand sftp_download "$rep" openssh_same "$dl" "${ssh[@]}" "${same[@]}" -b "$SFTPD/get.batch" "$SFTP_USER@127.0.0.1"
        scommand sftp_download "$rep" curl "$dl" env HOME="$SFTPD/home" curl -sS --fail -u "$SFTP_USER:" \
            --key "$SFTP_KEY" --pubkey "$SFTP_KEY.pub" -o "$dl" "$base/big.bin"
        for impl in "${IMPLS[@]}"; do
            sbench sftp_upload "$rep" "$impl" http-upload --url "$base/upload/@TAG@.bin" --file "$body"
        done
        scommand sftp_upload "$rep" openssh "$SFTPD/root/upload/@TAG@.bin" "${ssh[@]}" -b "$SFTPD/put-openssh-$rep.batch" "$SFTP_USER@127.0.0.1"
        scommand sftp_upload "$rep" openssh_same "$SFTPD/root/upload/@TAG@.bin" "${ssh[@]}" "${same[@]}" \
            -b "$SFTPD/put-openssh_same-$rep.batch" "$SFTP_USER@127.0.0.1"
        scommand sftp_upload "$rep" curl "$SFTPD/root/upload/@TAG@.bin" env HOME="$SFTPD/home" curl -sS --fail \
            -u "$SFTP_USER:" --key "$SFTP_KEY" --pubkey "$SFTP_KEY.pub" -T "$body" "$base/upload/@TAG@.bin"
    done
    sftp_stop
    { echo "### sshd: connections and the ciphers they negotiated"
      grep -E 'Connection from|kex: (client|server)->' "$SFTPD/logs/sshd.log" || true; } >>"$RAW"
}

# sftp_table: the SFTP section of the Markdown table.
sftp_table() {
    if [ "$SFTP_STATUS" != "measured" ]; then
        printf '## SFTP\n\nSFTP: %s.\n' "$SFTP_STATUS"
        return 0
    fi
    local limit=$((64 * 1048576)) version libssh2 key dir c f o s k name what
    sftp_mbps() { # sftp_mbps CLIENT KEY: a command-line client's MB/s
        if num "${V["$1:$2:seconds"]:-}"; then
            awk -v b="$SFTP_BYTES" -v s="${V["$1:$2:seconds"]}" 'BEGIN { printf "%.1f", b / s / 1e6 }'
        else echo "${V["$1:$2:seconds"]:-}"; fi
    }
    sftp_rss() { # sftp_rss VALUE: a peak RSS in MiB, or the word the benchmark printed
        if num "${1:-}"; then mib "$1"; else echo "${1:-—}"; fi
    }
    sftp_ciphers() { # the cipher and MAC a client negotiated, for the text
        local v="${V["$1:cipher"]:-}"
        if [ -z "$v" ]; then echo "not seen"; return; fi
        set -- $v
        if [ "$2" = "<implicit>" ]; then echo "\`$1\`"; else echo "\`$1\` + \`$2\`"; fi
    }
    version="$(dpkg-query -W -f '${Version}' openssh-server 2>/dev/null || echo '?')"
    libssh2="$(dpkg-query -W -f '${Version}' libssh2-1 2>/dev/null || echo '?')"
    cat <<EOF
## SFTP (OpenSSH sshd on 127.0.0.1)

OpenSSH sshd $version (\`internal-sftp\`), started for the run with its own ed25519 host key;
public-key login (ed25519) as \`$SFTP_USER\`; every client checks the host key against the same
known_hosts file. Load average (1, 5, 15 min) when the SFTP measurements started: $SFTP_LOAD. Best of
$HTTP_REPS runs, the clients taking turns; body $(fmt "$SFTP_BYTES") bytes of random data, the same file
downloaded and uploaded; every download's and stored upload's size is checked. Courier: the
\`http-download\` and \`http-upload\` measurements with an sftp:// URL, timed inside the process
(connection, key exchange and login included, process start-up not); OpenSSH \`sftp -b BATCH\`
(\`get\`/\`put\`, default 64 requests of 32 KiB) and curl (libssh2 $libssh2): their whole process. The
1 KiB row shows what a session costs before the first byte, in the same terms. CPU: user + system seconds of the client
process (for sftp, with its ssh process), the least over the runs (\`/usr/bin/time\`); sshd CPU: what
the connection's sshd processes spent (the listener's children's time), the least over the runs.

Ciphers negotiated (sshd's log): Courier $(sftp_ciphers courier); OpenSSH sftp $(sftp_ciphers openssh);
OpenSSH sftp with \`${V[openssh_same:options]:-?}\` $(sftp_ciphers openssh_same); curl $(sftp_ciphers curl).
The target is judged on OpenSSH's defaults; the same-cipher column shows how much of the difference
is the cipher.

| Measurement | Courier | FoundationNetworking | OpenSSH sftp | OpenSSH sftp, Courier's cipher | curl | Courier ÷ OpenSSH | Courier ÷ OpenSSH, same cipher | Courier ÷ curl | Target | Met |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |
EOF
    for dir in download upload; do
        key="sftp_$dir"
        c="${V["courier:$key:http_${dir}_mbps"]:-}"
        f="${V["foundation:$key:http_${dir}_mbps"]:-}"
        o="$(sftp_mbps openssh "$key")"; s="$(sftp_mbps openssh_same "$key")"; k="$(sftp_mbps curl "$key")"
        printf '| %s MiB sftp %s, MB/s | %s | %s | %s | %s | %s | %s | %s | %s | ≥ 0.8× OpenSSH sftp | %s |\n' \
            "$SFTP_MIB" "$dir" "$(cell "$c" 1)" "$(fmt "$f" 1)" "$(fmt "$o" 1)" "$(fmt "$s" 1)" "$(fmt "$k" 1)" \
            "$(ratio "$c" "$o" 2)" "$(ratio "$c" "$s" 2)" "$(ratio "$c" "$k" 2)" "$(verdict "$c" "$o" ">=" 0.8)"
        printf '| %s MiB sftp %s, peak RSS (MiB) | %s | %s | %s | %s | %s | — | — | — | < 64 MiB | %s |\n' \
            "$SFTP_MIB" "$dir" "$(cell "$(sftp_rss "${V["courier:$key:http_${dir}_peak_rss"]:-}")" 1)" \
            "$(fmt "$(sftp_rss "${V["foundation:$key:http_${dir}_peak_rss"]:-}")" 1)" \
            "$(fmt "$(mib "${V["openssh:$key:peak_rss"]:-}")" 1)" "$(fmt "$(mib "${V["openssh_same:$key:peak_rss"]:-}")" 1)" \
            "$(fmt "$(mib "${V["curl:$key:peak_rss"]:-}")" 1)" \
            "$(verdict "${V["courier:$key:http_${dir}_peak_rss"]:-}" "$limit" "<" 1)"
        printf '| %s MiB sftp %s, client CPU (s) | %s | — | %s | %s | %s | — | — | — | — | — |\n' \
            "$SFTP_MIB" "$dir" "$(cell "${V["courier:$key:cpu"]:-}" 2)" "$(fmt "${V["openssh:$key:cpu"]:-}" 2)" \
            "$(fmt "${V["openssh_same:$key:cpu"]:-}" 2)" "$(fmt "${V["curl:$key:cpu"]:-}" 2)"
        printf '| %s MiB sftp %s, sshd CPU (s) | %s | — | %s | %s | %s | — | — | — | — | — |\n' \
            "$SFTP_MIB" "$dir" "$(cell "${V["courier:$key:server_cpu"]:-}" 2)" "$(fmt "${V["openssh:$key:server_cpu"]:-}" 2)" \
            "$(fmt "${V["openssh_same:$key:server_cpu"]:-}" 2)" "$(fmt "${V["curl:$key:server_cpu"]:-}" 2)"
    done
    small_ms() { # small_ms SECONDS: milliseconds, or the word
        if num "${1:-}"; then awk -v s="$1" 'BEGIN { printf "%.0f", s * 1000 }'; else echo "${1:-—}"; fi
    }
    printf '| 1 KiB sftp download: the set-up of a session, ms (least) | %s | — | %s | — | %s | — | — | — | — | — |\n' \
        "$(cell "$(small_ms "${V[courier:sftp_small:http_download_seconds]:-}")" 0)" \
        "$(small_ms "${V[openssh:sftp_small:seconds]:-}")" "$(small_ms "${V[curl:sftp_small:seconds]:-}")"
    printf '\ncurl ÷ OpenSSH sftp: download %s, upload %s.\n' \
        "$(ratio "$(sftp_mbps curl sftp_download)" "$(sftp_mbps openssh sftp_download)" 2)" \
        "$(ratio "$(sftp_mbps curl sftp_upload)" "$(sftp_mbps openssh sftp_upload)" 2)"
    for key in courier:sftp_small openssh:sftp_small curl:sftp_small courier:sftp_download foundation:sftp_download openssh:sftp_download openssh_same:sftp_download curl:sftp_download \
        courier:sftp_upload foundation:sftp_upload openssh:sftp_upload openssh_same:sftp_upload curl:sftp_upload; do
        name="${key%%:*}"
        case "$name" in
            courier) name="Courier" ;; foundation) name="FoundationNetworking" ;;
            openssh) name="OpenSSH sftp" ;; openssh_same) name="OpenSSH sftp (Courier's cipher)" ;;
        esac
        what="sftp ${key#*:sftp_}"
        [ "$what" = "sftp small" ] && what="1 KiB sftp download"
        if [ -n "${V["$key:why"]:-}" ]; then printf '\n%s, %s: %s.\n' "$name" "$what" "${V["$key:why"]}"; fi
        if [ -n "${V["$key:exitcrash"]:-}" ]; then
            printf '\n%s, %s: the process crashed while exiting, after reporting its result, in %s of %s runs; the results are kept (see results/latest-raw.txt).\n' \
                "$name" "$what" "${V["$key:exitcrash"]}" "$HTTP_REPS"
        fi
    done
}
