#!/usr/bin/env python3
"""The reference client of the WebSocket benchmark: Python `websockets` (asyncio), the same three
measurements as the Swift clients (see Sources/WSBenchSupport/BenchOptions.swift), the same output.

Usage: python_client.py round-trips|throughput|idle --url URL [--count N] [--warmup N] [--window N] [--size BYTES]
"""
import argparse
import asyncio
import sys
import time

from websockets.asyncio.client import connect


def result(name, value, unit):
    print(f"RESULT {name} {value:.1f} {unit}", flush=True)


def status_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def payload(size):
    return bytes((i * 31 + 7) % 256 for i in range(size))


async def open_connection(url, size):
    return await connect(url, max_size=max(size, 1 << 20) + 64, compression=None, ping_interval=None)


async def round_trips(args):
    message = payload(args.size)
    ws = await open_connection(args.url, args.size)
    for _ in range(args.warmup):
        await ws.send(message)
        await ws.recv()
    start = time.monotonic()
    for _ in range(args.count):
        await ws.send(message)
        if len(await ws.recv()) != args.size:
            raise RuntimeError("short echo")
    result("round-trips", args.count / (time.monotonic() - start), "per-second")
    await ws.close()


async def throughput(args):
    message = payload(args.size)
    ws = await open_connection(args.url, args.size)
    start = time.monotonic()
    for _ in range(min(args.window, args.count)):
        await ws.send(message)
    for index in range(args.count):
        if len(await ws.recv()) != args.size:
            raise RuntimeError("short echo")
        if index + args.window < args.count:
            await ws.send(message)
    result("throughput", args.count * args.size / (time.monotonic() - start) / 1e6, "MB/s")
    await ws.close()


async def idle(args):
    baseline = status_kib("VmRSS")
    sockets = []
    for first in range(0, args.count, 100):
        batch = await asyncio.gather(*(open_connection(args.url, 0) for _ in range(min(100, args.count - first))))
        pongs = [await ws.ping() for ws in batch]
        await asyncio.gather(*pongs)
        sockets += batch
    await asyncio.sleep(1)
    result("idle-peak-rss", status_kib("VmHWM"), "KiB")
    result("idle-per-connection", (status_kib("VmRSS") - baseline) / args.count, "KiB")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("measurement", choices=["round-trips", "throughput", "idle"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--window", type=int, default=4)
    parser.add_argument("--size", type=int, default=0)
    args = parser.parse_args()
    defaults = {"round-trips": (20000, 1024), "throughput": (256, 1 << 20), "idle": (1000, 0)}[args.measurement]
    args.count = args.count or defaults[0]
    args.size = args.size or defaults[1]
    try:
        asyncio.run({"round-trips": round_trips, "throughput": throughput, "idle": idle}[args.measurement](args))
    except Exception as error:  # reported as a failed measurement, as the Swift clients do
        print("RESULT failed 0 none", flush=True)
        print(f"failed: {error!r}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
