"""A bounded load test on loopback: 8 clients submit 5 small jobs each at once against a short queue, retrying on
429 after Retry-After; every job completes, none is lost or duplicated, and the server's memory after the run is
within 5% of what it held after its first job."""
import os
import threading
import time

import pytest

from conftest import SMALL

CLIENTS, JOBS_PER_CLIENT = 8, 5


def test_eight_clients_five_jobs_each(start_server):
    server = start_server("--queue-size", "8")
    first = server.post(SMALL).json()["id"]
    assert server.wait(first)["status"] == "completed"
    rss_after_first = server.rss_kib()

    submitted, refused, errors = [], [0], []
    lock = threading.Lock()

    def client(k):
        try:
            for j in range(JOBS_PER_CLIENT):
                while True:
                    r = server.post({**SMALL, "seed": 100 * k + j})
                    if r.status_code == 202:
                        break
                    assert r.status_code == 429, r.text
                    with lock:
                        refused[0] += 1
                    time.sleep(min(float(r.headers["retry-after"]), 2.0))
                with lock:
                    submitted.append((k, j, r.json()["id"]))
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=1200)
    assert not errors, errors
    assert len(submitted) == CLIENTS * JOBS_PER_CLIENT
    ids = [i for _, _, i in submitted]
    assert len(set(ids)) == len(ids)
    for k, j, job_id in submitted:
        job = server.wait(job_id, timeout=1200)
        assert job["status"] == "completed" and job["seed"] == 100 * k + j, job
    listed = server.client.get("/v1/videos", params={"limit": 100}).json()["data"]
    assert sorted(j["id"] for j in listed) == sorted(ids + [first])
    assert server.client.get("/health").json()["queue"]["waiting"] == 0
    rss_after_all = server.rss_kib()
    print(f"RSS after the first job {rss_after_first} KiB, after {len(ids)} more {rss_after_all} KiB "
          f"({rss_after_all / rss_after_first:.3f}x); 429 answers: {refused[0]}")
    if os.environ.get("LTX_SANITIZED"):
        # AddressSanitizer keeps per-thread allocator caches and shadow memory for each HTTP thread the run wakes
        # (1.11x measured): the server's own memory is checked in the optimized build.
        pytest.skip(f"RSS bound not checked under sanitizers ({rss_after_all / rss_after_first:.3f}x measured)")
    assert rss_after_all <= 1.05 * rss_after_first
