# The background-session part of Benchmarks/run.sh (sourced by it): a download through a
# background session (the transfer agent) against the same download in a default session, both
# through the release `courier` tool on the HTTP part's nginx. Each repetition runs the default
# session (`courier -o FILE URL`) and then the background one (`courier --background ID URL`, which
# hands the download to a running `courier-agent`, then `courier agent collect ID DIR`, which
# waits for it and moves the file out), timed from start to the file in place. Reports MB/s, the
# median of the per-repetition ratios default-seconds ÷ background-seconds (target ≥ 0.9), and the
# agent's peak RSS (VmHWM) after the repetitions, and again after 200 small downloads were queued
# at once (target < 64 MiB).
#
# Knobs: BENCH_BACKGROUND [1] (0: skip this part), BENCH_BACKGROUND_MIB [1024] (the download's
# size), BENCH_BACKGROUND_BIN [unset] (a folder with courier and courier-agent already built: no
# release build); repetitions BENCH_HTTP_REPS.
BACKGROUND_PART="${BENCH_BACKGROUND:-1}"
BACKGROUND_MIB="${BENCH_BACKGROUND_MIB:-1024}"
BACKGROUND_STATUS="not measured (BENCH_BACKGROUND=0)"
declare -A BACKGROUND

# background_time KEY COMMAND...: runs COMMAND (a shell snippet) once; appends its seconds to
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

# background_part: the measurements (inside the HTTP part, after tool_part built courier).
background_part() {
    [ "$BACKGROUND_PART" = "1" ] || return 0
    if [ -n "${BENCH_BACKGROUND_BIN:-}" ]; then
        TOOL_BIN="$BENCH_BACKGROUND_BIN/courier"
    else
        [ -n "${TOOL_BIN:-}" ] || tool_build || { BACKGROUND_STATUS="not measured (courier did not build)"; return 0; }
        log "building courier-agent (release)"
        swift build -c release --package-path "$HERE/.." --product courier-agent >&2 \
            || { BACKGROUND_STATUS="not measured (courier-agent did not build)"; return 0; }
    fi
    local bin home out collected file url rep agent
    bin="$(dirname "$TOOL_BIN")"
    home="$WORK/background-home"; out="$WORK/background-default.bin"; collected="$WORK/background-collected"
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
    for ((rep = 1; rep <= HTTP_REPS; rep++)); do
        url="$HTTP_BASE/background.bin?r=bg-$rep"
        log "default session, then background session, $BACKGROUND_MIB MiB ($rep/$HTTP_REPS)"
        background_time default "'$TOOL_BIN' -sS -o '$out' '$url-default'"
        [ "$(stat -c %s "$out" 2>/dev/null || echo 0)" = "$BACKGROUND_BYTES" ] || BACKGROUND["default:failed"]="short file"
        rm -f "$out"
        background_time background "'$TOOL_BIN' --background bench-$rep '$url' >/dev/null && '$TOOL_BIN' agent collect bench-$rep '$collected' >/dev/null"
        [ "$(stat -c %s "$collected/1-background.bin" 2>/dev/null || echo 0)" = "$BACKGROUND_BYTES" ] || BACKGROUND["background:failed"]="short file"
        rm -f "$collected"/*
        sync
    done
    BACKGROUND["rss:large"]="$(background_rss "$agent")"
    # 200 small downloads queued at once, then collected.
    local urls=()
    for ((rep = 1; rep <= 200; rep++)); do urls+=("$HTTP_BASE/background.bin?r=small-$rep&bytes=1"); done
    printf 'small file\n' >"$NGX/docroot/small.txt"
    urls=()
    for ((rep = 1; rep <= 200; rep++)); do urls+=("$HTTP_BASE/small.txt?r=$rep"); done
    background_time queue200 "'$TOOL_BIN' --background bench-200 ${urls[*]} >/dev/null && '$TOOL_BIN' agent collect bench-200 '$collected' >/dev/null"
    BACKGROUND["rss:queued"]="$(background_rss "$agent")"
    kill "$agent" 2>/dev/null || true
    wait "$agent" 2>/dev/null || true
    unset COURIER_DATA_HOME COURIER_AGENT_PATH COURIER_AGENT_IDLE_EXIT
    rm -rf "$home" "$collected" "$file" "$NGX/docroot/small.txt"
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

A ${BACKGROUND_MIB} MiB file of random bytes over plain HTTP through the release \`courier\`: in a default
session (\`courier -o FILE\`) and through a background session (\`courier --background\` hands it to a
running \`courier-agent\`, \`courier agent collect\` waits for it and moves the file out), timed to the file in
place. In each of the $HTTP_REPS repetitions the default session runs first; MB/s is the median run, the
ratio the median of the per-repetition ratios. Load average (1, 5, 15 min) when this part started: $BACKGROUND_LOAD.

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
