# The `courier` tool part of Benchmarks/run.sh (sourced by it): the command line against curl's on
# the same nginx, a 512 MiB download to a file (`-o FILE`) and the same file uploaded (`-T FILE`,
# PUT), each repetition running courier and curl right after each other (who goes first alternates).
# Reports MB/s, the median of the per-repetition ratios courier ÷ curl, and each command's peak RSS
# (GNU time's %M).
#
# Knobs: BENCH_TOOL [1] (0: skip this part). Sizes are the HTTP part's (BENCH_HTTP_MIB); repetitions
# BENCH_HTTP_REPS.
TOOL_PART="${BENCH_TOOL:-1}"
TOOL_STATUS="not measured (BENCH_TOOL=0)"
declare -A TOOL

# tool_build: builds the courier tool of this package in release mode; sets TOOL_BIN.
tool_build() {
    local root="$HERE/.."
    log "building courier (release)"
    if ! swift build -c release --package-path "$root" --product courier >&2; then
        TOOL_STATUS="not measured (courier did not build)"
        return 1
    fi
    TOOL_BIN="$(swift build -c release --package-path "$root" --show-bin-path)/courier"
}

# tool_time KEY IMPL COMMAND...: runs COMMAND once under GNU time; appends its seconds and peak RSS
# (bytes) to TOOL[IMPL:KEY:seconds] and TOOL[IMPL:KEY:rss] (space-separated, one per repetition).
# The page cache is written out first (not timed), so no command pays for the writeback of the
# 512 MiB the one before it wrote (a download's file, nginx's copy of an upload).
tool_time() {
    local key="$1" impl="$2"; shift 2
    local t0 t1 s rc=0 rss
    sync
    t0="$(date +%s%N)"
    timeout "$TIMEOUT" /usr/bin/time -f '%M' -o "$WORK/tool-rss" "$@" >/dev/null 2>"$WORK/tool-err" || rc=$?
    t1="$(date +%s%N)"
    s="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')"
    rss="$(tail -1 "$WORK/tool-rss" 2>/dev/null || echo 0)"
    printf '### tool %s %s (exit %d): %s s, peak RSS %s kB\n%s\n' "$impl" "$key" "$rc" "$s" "$rss" "$(head -c 2000 "$WORK/tool-err")" >>"$RAW"
    if [ "$rc" -ne 0 ]; then
        TOOL["$impl:$key:failed"]="exit $rc"
        log "$impl $key failed (exit $rc, see $RAW)"
        return 0
    fi
    TOOL["$impl:$key:seconds"]+="$s "
    num "$rss" && TOOL["$impl:$key:rss"]+="$((rss * 1024)) "
}

# tool_stored TAG BYTES KEY IMPL: checks nginx stored BYTES for the upload TAG, then removes it.
tool_stored() {
    local stored
    stored="$(stat -c %s "$NGX/dav/upload/$1.bin" 2>/dev/null || echo 0)"
    printf 'STORED %s %s bytes\n' "$1" "$stored" >>"$RAW"
    [ "$stored" = "$2" ] || { TOOL["$4:$3:failed"]="stored $stored of $2 bytes"; log "nginx stored $stored bytes for $1"; }
    rm -f "$NGX/dav/upload/$1.bin"
}

# tool_part: the measurements (inside the HTTP part, while nginx runs).
tool_part() {
    [ "$TOOL_PART" = "1" ] || return 0
    [ -x /usr/bin/time ] || { TOOL_STATUS="not measured (GNU time is missing: apt-get install time)"; return 0; }
    tool_build || return 0
    TOOL_STATUS="measured"
    TOOL_LOAD="$(cut -d' ' -f1-3 /proc/loadavg)"
    local out="$WORK/tool-download.bin" body="$NGX/docroot/big.bin" rep url impl order
    for ((rep = 1; rep <= HTTP_REPS; rep++)); do
        url="$HTTP_BASE/big.bin?r=tool-$rep"
        # Who goes first alternates: the first transfer after the previous ones' 512 MiB files were
        # deleted runs slower whichever tool it is (nginx's writes of the first upload took 1.3-2.7 s
        # against 0.4-0.6 s for the second, in either order), and a fixed order would charge whatever
        # is left of that to one side.
        order="courier curl"
        ((rep % 2 == 0)) && order="curl courier"
        log "-o with $order ($rep/$HTTP_REPS)"
        for impl in $order; do
            if [ "$impl" = "courier" ]; then
                tool_time download courier "$TOOL_BIN" -sS -o "$out" "$url"
                [ "$(stat -c %s "$out" 2>/dev/null || echo 0)" = "$HTTP_BYTES" ] || TOOL["courier:download:failed"]="short file"
            else
                tool_time download curl curl -sS -o "$out" "$url"
            fi
            rm -f "$out"
        done
        log "-T with $order ($rep/$HTTP_REPS)"
        # An upload that is not timed first: the first upload after the downloads' files were
        # deleted is the slow one (above), so neither measured one is first.
        curl -sS -H "Expect:" -T "$body" -o /dev/null "$HTTP_BASE/upload/tool-warm-$rep.bin" >/dev/null 2>&1 || true
        rm -f "$NGX/dav/upload/tool-warm-$rep.bin"
        for impl in $order; do
            if [ "$impl" = "courier" ]; then
                tool_time upload courier "$TOOL_BIN" -sS -T "$body" -o /dev/null "$HTTP_BASE/upload/tool-courier-$rep.bin"
            else
                # -H Expect: as Courier sends no Expect: 100-continue either.
                tool_time upload curl curl -sS -H "Expect:" -T "$body" -o /dev/null "$HTTP_BASE/upload/tool-curl-$rep.bin"
            fi
            tool_stored "tool-$impl-$rep" "$HTTP_BYTES" upload "$impl"
        done
    done
}

# tool_summary KEY: "courier-MB/s curl-MB/s median-ratio courier-peak-RSS curl-peak-RSS" over the
# repetitions (MB/s: the median run; ratio: the median of per-repetition curl-seconds ÷
# courier-seconds; RSS: the largest), or nothing when a run failed.
tool_summary() {
    local key="$1"
    [ -z "${TOOL[courier:$key:failed]:-}${TOOL[curl:$key:failed]:-}" ] || return 0
    awk -v bytes="$HTTP_BYTES" -v c="${TOOL[courier:$key:seconds]:-}" -v k="${TOOL[curl:$key:seconds]:-}" \
        -v cr="${TOOL[courier:$key:rss]:-}" -v kr="${TOOL[curl:$key:rss]:-}" '
        function median(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        function largest(s,   p, n, i, m) { n = split(s, p, " "); m = 0; for (i = 1; i <= n; i++) if (p[i] + 0 > m) m = p[i] + 0; return m }
        BEGIN {
            n = split(c, cs, " "); m = split(k, ks, " ")
            if (n == 0 || n != m) exit
            for (i = 1; i <= n; i++) { r[i] = ks[i] / cs[i]; cm[i] = cs[i]; km[i] = ks[i] }
            printf "%.1f %.1f %.2f %d %d\n", bytes / median(cm, n) / 1e6, bytes / median(km, n) / 1e6, median(r, n), largest(cr), largest(kr)
        }'
}

# tool_table: the tool section of the Markdown table.
tool_table() {
    if [ "$TOOL_STATUS" != "measured" ]; then
        printf '## The courier tool\n\nThe courier tool: %s.\n' "$TOOL_STATUS"
        return 0
    fi
    local limit=$((64 * 1048576)) key row c k r cr kr label
    cat <<EOF
## The courier tool against the curl command line (nginx on 127.0.0.1)

The release \`courier\` and curl, each a whole process, on the same ${HTTP_MIB} MiB file of random bytes over
plain HTTP: \`-o FILE\` downloads it, \`-T FILE\` uploads it (PUT, stored size checked). In each of the
$HTTP_REPS repetitions courier and curl run right after each other, who goes first alternating, each after
\`sync\`; MB/s is the median run, the ratio the median of
the per-repetition ratios. Load average (1, 5, 15 min) when this part started: $TOOL_LOAD.

| Measurement | courier | curl | courier ÷ curl | Target | Met | courier peak RSS (MiB) | curl peak RSS (MiB) | RSS < 64 MiB |
| --- | ---: | ---: | ---: | --- | --- | ---: | ---: | --- |
EOF
    for key in download upload; do
        label="\`-o FILE\` download, MB/s"
        [ "$key" = "upload" ] && label="\`-T FILE\` upload, MB/s"
        row="$(tool_summary "$key")"
        if [ -z "$row" ]; then
            printf '| %s | failed: %s | %s | — | ≥ 0.9× | — | — | — | — |\n' "$label" \
                "${TOOL[courier:$key:failed]:-ok}" "${TOOL[curl:$key:failed]:-ok}"
            continue
        fi
        read -r c k r cr kr <<<"$row"
        printf '| %s | %s | %s | %s× | ≥ 0.9× | %s | %s | %s | %s |\n' "$label" "$c" "$k" "$r" \
            "$(awk -v r="$r" 'BEGIN { print (r >= 0.9) ? "yes" : "**no**" }')" "$(mib "$cr")" "$(mib "$kr")" \
            "$(awk -v a="$cr" -v l="$limit" 'BEGIN { print (a < l) ? "yes" : "**no**" }')"
    done
}
