#!/usr/bin/env bash
# Interleaved sftp comparison: each repetition downloads the same 512 MiB file over sftp:// with
# Courier-before, Courier-after and OpenSSH's `sftp` (its default cipher and MAC), one right after the
# other, from one OpenSSH sshd started here on 127.0.0.1 (Benchmarks/sftp-part.sh's `start_sshd`:
# public-key login, the host key checked against its own known_hosts), and prints each run's MB/s.
#
# Usage: BEFORE=<old checkout>/Benchmarks/.build/release AFTER=<new checkout>/Benchmarks/.build/release \
#        REPS=5 Benchmarks/sftp-interleave.sh
# Knobs: WORK [/tmp/sftp-interleave] (keys, sshd's files and the body), BENCH_SFTP_MIB [512].
set -u
: "${BEFORE:?the old bench binaries' directory}" "${AFTER:?the new bench binaries' directory}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="${WORK:-/tmp/sftp-interleave}"
REPS=${REPS:-5}
mkdir -p "$WORK"
# What sftp-part.sh reads from run.sh.
NEEDED=()
LOCAL_PART=0
FILE_MIB=0
log() { printf '== %s\n' "$*" >&2; }
# shellcheck source=sftp-part.sh
source "$HERE/sftp-part.sh"
rm -rf "$WORK/sftp"
start_sshd || exit 1
trap sftp_stop EXIT
url="sftp://127.0.0.1:$SFTP_PORT$SFTPD/root/big.bin"
out="$WORK/out.bin"
secs() { local s=$(date +%s.%N); "$@" >/dev/null 2>&1; local e=$(date +%s.%N); echo "$e - $s" | bc -l; }
courier() { # courier BIN: MB/s of one download task
    env -u SSH_AUTH_SOCK HOME="$SFTPD/home" "$1/bench-courier" http-download --url "$url" --size "$SFTP_BYTES" --file "$out" \
        | grep '^RESULT http_download_mbps ' | awk '{print $3}'
    rm -f "$out"
    sync
}
for rep in $(seq 1 "$REPS"); do
    echo "rep $rep load $(cut -d' ' -f1-3 /proc/loadavg)"
    # Odd repetitions run the old build first, even ones the new: neither always inherits the
    # other's disk writeback. Every run starts after `sync`.
    if [ $((rep % 2)) -eq 1 ]; then
        b=$(courier "$BEFORE"); a=$(courier "$AFTER")
    else
        a=$(courier "$AFTER"); b=$(courier "$BEFORE")
    fi
    s=$(secs sftp -q -F /dev/null -P "$SFTP_PORT" -i "$SFTP_KEY" -o IdentitiesOnly=yes -o IdentityAgent=none \
        -o UserKnownHostsFile="$SFTP_KNOWN" -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -b <(printf 'get %s %s\n' "$SFTPD/root/big.bin" "$out") "$SFTP_USER@127.0.0.1")
    rm -f "$out"
    sync
    echo "rep $rep sftp before=$b after=$a openssh_mbps=$(echo "$SFTP_BYTES / $s / 1000000" | bc -l)"
done
