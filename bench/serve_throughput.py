#!/usr/bin/env python3
"""Issue-15 benchmark: `ltx serve` against the same generations in one `ltx generate --repeat N` process, on the
embedded default model at its default request (or the size given), alternating ROUNDS times; medians.

  jobs per minute   the server: after a first job, N-1 jobs submitted at once, from the first POST to the last job's
                    "done" event (the models are loaded before); ltx generate --wav: the same N generations' own
                    run times (the first run's includes the load, so it is left out: runs 2..N)
  overhead          1 - server rate / generate rate (target: under 5%)
  GET latency       GET /v1/videos/{id} of queued and running jobs every 20 ms while three more jobs run, p50 and
                    p99 (target: p99 under 10 ms)

Usage: build/venv-test/bin/python bench/serve_throughput.py [--jobs N] [--rounds R] [--size WxH] [--frames F]
       [--steps S]   (LTX=path/to/ltx to override build/ltx)
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
LTX = os.environ.get("LTX", str(ROOT / "build" / "ltx"))
PROMPT = "a red fox running through fresh snow at dawn"


def generate_rate(args, work):
    # The server writes the MP4, a WAV and a thumbnail per job: generate writes the MP4 and the WAV.
    cmd = [LTX, "generate", "--prompt", PROMPT, "--output", f"{work}/g.mp4", "--wav", f"{work}/g.wav", "--repeat",
           str(args.jobs), "--progress", "json"]
    if args.size:
        w, h = args.size.split("x")
        cmd += ["--width", w, "--height", h]
    if args.frames:
        cmd += ["--frames", str(args.frames)]
    if args.steps:
        cmd += ["--steps", str(args.steps)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    runs = [r for r in map(json.loads, out.splitlines()) if r.get("event") == "done"]
    seconds = sum(r["seconds"] for r in runs[1:])
    return 60 * (len(runs) - 1) / seconds


def serve_rate(args, work):
    proc = subprocess.Popen([LTX, "serve", "--port", "0", "--results-dir", f"{work}/results", "--quiet",
                             "--queue-size", str(args.jobs + 1)], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split("listening on ")[1].split(",")[0]
        client = httpx.Client(base_url=url, timeout=600)
        body = {"prompt": PROMPT}
        if args.size:
            body["size"] = args.size
        if args.frames:
            body["frames"] = args.frames
        if args.steps:
            body["steps"] = args.steps
        client.post("/v1/videos", json=body)  # a first job, as generate's first run, outside the timing
        time.sleep(0.2)
        while client.get("/health").json()["queue"]["running"]:
            time.sleep(0.02)
        # Throughput: the jobs at once, timed to the last one's "done" event (FIFO: it ends last), no polling.
        t0 = time.perf_counter()
        ids = [client.post("/v1/videos", json=body).json()["id"] for _ in range(args.jobs - 1)]
        with client.stream("GET", f"/v1/videos/{ids[-1]}/events") as events:
            for line in events.iter_lines():
                if line == "event: done":
                    break
        elapsed = time.perf_counter() - t0
        # Latency: a client asking for a running job's status every 20 ms while three more jobs run.
        latencies = []
        more = [client.post("/v1/videos", json=body).json()["id"] for _ in range(3)]
        while client.get(f"/v1/videos/{more[-1]}").json()["status"] != "completed":
            for i in more:
                s = time.perf_counter()
                client.get(f"/v1/videos/{i}")
                latencies.append(time.perf_counter() - s)
            time.sleep(0.02)
        return 60 * len(ids) / elapsed, latencies
    finally:
        proc.terminate()
        proc.wait()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--jobs", type=int, default=6)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--size")
    p.add_argument("--frames", type=int)
    p.add_argument("--steps", type=int)
    args = p.parse_args()
    gen, srv, lat = [], [], []
    with tempfile.TemporaryDirectory() as work:
        for r in range(args.rounds):
            gen.append(generate_rate(args, work))
            rate, latencies = serve_rate(args, work)
            srv.append(rate)
            lat += latencies
            print(f"# round {r + 1}: generate {gen[-1]:.2f} jobs/min, serve {srv[-1]:.2f} jobs/min")
    lat_ms = sorted(1000 * x for x in lat)
    g, s = statistics.median(gen), statistics.median(srv)
    print(f"| | jobs/min (median of {args.rounds}) |\n|---|---:|\n| ltx generate --repeat {args.jobs} | {g:.2f} |\n"
          f"| ltx serve, {args.jobs - 1} jobs at once | {s:.2f} |")
    paired = statistics.median(sv / gv for sv, gv in zip(srv, gen))
    print(f"server overhead: {100 * (1 - s / g):.1f}% of the medians, {100 * (1 - paired):.1f}% as the median of the "
          f"rounds' own ratios (target < 5%)")
    print(f"GET /v1/videos/{{id}} while jobs run: {len(lat_ms)} requests, p50 {lat_ms[len(lat_ms) // 2]:.2f} ms, "
          f"p99 {lat_ms[int(0.99 * (len(lat_ms) - 1))]:.2f} ms (target p99 < 10 ms)")


if __name__ == "__main__":
    main()
