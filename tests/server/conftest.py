"""Fixtures of the `ltx serve` tests: a real server on a loopback port, started from the built binary ($LTX_CLI)
with the embedded default model, talked to with real clients (httpx, curl)."""
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

LTX_CLI = os.environ.get("LTX_CLI", str(Path(__file__).resolve().parents[2] / "build" / "ltx"))
# Small jobs: the embedded default model at its smallest size.
SMALL = {"prompt": "a red fox running through fresh snow", "size": "64x64", "frames": 9, "steps": 1}


class Server:
    def __init__(self, results_dir, *args, env=None):
        self.results_dir = Path(results_dir)
        self.args = [LTX_CLI, "serve", "--port", "0", "--results-dir", str(results_dir), "--quiet", *args]
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        line = self.proc.stdout.readline()  # "ltx serve: MODEL (VERSION) listening on http://HOST:PORT, results in DIR"
        if "listening on http://" not in line:
            self.proc.kill()
            raise RuntimeError(f"ltx serve did not start: {line!r} {self.proc.stderr.read()}")
        self.url = line.split("listening on ")[1].split(",")[0]
        self.client = httpx.Client(base_url=self.url, timeout=60)

    def post(self, body, **kw):
        return self.client.post("/v1/videos", json=body, **kw)

    def wait(self, job_id, statuses=("completed", "failed", "cancelled"), timeout=300):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = self.client.get(f"/v1/videos/{job_id}").json()
            if job["status"] in statuses:
                return job
            time.sleep(0.05)
        raise TimeoutError(f"job {job_id} still {job['status']} after {timeout} s")

    def rss_kib(self):
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def stop(self, sig=signal.SIGTERM):
        self.client.close()  # an idle keep-alive connection would hold the server's shutdown for its 5 s timeout
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture
def start_server(tmp_path):
    servers = []

    def start(*args, results_dir=None, env=None):
        s = Server(results_dir or tmp_path / "results", *args, env=env)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


@pytest.fixture
def server(start_server):
    return start_server()
