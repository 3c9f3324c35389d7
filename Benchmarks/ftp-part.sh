# The FTP part of Courier's benchmark, sourced by Benchmarks/run.sh (not run on its own): a
# BENCH_FTP_MIB download and upload over ftp:// through Courier, FoundationNetworking and the curl
# command line, in one run, against one vsftpd that this part starts on 127.0.0.1 and stops.
#
# Knobs (read by run.sh's environment; defaults in brackets):
#   BENCH_FTP [1]         0: skip the FTP measurements (they need vsftpd, installed when missing)
#   BENCH_FTP_MIB [512]   size of the FTP download and upload, MiB
# The number of runs of each transfer is BENCH_HTTP_REPS [3], as for the large HTTP transfers.
#
# It uses run.sh's variables and functions: WORK, RAW, BIN, IMPLS, TIMEOUT, HTTP_REPS, LOCAL_PART,
# FILE, FILE_MIB, V, NEEDED, CURL_CAN_TIME, log, record, keep, num, and for the table fmt, ratio,
# verdict, mib and cell.

FTP_PART="${BENCH_FTP:-1}"
FTP_MIB="${BENCH_FTP_MIB:-512}"
FTP_STATUS="not measured (BENCH_FTP=0)"
FTP_PID=""
FTP_BYTES=""
FTP_LOAD=""
if [ "$FTP_PART" = "1" ]; then
    [ -x /usr/sbin/vsftpd ] || command -v vsftpd >/dev/null 2>&1 || NEEDED+=(vsftpd)
fi

# ftp_stop: stops the vsftpd this part started (run.sh's cleanup calls it too).
ftp_stop() {
    if [ -n "$FTP_PID" ]; then
        kill "$FTP_PID" 2>/dev/null || true
        wait "$FTP_PID" 2>/dev/null || true
        FTP_PID=""
    fi
}

# start_vsftpd: a vsftpd in the foreground (background=NO, standalone listen=YES) on a free port of
# 127.0.0.1 with a passive port range above it. Anonymous login only (no password), chrooted to
# FTPD/root: big.bin to download, and upload/ (owned by the ftp user) where anonymous uploads go.
# seccomp_sandbox and the network/PID isolation are off, as they fail in some containers.
start_vsftpd() {
    local vsftpd_bin attempt tries ftp_user=ftp
    vsftpd_bin="$(command -v vsftpd || echo /usr/sbin/vsftpd)"
    if ! id "$ftp_user" >/dev/null 2>&1; then
        log "vsftpd: no system user '$ftp_user' for anonymous logins"
        return 1
    fi
    FTPD="$WORK/ftp"
    mkdir -p "$FTPD/root/upload" "$FTPD/empty" "$FTPD/logs"
    # The anonymous user reaches these after vsftpd's chroot; the temporary folder itself is 0700.
    chmod 755 "$FTPD" "$FTPD/root" "$FTPD/empty"
    chown "$ftp_user" "$FTPD/root/upload"
    chmod 755 "$FTPD/root/upload"
    if [ "$LOCAL_PART" = "1" ] && [ "$FTP_MIB" = "$FILE_MIB" ]; then
        ln "$FILE" "$FTPD/root/big.bin"
    else
        log "creating a ${FTP_MIB} MiB FTP test file from /dev/urandom"
        head -c "$((FTP_MIB * 1024 * 1024))" /dev/urandom >"$FTPD/root/big.bin"
    fi
    chmod 644 "$FTPD/root/big.bin"
    FTP_BYTES="$(stat -c %s "$FTPD/root/big.bin")"
    sync
    for ((attempt = 1; attempt <= 5; attempt++)); do
        FTP_PORT="$((20000 + RANDOM % 20000))"
        cat >"$FTPD/vsftpd.conf" <<CONF
listen=YES
listen_ipv6=NO
listen_address=127.0.0.1
listen_port=$FTP_PORT
background=NO
seccomp_sandbox=NO
isolate=NO
isolate_network=NO
anonymous_enable=YES
no_anon_password=YES
ftp_username=$ftp_user
anon_root=$FTPD/root
local_enable=NO
write_enable=YES
anon_upload_enable=YES
anon_mkdir_write_enable=NO
anon_other_write_enable=NO
anon_umask=022
pasv_enable=YES
pasv_min_port=$((FTP_PORT + 1))
pasv_max_port=$((FTP_PORT + 40))
connect_from_port_20=NO
secure_chroot_dir=$FTPD/empty
dirmessage_enable=NO
use_sendfile=YES
xferlog_enable=YES
xferlog_std_format=NO
vsftpd_log_file=$FTPD/logs/vsftpd.log
ssl_enable=NO
CONF
        "$vsftpd_bin" "$FTPD/vsftpd.conf" </dev/null >"$FTPD/logs/stderr.log" 2>&1 &
        FTP_PID=$!
        for ((tries = 0; tries < 100; tries++)); do
            if curl -s -o /dev/null --max-time 2 "ftp://127.0.0.1:$FTP_PORT/"; then
                log "vsftpd serves ftp://127.0.0.1:$FTP_PORT"
                return 0
            fi
            kill -0 "$FTP_PID" 2>/dev/null || break
            sleep 0.1
        done
        ftp_stop
    done
    log "vsftpd did not start: $(tail -3 "$FTPD/logs/stderr.log" 2>/dev/null)"
    return 1
}

# fbench KEY REP IMPL MEASUREMENT ARGS...: run REP of a bench binary's measurement, its results
# kept under IMPL:KEY (the best over the runs); "@TAG@" in ARGS becomes the run's tag. After an
# upload, the size vsftpd stored is checked (a short file turns the run's MB/s into "failed") and the
# file removed. A client that crashed, failed or timed out is not run again (IMPL:KEY:stopped).
fbench() {
    local key="$1" rep="$2" impl="$3" what="$4"; shift 4
    local out rc tag stored="" args=()
    [ -z "${V["$impl:$key:stopped"]:-}" ] || return 0
    tag="$impl-$key-$rep"
    args=("${@//@TAG@/$tag}")
    log "$impl $key ($rep/$HTTP_REPS)"
    rc=0
    out="$(timeout "$((TIMEOUT + 30))" "$BIN/bench-$impl" "$what" --timeout "$TIMEOUT" "${args[@]}" 2>&1)" || rc=$?
    printf '### %s %s run %d (exit %d)\n%s\n' "$impl" "$key" "$rep" "$rc" "$out" >>"$RAW"
    grep '^NOTE' <<<"$out" >&2 || true
    if [ "$what" = "http-upload" ]; then
        stored="$(stat -c %s "$FTPD/root/upload/$tag.bin" 2>/dev/null || echo 0)"
        printf 'STORED %s %s bytes\n' "$tag" "$stored" >>"$RAW"
        if [ "$stored" != "$FTP_BYTES" ] && grep -Eq '^RESULT http_upload_mbps [0-9.]+ ' <<<"$out"; then
            log "vsftpd stored $stored bytes of $FTP_BYTES for $tag"
            out="$(sed -E 's/^RESULT http_upload_mbps [0-9.]+ /RESULT http_upload_mbps failed /' <<<"$out")"
        fi
        rm -f "$FTPD/root/upload/$tag.bin"
    fi
    record "$impl:$key" <<<"$out"
    if [ "$rc" -ne 0 ]; then
        V["$impl:$key:crash"]="exit $rc"
        V["$impl:$key:stopped"]=1
        log "bench-$impl $what ($key) exited with $rc (see $RAW)"
    elif grep -Eq '^RESULT [a-z_]+ (unsupported|failed|timeout) ' <<<"$out"; then
        V["$impl:$key:stopped"]=1
        # Why, for the table: the run's first note, and what vsftpd stored of an upload.
        V["$impl:$key:why"]="$(grep -m1 '^NOTE' <<<"$out" | sed 's/^NOTE \[[a-z]*\] //')${stored:+ (vsftpd stored $stored of $FTP_BYTES bytes)}"
    fi
    sync
}

# ftp_curl KEY REP OUTPUT CURL-ARGS...: run REP of the curl command line (wall clock of the whole
# process, the best kept; peak RSS the largest); "@TAG@" in the arguments and in OUTPUT becomes the
# run's tag. OUTPUT is the file the run makes (the download, or the upload as vsftpd stored it): its
# size is checked and it is removed right after the run, as the bench binaries' files are (stored
# 512 MiB files that sync writes to disk make the next runs slower).
ftp_curl() {
    local key="$1" rep="$2" output="$3"; shift 3
    local tag t0 t1 s rc rss stored made args=()
    [ -z "${V["curl:$key:stopped"]:-}" ] || return 0
    tag="curl-$key-$rep"
    args=("${@//@TAG@/$tag}")
    made="${output//@TAG@/$tag}"
    rm -f "$made" "$WORK/curl-rss"
    log "curl $key ($rep/$HTTP_REPS)"
    rc=0
    t0="$(date +%s%N)"
    if [ -n "$CURL_CAN_TIME" ]; then
        timeout "$TIMEOUT" "$CURL_CAN_TIME" -f '%M' -o "$WORK/curl-rss" curl -sS "${args[@]}" >/dev/null 2>"$WORK/curl-err" || rc=$?
    else
        timeout "$TIMEOUT" curl -sS "${args[@]}" >/dev/null 2>"$WORK/curl-err" || rc=$?
    fi
    t1="$(date +%s%N)"
    s="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')"
    rss="$(tail -1 "$WORK/curl-rss" 2>/dev/null || true)"
    printf '### curl %s run %d (exit %d): %s s, peak RSS %s kB\n%s\n' "$key" "$rep" "$rc" "$s" "$rss" "$(head -c 2000 "$WORK/curl-err")" >>"$RAW"
    stored="$(stat -c %s "$made" 2>/dev/null || echo 0)"
    printf 'STORED %s %s bytes\n' "$tag" "$stored" >>"$RAW"
    rm -f "$made"
    if [ "$rc" -ne 0 ] || [ "$stored" != "$FTP_BYTES" ]; then
        V["curl:$key:seconds"]="failed"
        V["curl:$key:stopped"]=1
        log "curl $key failed (exit $rc, $stored bytes of $FTP_BYTES; see $RAW)"
        return 0
    fi
    V["curl:$key:seconds"]="$(keep seconds s "${V["curl:$key:seconds"]:-}" "$s")"
    if num "$rss"; then V["curl:$key:peak_rss"]="$(keep peak_rss bytes "${V["curl:$key:peak_rss"]:-}" "$((rss * 1024))")"; fi
    sync
}

# ftp_part: starts vsftpd, measures the download and the upload of Courier, FoundationNetworking
# and curl against it, and stops it. The clients take turns: each round runs every client once
# (downloads, then uploads), so a burst of load from elsewhere on the machine hits one round of all
# of them rather than all the runs of one.
ftp_part() {
    [ "$FTP_PART" = "1" ] || return 0
    if ! start_vsftpd; then
        FTP_STATUS="not measured (vsftpd did not start)"
        return 0
    fi
    FTP_STATUS="measured"
    FTP_LOAD="$(cut -d' ' -f1-3 /proc/loadavg)"
    local base="ftp://127.0.0.1:$FTP_PORT" dl="$WORK/ftp-download.bin" body="$FTPD/root/big.bin" impl rep
    for ((rep = 1; rep <= HTTP_REPS; rep++)); do
        for impl in "${IMPLS[@]}"; do
            fbench ftp_download "$rep" "$impl" http-download --url "$base/big.bin" --size "$FTP_BYTES" --file "$dl"
            rm -f "$dl"
        done
        ftp_curl ftp_download "$rep" "$dl" -o "$dl" "$base/big.bin"
        for impl in "${IMPLS[@]}"; do
            fbench ftp_upload "$rep" "$impl" http-upload --url "$base/upload/@TAG@.bin" --file "$body"
        done
        ftp_curl ftp_upload "$rep" "$FTPD/root/upload/@TAG@.bin" -T "$body" "$base/upload/@TAG@.bin"
    done
    ftp_stop
}

# ftp_table: the FTP section of the Markdown table.
ftp_table() {
    if [ "$FTP_STATUS" != "measured" ]; then
        printf '## FTP\n\nFTP: %s.\n' "$FTP_STATUS"
        return 0
    fi
    local limit=$((64 * 1048576)) version dl_c dl_f dl_k up_c up_f up_k
    ftp_mbps() { # ftp_mbps KEY: curl's MB/s for the FTP body
        if num "${V["curl:$1:seconds"]:-}"; then
            awk -v b="$FTP_BYTES" -v s="${V["curl:$1:seconds"]}" 'BEGIN { printf "%.1f", b / s / 1e6 }'
        else echo "${V["curl:$1:seconds"]:-}"; fi
    }
    ftp_rss() { # ftp_rss VALUE: a peak RSS in MiB, or the word the benchmark printed
        if num "${1:-}"; then mib "$1"; else echo "${1:-—}"; fi
    }
    version="$(dpkg-query -W -f '${Version}' vsftpd 2>/dev/null || echo '?')"
    dl_c="${V[courier:ftp_download:http_download_mbps]:-}"; dl_f="${V[foundation:ftp_download:http_download_mbps]:-}"
    dl_k="$(ftp_mbps ftp_download)"
    up_c="${V[courier:ftp_upload:http_upload_mbps]:-}"; up_f="${V[foundation:ftp_upload:http_upload_mbps]:-}"
    up_k="$(ftp_mbps ftp_upload)"
    cat <<EOF
## FTP (vsftpd on 127.0.0.1)

vsftpd $version, standalone, anonymous login, passive mode (EPSV), sendfile for downloads; uploads
to a folder of the anonymous root, whose stored size is checked after every run. Load average (1, 5,
15 min) when the FTP measurements started: $FTP_LOAD. Best of $HTTP_REPS runs; body $(fmt "$FTP_BYTES")
bytes of random data, the same file downloaded and uploaded. Courier and FoundationNetworking: the
\`http-download\` and \`http-upload\` measurements with an ftp:// URL; curl: its whole process.

| Measurement | Courier | FoundationNetworking | curl | Courier ÷ Foundation | Courier ÷ curl | Target | Met |
| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |
| ${FTP_MIB} MiB ftp download task to a file, MB/s (curl: \`-o FILE\`) | $(cell "$dl_c" 1) | $(fmt "$dl_f" 1) | $(fmt "$dl_k" 1) | $(ratio "$dl_c" "$dl_f" 2) | $(ratio "$dl_c" "$dl_k" 2) | ≥ 0.9× curl | $(verdict "$dl_c" "$dl_k" ">=" 0.9) |
| ${FTP_MIB} MiB ftp download task, peak RSS (MiB) | $(cell "$(ftp_rss "${V[courier:ftp_download:http_download_peak_rss]:-}")" 1) | $(fmt "$(ftp_rss "${V[foundation:ftp_download:http_download_peak_rss]:-}")" 1) | $(fmt "$(mib "${V[curl:ftp_download:peak_rss]:-}")" 1) | — | — | < 64 MiB | $(verdict "${V[courier:ftp_download:http_download_peak_rss]:-}" "$limit" "<" 1) |
| ${FTP_MIB} MiB ftp upload task from a file, MB/s (curl: \`-T FILE\`) | $(cell "$up_c" 1) | $(fmt "$up_f" 1) | $(fmt "$up_k" 1) | $(ratio "$up_c" "$up_f" 2) | $(ratio "$up_c" "$up_k" 2) | ≥ 0.9× curl | $(verdict "$up_c" "$up_k" ">=" 0.9) |
| ${FTP_MIB} MiB ftp upload task, peak RSS (MiB) | $(cell "$(ftp_rss "${V[courier:ftp_upload:http_upload_peak_rss]:-}")" 1) | $(fmt "$(ftp_rss "${V[foundation:ftp_upload:http_upload_peak_rss]:-}")" 1) | $(fmt "$(mib "${V[curl:ftp_upload:peak_rss]:-}")" 1) | — | — | < 64 MiB | $(verdict "${V[courier:ftp_upload:http_upload_peak_rss]:-}" "$limit" "<" 1) |
EOF
    local key name
    for key in courier:ftp_download foundation:ftp_download courier:ftp_upload foundation:ftp_upload; do
        [ -n "${V["$key:why"]:-}" ] || continue
        name="Courier"
        [ "${key%%:*}" = "foundation" ] && name="FoundationNetworking"
        printf '\n%s, ftp %s: %s.\n' "$name" "${key#*:ftp_}" "${V["$key:why"]}"
    done
}
