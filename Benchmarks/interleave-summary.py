#!/usr/bin/env python3
"""Summarises the output of interleave-before-after.sh and sftp-interleave.sh (read from the files
named, or standard input): for each measurement, the per-repetition ratios old ÷ reference,
new ÷ reference and new ÷ old, and their medians, as a Markdown table."""
import re
import statistics
import sys

REFERENCE = {"data_tasks": "foundation", "get_http_seq": "curl_per_sec", "get_https_seq": "curl_per_sec",
             "download": "curl_mbps", "sftp": "openssh_mbps"}
rows = {}
for line in (open(name) for name in sys.argv[1:]) if len(sys.argv) > 1 else [sys.stdin]:
    for text in line:
        m = re.match(r"rep \d+ (\w+) (.*)", text.strip())
        if not m or m.group(1) not in REFERENCE:
            continue
        values = dict(pair.split("=") for pair in m.group(2).split())
        try:
            before, after, ref = float(values["before"]), float(values["after"]), float(values[REFERENCE[m.group(1)]])
        except (KeyError, ValueError):
            continue
        rows.setdefault(m.group(1), []).append((before / ref, after / ref, after / before))
print("| measurement | reps | old ÷ ref (per rep) | median | new ÷ ref (per rep) | median | new ÷ old median |")
print("|---|---:|---|---:|---|---:|---:|")
for name, ratios in rows.items():
    olds, news, gains = zip(*ratios)
    fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)
    print(f"| {name} | {len(ratios)} | {fmt(olds)} | {statistics.median(olds):.2f} | {fmt(news)} | "
          f"{statistics.median(news):.2f} | {statistics.median(gains):.2f} |")
