# The HTTP part of Courier's benchmark, sourced by Benchmarks/run.sh (not run on its own): small
# GETs over http:// and https:// (sequential and GET_WINDOW in flight), a BENCH_HTTP_MIB download
# and data task and a BENCH_UPLOAD_MIB upload over http://, through Courier, FoundationNetworking
# and the curl command line, in one run, against one nginx that this part starts on 127.0.0.1 and
# stops. The tool and background parts (tool-part.sh, background-part.sh) run on the same nginx,
# before it stops.
#
# Knobs (read by run.sh's environment; defaults in brackets):
#   BENCH_HTTP [1]           0: skip the HTTP measurements (they need nginx and openssl, installed
#                            when missing)
#   BENCH_GET_COUNT [10000]  1 KiB GETs per measurement (after a warm-up that is not counted)
#   BENCH_GET_WINDOW [32]    GETs in flight in the concurrent measurement
#   BENCH_HTTP_MIB [512]     size of the HTTP download and data-task body, MiB
#   BENCH_UPLOAD_MIB [64]    size of the HTTP upload, MiB
# The small GETs run BENCH_REPS times, the large transfers BENCH_HTTP_REPS times.
#
# It uses run.sh's variables and functions: WORK, RAW, BIN, IMPLS, TIMEOUT, REPS, HTTP_REPS,
# LOCAL_PART, FILE, FILE_MIB, V, NEEDED, CURL_CAN_TIME, log, record, keep, num, tool_part and
# background_part, and for the table fmt, ratio, verdict, mib and cell.

HTTP_PART="${BENCH_HTTP:-1}"
GET_COUNT="${BENCH_GET_COUNT:-10000}"
GET_WINDOW="${BENCH_GET_WINDOW:-32}"
HTTP_MIB="${BENCH_HTTP_MIB:-512}"
UPLOAD_MIB="${BENCH_UPLOAD_MIB:-64}"
if [ "$HTTP_PART" = "1" ]; then
    [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || NEEDED+=(nginx)
    command -v openssl >/dev/null 2>&1 || NEEDED+=(openssl)
fi

# One nginx (a single worker process) serves plain HTTP/1.1 and HTTPS (HTTP/2 by ALPN, a self-signed
# certificate) on two ephemeral ports of 127.0.0.1, from a configuration in the temporary folder. It
# logs each request's connection serial number and the measurement's tag (the query `?r=TAG`), so
# the connections a measurement used are counted from the access log. Uploads go to a WebDAV PUT
# location: nginx answers only after it has written the whole body to a file, whose size is checked.
HTTP_STATUS="not measured (BENCH_HTTP=0)"
FOUNDATION_HTTPS="measured"
UPLOAD_BYTES=""
HTTP_BYTES=""
NGINX_PID=""
LOAD_AT_HTTP=""
declare -A CONN_MIN CONN_MAX CONNW_MIN CONNW_MAX PROTO

# http_stop: stops the nginx this part started (run.sh's cleanup calls it too).
http_stop() {
    if [ -n "$NGINX_PID" ]; then
        kill "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
        NGINX_PID=""
    fi
}

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
        http_stop
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

# http_part: starts nginx, measures the small GETs, the download, the data task and the upload of
# Courier, FoundationNetworking and curl against it, runs the tool and background parts on it, and
# stops it.
http_part() {
    [ "$HTTP_PART" = "1" ] || return 0
    if ! start_nginx; then
        HTTP_STATUS="not measured (nginx did not start)"
        return 0
    fi
    HTTP_STATUS="measured"
    local scheme base mode rep impl dl stored cacert=()
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
    dl="$WORK/download.bin"
    for impl in "${IMPLS[@]}"; do
        hbench download "$HTTP_REPS" "$impl" http-download --url "$HTTP_BASE/big.bin?r=@TAG@" --size "$HTTP_BYTES" --file "$dl"
        hbench data "$HTTP_REPS" "$impl" http-data --url "$HTTP_BASE/big.bin?r=@TAG@" --size "$HTTP_BYTES"
        hbench upload "$HTTP_REPS" "$impl" http-upload --url "$HTTP_BASE/upload/@TAG@.bin" --file "$UPLOAD_FILE"
    done
    curl_run download "$HTTP_REPS" "rm -f '$dl'" -o "$dl" "$HTTP_BASE/big.bin?r=@TAG@"
    rm -f "$dl"
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
    http_stop
}

# http_table: the HTTP section of the Markdown table.
http_table() {
    if [ "$HTTP_STATUS" != "measured" ]; then
        printf '## HTTP\n\nHTTP: %s.\n' "$HTTP_STATUS"
        return 0
    fi
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
    local limit=$((64 * 1048576))
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
    local HTTPS_PROTO HTTPS_CONN_VERDICT DL_C DL_F DL_K DLN_K DA_C DA_F UP_C UP_F UP_K
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
| ${HTTP_MIB} MiB download task, peak RSS (MiB) | $(cell "$(rss_cell courier download http_download_peak_rss)" 1) | $(fmt "$(rss_cell foundation download http_download_peak_rss)" 1) | $(fmt "$(mib "${V[curl:download:peak_rss]:-}")" 1) | — | — | < 64 MiB | $(verdict "$(H courier download http_download_peak_rss)" "$limit" "<" 1) |
| ${HTTP_MIB} MiB data task, MB/s (curl: \`-o /dev/null\`, for reference) | $(cell "$DA_C" 1) | $(fmt "$DA_F" 1) | $(fmt "$DLN_K" 1) | $(ratio "$DA_C" "$DA_F" 2) | $(ratio "$DA_C" "$DLN_K" 2) | — | — |
| ${HTTP_MIB} MiB data task, peak RSS ÷ body | $(cell "$(H courier data http_data_rss_ratio)" 3) | $(fmt "$(H foundation data http_data_rss_ratio)" 3) | — | — | — | ≤ 1.1× | $(verdict "$(H courier data http_data_peak_rss)" "$HTTP_BYTES" "<=" 1.1) |
| ${UPLOAD_MIB} MiB upload task from a file (PUT), MB/s (curl: \`-T FILE\`) | $(cell "$UP_C" 1) | $(fmt "$UP_F" 1) | $(fmt "$UP_K" 1) | $(ratio "$UP_C" "$UP_F" 2) | $(ratio "$UP_C" "$UP_K" 2) | ≥ 1.0× curl | $(verdict "$UP_C" "$UP_K" ">=" 1.0) |
| ${UPLOAD_MIB} MiB upload task, peak RSS (MiB) | $(cell "$(rss_cell courier upload http_upload_peak_rss)" 1) | $(fmt "$(rss_cell foundation upload http_upload_peak_rss)" 1) | $(fmt "$(mib "${V[curl:upload:peak_rss]:-}")" 1) | — | — | < 64 MiB | $(verdict "$(H courier upload http_upload_peak_rss)" "$limit" "<" 1) |

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
}
