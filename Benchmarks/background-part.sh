# The background-session part of Benchmarks/run.sh (sourced by it): like with like, the same
# Courier download task (`bench-courier http-download`: a delegate that checks the temporary file's
# size and moves it out, timed from resume() to didCompleteWithError) in a default (ephemeral)
# session and in a background session (`--background ID`: Courier's transfer agent downloads it and
# the session hands the file to the delegate), on the HTTP part's nginx. The repetitions are
# interleaved and alternate which session goes first (odd: default first, even: background first),
# so neither always gets the warmer cache. Reports MB/s (the median run), the median of the
# per-repetition ratios default-seconds ÷ background-seconds (target ≥ 0.9), and the agent's peak
# RSS (VmHWM) after the repetitions, and again after 200 small downloads were queued at once
# through `courier --background` (target < 64 MiB).
#
# Knobs: BENCH_BACKGROUND [1] (0: skip this part), BENCH_BACKGROUND_MIB [1024] (the download's
# size), BENCH_BACKGROUND_BIN [unset] (a folder with courier and courier-agent already built in
# release: no build); repetitions BENCH_HTTP_REPS.
BACKGROUND_PART="${BENCH_BACKGROUND:-1}"
BACKGROUND_MIB="${BENCH_BACKGROUND_MIB:-1024}"
BACKGROUND_STATUS="not measured (BENCH_BACKGROUND=0)"
declare -A BACKGROUND

# background_download KEY ARGS...: one `bench-courier http-download` run of the background file
# (ARGS are extra options); appends the seconds it reports to BACKGROUND[KEY:seconds].
background_download() {
    local key="$1" rc=0 out seconds; shift
    out="$(timeout "$((TIMEOUT + 30))" "$BIN/bench-courier" http-download --timeout "$TIMEOUT" \
        --url "$HTTP_BASE/background.bin?r=$key-$RANDOM" --size "$BACKGROUND_BYTES" \
        --file "$WORK/background-$key.bin" "$@" 2>&1)" || rc=$?
    printf '### background %s %s (exit %d)\n%s\n' "$key" "$*" "$rc" "$out" >>"$RAW"
    seconds="$(awk '$1 == "RESULT" && $2 == "http_download_seconds" { print $3 }' <<<"$out")"
    if [ "$rc" -ne 0 ] || ! num "$seconds"; then
        BACKGROUND["$key:failed"]="exit $rc, $(grep -m1 '^NOTE' <<<"$out" || echo 'no result')"
        log "background: $key download failed (see $RAW)"
        return 0
    fi
    BACKGROUND["$key:seconds"]+="$seconds "
}

# background_time KEY COMMAND: runs COMMAND (a shell snippet) once; appends its seconds to
# BACKGROUND[KEY:seconds].
background_time() {
    local key="$1" t0 t1 rc=0; shift
    t0="$(date +%s%N)"
    timeout "$TIMEOUT" bash -c "$1" >>"$RAW" 2>&1 || rc=$?
    t1="$(date +%s%N)"
    printf '### background %s (exit %d): %s ns\n' "$key" "$rc" "$((t1 - t0))" >>"$RAW"
    if [ "$rc" -ne 0 ]; then BACKGROUND["$key:failed"]="exit $rc"; log "background $key failed (exit $rc)"; return 0; fi
    BACKGROUND["$key:seconds"]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }') "
}

# background_rss PID: the agent's peak RSS in bytes.
background_rss() { awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# background_part: the measurements (inside the HTTP part, while nginx runs; needs bench-courier).
background_part() {
    [ "$BACKGROUND_PART" = "1" ] || return 0
    if [ "$COURIER_STATUS" != "measured" ]; then BACKGROUND_STATUS="not measured (no bench-courier)"; return 0; fi
    local bin home collected file rep agent
    if [ -n "${BENCH_BACKGROUND_BIN:-}" ]; then
        bin="$BENCH_BACKGROUND_BIN"
    else
        # Products of the Courier dependency, built with the bench-courier build's release Courier.
        log "building courier-agent and courier (release)"
        swift build -c release --package-path "$PACKAGE" --product courier-agent >&2 \
            && swift build -c release --package-path "$PACKAGE" --product courier >&2 \
            || { BACKGROUND_STATUS="not measured (courier-agent or courier did not build)"; return 0; }
        bin="$BIN"
    fi
    home="$WORK/background-home"; collected="$WORK/background-collected"
    file="$NGX/docroot/background.bin"
    rm -rf "$home" "$collected"; mkdir -p "$home" "$collected"; chmod 700 "$home"
    head -c "$((BACKGROUND_MIB * 1048576))" /dev/urandom >"$file"
    BACKGROUND_BYTES="$(stat -c %s "$file")"
    export COURIER_DATA_HOME="$home" COURIER_AGENT_PATH="$bin/courier-agent" COURIER_AGENT_IDLE_EXIT=600
    "$bin/courier-agent" >>"$RAW" 2>&1 &
    agent=$!
    for _ in $(seq 100); do [ -S "$home/Background/run/agent.sock" ] && break; sleep 0.1; done
    BACKGROUND_STATUS="measured"
    BACKGROUND_LOAD="$(cut -d' ' -f1-3 /proc/loadavg)"
    sync
    for ((rep = 1; rep <= HTTP_REPS; rep++)); do
        log "background part, $BACKGROUND_MIB MiB download task: default and background session ($rep/$HTTP_REPS)"
        if ((rep % 2)); then
            background_download default; sync
            background_download background --background "bench-$rep"; sync
        else
            background_download background --background "bench-$rep"; sync
            background_download default; sync
        fi
    done
    BACKGROUND_LOAD_END="$(cut -d' ' -f1-3 /proc/loadavg)"
    BACKGROUND["rss:large"]="$(background_rss "$agent")"
    # 200 small downloads queued at once by the command line, then collected.
    local urls=()
    printf 'small file\n' >"$NGX/docroot/small.txt"
    for ((rep = 1; rep <= 200; rep++)); do urls+=("$HTTP_BASE/small.txt?r=$rep"); done
    background_time queue200 "'$bin/courier' --background bench-200 ${urls[*]} >/dev/null && '$bin/courier' agent collect bench-200 '$collected' >/dev/null"
    BACKGROUND["rss:queued"]="$(background_rss "$agent")"
    kill "$agent" 2>/dev/null || true
    wait "$agent" 2>/dev/null || true
    unset COURIER_DATA_HOME COURIER_AGENT_PATH COURIER_AGENT_IDLE_EXIT
    rm -rf "$home" "$collected" "$file" "$NGX/docroot/small.txt" "$WORK"/background-*.bin
}

# background_table: the background section of the Markdown table.
background_table() {
    if [ "$BACKGROUND_STATUS" != "measured" ]; then
        printf '## Background sessions\n\nBackground sessions: %s.\n' "$BACKGROUND_STATUS"
        return 0
    fi
    local limit=$((64 * 1048576)) row
    row="$(awk -v bytes="$BACKGROUND_BYTES" -v d="${BACKGROUND[default:seconds]:-}" -v b="${BACKGROUND[background:seconds]:-}" '
        function median(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        BEGIN {
            n = split(d, ds, " "); m = split(b, bs, " ")
            if (n == 0 || n != m) exit
            for (i = 1; i <= n; i++) { r[i] = ds[i] / bs[i]; dm[i] = ds[i]; bm[i] = bs[i] }
            printf "%.1f %.1f %.2f\n", bytes / median(dm, n) / 1e6, bytes / median(bm, n) / 1e6, median(r, n)
        }')"
    cat <<EOF
## Background sessions (nginx on 127.0.0.1)

A ${BACKGROUND_MIB} MiB file of random bytes over plain HTTP, fetched by the same Courier download task
(release \`bench-courier http-download\`, timed from \`resume()\` to \`didCompleteWithError\`, the delegate
moving the file out) in a default session and in a background session (a running release
\`courier-agent\` downloads it). $HTTP_REPS interleaved repetitions, alternating which session goes first; MB/s
is the median run, the ratio the median of the per-repetition ratios. Seconds per repetition (default):
${BACKGROUND[default:seconds]:-}; (background): ${BACKGROUND[background:seconds]:-}. Load average (1, 5, 15
min) when this part started: $BACKGROUND_LOAD; when the downloads ended: $BACKGROUND_LOAD_END.

| Measurement | default session | background session | background ÷ default | Target | Met |
| --- | ---: | ---: | ---: | --- | --- |
EOF
    if [ -z "$row" ] || [ -n "${BACKGROUND[default:failed]:-}${BACKGROUND[background:failed]:-}" ]; then
        printf '| download, MB/s | failed: %s | %s | — | ≥ 0.9× | — |\n' "${BACKGROUND[default:failed]:-ok}" "${BACKGROUND[background:failed]:-ok}"
    else
        read -r d b r <<<"$row"
        printf '| download, MB/s | %s | %s | %s× | ≥ 0.9× | %s |\n' "$d" "$b" "$r" "$(awk -v r="$r" 'BEGIN { print (r >= 0.9) ? "yes" : "**no**" }')"
    fi
    printf '\n| Agent peak RSS (VmHWM) | MiB | Target | Met |\n| --- | ---: | --- | --- |\n'
    printf '| after the %s MiB downloads | %s | < 64 MiB | %s |\n' "$BACKGROUND_MIB" "$(mib "${BACKGROUND[rss:large]:-0}")" \
        "$(awk -v a="${BACKGROUND[rss:large]:-0}" -v l="$limit" 'BEGIN { print (a > 0 && a < l) ? "yes" : "**no**" }')"
    printf '| after 200 downloads queued at once (%s s to queue and collect) | %s | < 64 MiB | %s |\n' \
        "$(echo ${BACKGROUND[queue200:seconds]:-failed})" "$(mib "${BACKGROUND[rss:queued]:-0}")" \
        "$(awk -v a="${BACKGROUND[rss:queued]:-0}" -v l="$limit" 'BEGIN { print (a > 0 && a < l) ? "yes" : "**no**" }')"
}
