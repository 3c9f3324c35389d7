#!/usr/bin/env bash
# Interleaved before/after comparison: each repetition runs Courier-before, Courier-after and the
# reference (curl or FoundationNetworking) one right after the other, and prints per-rep ratios.
#
# Usage: BEFORE=<old checkout>/Benchmarks/.build/release AFTER=<new checkout>/Benchmarks/.build/release \
#        REPS=5 Benchmarks/interleave-before-after.sh
# It expects an nginx on 127.0.0.1:18080 (http) and 127.0.0.1:18443 (https, HTTP/2, certificate in
# $CERT) serving 1k.bin and a 512 MiB big.bin, and curl config files $WORK/http.cfg and $WORK/https.cfg
# listing 3,000 URLs of 1k.bin each with `output = "/dev/null"` (Documentation/Performance.md,
# "Engine redesign: before and after"). Only 127.0.0.1. HTTP_PORT and HTTPS_PORT move nginx's ports
# (another nginx on the machine may hold the defaults); the config files must name the same ones.
# nginx must answer with `Cache-Control: no-store` (as Benchmarks/run.sh's does): otherwise Courier's
# URLCache serves most repeated GETs of one URL from memory and the GET rates mean nothing.
# PARTS picks measurements (default "data get download"; "sftp" is measured by sftp-interleave.sh).
set -u
: "${BEFORE:?the old bench binaries' directory}" "${AFTER:?the new bench binaries' directory}"
WORK="${WORK:-/tmp/pb}"
CERT="${CERT:-$WORK/cert.pem}"
REPS=${REPS:-5}
HTTP_PORT=${HTTP_PORT:-18080}
HTTPS_PORT=${HTTPS_PORT:-18443}
PARTS=${PARTS:-data get download}
has() { case " $PARTS " in *" $1 "*) return 0;; *) return 1;; esac; }
export SSL_CERT_FILE="$CERT"
val() { grep "^RESULT $1 " | awk '{print $3}'; }
secs() { local s=$(date +%s.%N); "$@" >/dev/null 2>&1; local e=$(date +%s.%N); echo "$e - $s" | bc -l; }
for rep in $(seq 1 $REPS); do
  echo "rep $rep load $(cut -d' ' -f1-3 /proc/loadavg)"
  if has data; then
  # data: tasks per second
  b=$($BEFORE/bench-courier data-tasks --count 20000 --window 256 | val data_tasks_per_sec)
  a=$($AFTER/bench-courier data-tasks --count 20000 --window 256 | val data_tasks_per_sec)
  f=$($AFTER/bench-foundation data-tasks --count 20000 --window 256 | val data_tasks_per_sec)
  echo "rep $rep data_tasks before=$b after=$a foundation=$f"
  fi
  if has get; then
  for scheme in http https; do
    port=$HTTP_PORT; [ $scheme = https ] && port=$HTTPS_PORT
    b=$($BEFORE/bench-courier http-get --url "$scheme://127.0.0.1:$port/1k.bin?r=b$rep" --count 3000 --window 1 --size 1024 | val http_get_per_sec)
    a=$($AFTER/bench-courier http-get --url "$scheme://127.0.0.1:$port/1k.bin?r=a$rep" --count 3000 --window 1 --size 1024 | val http_get_per_sec)
    c=$(secs curl -s --cacert $CERT -K $WORK/$scheme.cfg)
    echo "rep $rep get_${scheme}_seq before=$b after=$a curl_per_sec=$(echo "3000 / $c" | bc -l)"
  done
  fi
  if has download; then
  # Odd repetitions run the old build first, even ones the new, and every run starts after `sync`:
  # no client always inherits another's disk writeback.
  dl() { $1/bench-courier http-download --url "http://127.0.0.1:$HTTP_PORT/big.bin?r=$2$rep" --size 536870912 --file $WORK/out.bin | val http_download_mbps; rm -f $WORK/out.bin; sync; }
  sync
  if [ $((rep % 2)) -eq 1 ]; then b=$(dl $BEFORE b); a=$(dl $AFTER a); else a=$(dl $AFTER a); b=$(dl $BEFORE b); fi
  c=$(secs curl -s -o $WORK/out.bin "http://127.0.0.1:$HTTP_PORT/big.bin?r=c$rep"); rm -f $WORK/out.bin; sync
  echo "rep $rep download before=$b after=$a curl_mbps=$(echo "536.870912 / $c" | bc -l)"
  fi
done
