"""`ltx serve` through real clients: create -> poll -> events -> download, cancellation, the bounded queue, refusals
of bad requests, authentication, and a restart that keeps finished jobs and fails interrupted ones."""
import base64
import json
import os
import signal
import subprocess
import time

import httpx
import pytest

from conftest import SMALL

# A job long enough to be cancelled while it runs (it never finishes in these tests).
LONG = {"prompt": "a long job", "size": "512x512", "frames": 33, "steps": 100}


def events(server, job_id, until="done", timeout=300):
    """The job's server-sent events as (name, data) pairs, up to and including the first named `until`."""
    out = []
    with server.client.stream("GET", f"/v1/videos/{job_id}/events", timeout=timeout) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                out.append((name, json.loads(line[len("data: "):])))
                if name == until:
                    return out
    return out


def ffprobe_codecs(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return sorted(out.split())


def wait_running(server, job_id):
    """Waits for the job's first denoising step, so it is surely running."""
    for name, data in events(server, job_id, until="step"):
        if name == "step":
            return data
    raise AssertionError("no step event")


def assert_error(response, status, param=None, says=()):
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["message"] and error["code"] and error["type"]
    if param is not None:
        assert error["param"] == param, error
    for word in says:
        assert word in error["message"], error
    return error


def test_create_poll_events_download(server, tmp_path):
    r = server.post(SMALL)
    assert r.status_code == 202, r.text
    job = r.json()
    assert job["object"] == "video" and job["status"] in ("queued", "in_progress")
    assert job["id"].startswith("video_") and len(job["id"]) == 38
    assert r.headers["location"] == f"/v1/videos/{job['id']}"
    assert job["size"] == "64x64" and job["frames"] == 9 and job["steps"] == 1 and job["prompt"] == SMALL["prompt"]

    stream = events(server, job["id"])
    names = [n for n, _ in stream]
    assert names[-1] == "done" and stream[-1][1]["status"] == "completed"
    stages = [(d["stage"], d["kind"]) for n, d in stream if n == "stage"]
    for stage in ("encode prompt", "denoise", "decode"):
        assert (stage, "begin") in stages and (stage, "end") in stages
    steps = [d for n, d in stream if n == "step" and d["stage"] == "denoise"]
    assert [s["step"] for s in steps] == [1] and steps[0]["total"] == 1
    progress = [d["progress"] for n, d in stream if n in ("stage", "step")]
    assert progress == sorted(progress) and 0 <= progress[0] and progress[-1] < 100

    done = server.client.get(f"/v1/videos/{job['id']}").json()
    assert done["status"] == "completed" and done["progress"] == 100 and done["videos"] == 1
    assert done["completed_at"] >= done["started_at"] >= done["created_at"]

    video = server.client.get(f"/v1/videos/{job['id']}/content")
    assert video.status_code == 200 and video.headers["content-type"] == "video/mp4"
    (tmp_path / "v.mp4").write_bytes(video.content)
    assert ffprobe_codecs(tmp_path / "v.mp4") == ["aac", "h264"]
    audio = server.client.get(f"/v1/videos/{job['id']}/content", params={"variant": "audio"})
    assert audio.status_code == 200 and audio.content[:4] == b"RIFF" and audio.content[8:12] == b"WAVE"
    part = server.client.get(f"/v1/videos/{job['id']}/content", headers={"Range": "bytes=0-99"})
    assert part.status_code == 206 and part.content == video.content[:100]
    assert_error(server.client.get(f"/v1/videos/{job['id']}/content", headers={"Range": "bytes=0-999999999"}), 416)
    for bad in ("bytes=999999999-", "bytes=5-2", "bytes=0-10,999999999-"):
        assert_error(server.client.get(f"/v1/videos/{job['id']}/content", headers={"Range": bad}), 416)
    # Elsewhere a Range header is ignored (the library would slice any body by it, unchecked).
    for path in ("/openapi.json", "/health", f"/v1/videos/{job['id']}", "/v1/nothing"):
        r = server.client.get(path, headers={"Range": "bytes=999999-"})
        assert r.status_code in (200, 404) and r.json()
    thumb = server.client.get(f"/v1/videos/{job['id']}/content", params={"variant": "thumbnail"})
    assert thumb.status_code == 200 and thumb.content[:8] == b"\x89PNG\r\n\x1a\n"

    listed = server.client.get("/v1/videos").json()
    assert listed["object"] == "list" and [j["id"] for j in listed["data"]] == [job["id"]]

    # A finished job's DELETE removes it and its files.
    r = server.client.delete(f"/v1/videos/{job['id']}")
    assert r.status_code == 200 and r.json() == {"id": job["id"], "object": "video.deleted", "deleted": True}
    assert not (server.results_dir / job["id"]).exists()
    assert_error(server.client.get(f"/v1/videos/{job['id']}"), 404)


def test_same_request_same_bytes_as_ltx_generate(server, tmp_path):
    """The server runs the engine as `ltx generate` does: the same request gives the same WAV."""
    job = server.post({**SMALL, "seed": 5}).json()
    assert server.wait(job["id"])["status"] == "completed"
    wav = server.client.get(f"/v1/videos/{job['id']}/content", params={"variant": "audio"}).content
    from conftest import LTX_CLI
    subprocess.run([LTX_CLI, "generate", "--prompt", SMALL["prompt"], "--width", "64", "--height", "64", "--frames",
                    "9", "--steps", "1", "--seed", "5", "--quiet", "--output", str(tmp_path / "g.mp4"), "--wav",
                    str(tmp_path / "g.wav")], check=True)
    assert wav == (tmp_path / "g.wav").read_bytes()


def test_cancel_running_and_queued(server):
    running = server.post(LONG).json()
    queued = server.post(SMALL).json()
    wait_running(server, running["id"])

    r = server.client.delete(f"/v1/videos/{queued['id']}")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    r = server.client.delete(f"/v1/videos/{running['id']}")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    assert r.json()["error"]["code"] == "cancelled"

    stream = events(server, running["id"], timeout=120)
    assert stream[-1][0] == "done" and stream[-1][1]["status"] == "cancelled"
    for job in (running, queued):
        assert server.client.get(f"/v1/videos/{job['id']}").json()["status"] == "cancelled"
        assert not (server.results_dir / job["id"]).exists()
        assert_error(server.client.get(f"/v1/videos/{job['id']}/content"), 409, says=["cancelled"])
    # The worker is free again: a new job completes.
    assert server.wait(server.post(SMALL).json()["id"])["status"] == "completed"


def test_queue_full_is_429(start_server):
    server = start_server("--queue-size", "1")
    running = server.post(LONG).json()
    wait_running(server, running["id"])
    waiting = server.post(SMALL)
    assert waiting.status_code == 202
    full = server.post(SMALL)
    error = assert_error(full, 429, says=["queue is full"])
    assert error["code"] == "queue_full" and error["type"] == "rate_limit_error"
    assert int(full.headers["retry-after"]) >= 1
    health = server.client.get("/health").json()
    assert health["queue"] == {"waiting": 1, "running": 1, "capacity": 1}
    server.client.delete(f"/v1/videos/{running['id']}")
    assert server.wait(waiting.json()["id"])["status"] == "completed"


def tiny_png():
    """A 4x4 RGB PNG made here (zlib + CRC), so the test needs no image library."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"".join(bytes([x * 60, y * 60, 128]) for x in range(4)) for y in range(4))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def test_image_conditioning_from_base64(server):
    data = base64.b64encode(tiny_png()).decode()
    r = server.post({**SMALL, "images": [{"data": data, "frame": 0, "strength": 0.9},
                                         {"data": "data:image/png;base64," + data, "frame": 8}]})
    assert r.status_code == 202, r.text
    job = server.wait(r.json()["id"])
    assert job["status"] == "completed", job
    assert [i["frame"] for i in job["images"]] == [0, 8] and "data" not in job["images"][0]
    assert not (server.results_dir / job["id"] / "inputs").exists()


@pytest.mark.parametrize("body, status, param, says", [
    ({**SMALL, "size": "65x64"}, 400, "size", ["multiples of 32"]),
    ({**SMALL, "size": "64by64"}, 400, "size", ["WIDTHxHEIGHT"]),
    ({**SMALL, "frames": 10}, 400, "frames", ["8k+1"]),
    ({**SMALL, "frames": "9"}, 400, "frames", ["must be an integer", "a string"]),
    ({**SMALL, "frames": 9.0}, 400, "frames", ["must be an integer"]),
    ({**SMALL, "seconds": 1}, 400, "seconds", ["not both"]),
    ({**SMALL, "steps": 0}, 400, "steps", ["[1, 100]"]),
    ({**SMALL, "steps": 101}, 400, "steps", ["[1, 100]"]),
    ({**SMALL, "seed": -1}, 400, "seed", []),
    ({**SMALL, "batch": 5}, 400, "batch", ["[1, 4]"]),
    ({**SMALL, "fps": 0}, 400, "fps", ["(0, 240]"]),
    ({**SMALL, "mode": "three_stage"}, 400, "mode", ["one_stage"]),
    ({**SMALL, "mode": "two_stage"}, 400, None, ["upsampler"]),
    ({**SMALL, "model": "sora-2"}, 400, "model", ["not served"]),
    ({**SMALL, "colour": "red"}, 400, "colour", ["unknown field", "valid: model, prompt"]),
    ({**SMALL, "video_guidance": {"cfg": 3, "boost": 1}}, 400, "video_guidance.boost", ["unknown field"]),
    ({**SMALL, "video_guidance": {"cfg": "high"}}, 400, "video_guidance.cfg", ["must be a number"]),
    ({**SMALL, "video_guidance": {"stg_blocks": [99]}}, 400, None, ["stg_blocks"]),
    ({"size": "64x64"}, 400, "prompt", ["required"]),
    ({**SMALL, "prompt": "   "}, 400, "prompt", ["empty"]),
    ({**SMALL, "prompt": 7}, 400, "prompt", ["must be a string"]),
    ({**SMALL, "images": [{"data": "not base64!"}]}, 400, "images[0].data", ["base64"]),
    ({**SMALL, "images": [{"data": base64.b64encode(b"GIF89a....").decode()}]}, 400, "images[0].data", ["PNG"]),
    ({**SMALL, "images": [{"data": base64.b64encode(b"\x89PNG\r\n\x1a\nbroken").decode()}]}, 400, None,
     ["images[0]"]),
    ({**SMALL, "images": [{"frame": 0}]}, 400, "images[0].data", ["required"]),
    ({**SMALL, "images": [{"data": "", "frame": 9}]}, 400, None, []),
    ({**SMALL, "enhance_prompt": "yes"}, 400, "enhance_prompt", ["boolean"]),
    # The default model's text encoder (the 270M GGUF) has no vision tower to show the image to.
    ({**SMALL, "enhance_prompt": True, "images": [{"data": base64.b64encode(tiny_png()).decode()}]}, 400, None,
     ["enhance_prompt", "no vision tower"]),
    ([SMALL], 400, None, ["JSON object"]),
])
def test_bad_requests_are_refused_with_the_field(server, body, status, param, says):
    error = assert_error(server.post(body), status, param, says)
    assert str(server.results_dir) not in error["message"]  # no server path leaks
    assert server.client.get("/v1/videos").json()["data"] == []  # nothing was queued
    assert [p.name for p in server.results_dir.iterdir()] == ["index.json"]  # nothing was left behind


def test_malformed_bodies_ids_and_routes(start_server):
    server = start_server("--max-body", "64K")
    c = server.client
    assert_error(c.post("/v1/videos", content=b"{not json", headers={"content-type": "application/json"}), 400,
                 says=["JSON"])
    assert_error(c.post("/v1/videos", content=b'{"prompt": "a", "prompt": "b"}',
                        headers={"content-type": "application/json"}), 400, says=["prompt"])
    assert_error(c.post("/v1/videos", content=b"prompt=a", headers={"content-type": "text/plain"}), 415)
    big = json.dumps({**SMALL, "negative_prompt": "x" * 70000}).encode()
    assert_error(c.post("/v1/videos", content=big, headers={"content-type": "application/json"}), 413,
                 says=["limit"])
    # A chunked or compressed body would escape the limit: refused before it is read.
    assert_error(c.post("/v1/videos", content=iter([big[:1000], big[1000:]]),
                        headers={"content-type": "application/json"}), 411)
    assert_error(c.post("/v1/videos", content=b"\x1f\x8b", headers={"content-type": "application/json",
                                                                   "content-encoding": "gzip"}), 415)
    assert_error(c.post("/v1/videos", content=json.dumps(SMALL).encode(),
                        headers={"content-type": "application/jsonl"}), 415)
    for bad in ("../../etc/passwd", "..%2F..%2Findex.json", "video_0000", "video_" + "g" * 32, "%00"):
        r = c.get(f"/v1/videos/{bad}")
        assert 400 <= r.status_code < 500 and r.json()["error"]["message"]
        r = c.get(f"/v1/videos/{bad}/content")
        assert 400 <= r.status_code < 500 and r.json()["error"]["message"]
        r = c.delete(f"/v1/videos/{bad}")
        assert 400 <= r.status_code < 500
    assert (server.results_dir / "index.json").exists()
    assert_error(c.get("/v1/videos/video_" + "0" * 32), 404, says=["no video job"])
    assert_error(c.get("/v1/nothing"), 404)
    # Another method on a known path: 405 with Allow; a body it came with is not read, so the connection closes.
    r = c.request("DELETE", "/v1/videos", content=b'{"prompt": "a"}', headers={"content-type": "application/json"})
    assert_error(r, 405)
    assert r.headers["allow"] == "GET, POST" and r.headers["connection"] == "close"
    assert_error(c.get("/v1/videos", params={"limit": 0}), 400, "limit")
    assert_error(c.get("/v1/videos", params={"order": "up"}), 400, "order")
    assert_error(c.get("/v1/videos", params={"after": "video_" + "1" * 32}), 400, "after")
    assert_error(c.get("/v1/videos", params={"page": 2}), 400, "page", ["unknown query parameter"])
    # The server is still up and working.
    assert server.wait(server.post(SMALL).json()["id"])["status"] == "completed"


def test_list_pages(server):
    ids = [server.post({**SMALL, "seed": s}).json()["id"] for s in range(3)]
    newest = server.client.get("/v1/videos", params={"limit": 2}).json()
    assert [j["id"] for j in newest["data"]] == ids[::-1][:2] and newest["has_more"]
    rest = server.client.get("/v1/videos", params={"limit": 2, "after": newest["last_id"]}).json()
    assert [j["id"] for j in rest["data"]] == [ids[0]] and not rest["has_more"]
    oldest = server.client.get("/v1/videos", params={"order": "asc", "limit": 3}).json()
    assert [j["id"] for j in oldest["data"]] == ids
    for i in ids:
        server.wait(i)


def test_api_key(start_server, tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text("s3cret-key\n")
    server = start_server("--api-key-file", str(key_file))
    c = server.client
    assert c.get("/health").status_code == 200  # health and the OpenAPI document stay open
    assert c.get("/openapi.json").status_code == 200
    error = assert_error(c.get("/v1/videos"), 401, says=["API key"])
    assert error["type"] == "authentication_error"
    assert c.get("/v1/videos").headers["www-authenticate"] == "Bearer"
    assert_error(c.get("/v1/videos", headers={"Authorization": "Bearer s3cret-kex"}), 401)
    assert_error(c.get("/v1/videos", headers={"Authorization": "Bearer s3cret-key2"}), 401)
    assert_error(c.post("/v1/videos", json=SMALL, headers={"Authorization": "Basic s3cret-key"}), 401)
    assert c.get("/v1/videos").status_code == 401  # the refused body was not taken for a request
    assert c.get("/v1/videos", headers={"Authorization": "bearer s3cret-key"}).status_code == 200
    auth = {"Authorization": "Bearer s3cret-key"}
    assert c.get("/v1/models", headers=auth).json()["data"][0]["id"] == "ltx-embedded-default"
    job = c.post("/v1/videos", json=SMALL, headers=auth)
    assert job.status_code == 202
    assert c.get(f"/v1/videos/{job.json()['id']}", headers=auth).status_code == 200


@pytest.mark.parametrize("args, says", [
    (["--api-key-file", "/nonexistent/key"], "--api-key-file"),
    (["--max-frames", "100"], "8k+1"),
    (["--port", "70000"], "--port"),
    (["--queue-size", "0"], "--queue-size"),
    (["--bogus"], "unknown option"),
])
def test_bad_serve_options_are_refused(tmp_path, args, says):
    from conftest import LTX_CLI
    r = subprocess.run([LTX_CLI, "serve", "--results-dir", str(tmp_path / "r"), *args], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0 and says in r.stderr, r.stderr


def test_restart_keeps_finished_jobs_and_fails_interrupted_ones(start_server, tmp_path):
    results = tmp_path / "kept"
    first = start_server(results_dir=results)
    done = first.post(SMALL).json()["id"]
    assert first.wait(done)["status"] == "completed"
    video = first.client.get(f"/v1/videos/{done}/content").content
    running = first.post(LONG).json()["id"]
    queued = first.post(SMALL).json()["id"]
    wait_running(first, running)
    first.stop(signal.SIGKILL)  # a crash: nothing gets to clean up

    second = start_server(results_dir=results)
    assert second.client.get(f"/v1/videos/{done}").json()["status"] == "completed"
    assert second.client.get(f"/v1/videos/{done}/content").content == video
    for lost in (running, queued):
        job = second.client.get(f"/v1/videos/{lost}").json()
        assert job["status"] == "failed" and job["error"]["code"] == "server_restarted", job
        assert not (results / lost).exists()
    listed = [j["id"] for j in second.client.get("/v1/videos", params={"order": "asc"}).json()["data"]]
    assert listed == [done, running, queued]

    # A clean stop fails what was waiting, with a reason, and exits 0.
    running = second.post(LONG).json()["id"]
    wait_running(second, running)
    assert second.stop(signal.SIGTERM) == 0
    third = start_server(results_dir=results)
    job = third.client.get(f"/v1/videos/{running}").json()
    assert job["status"] == "failed" and job["error"]["code"] in ("server_stopped", "server_restarted")


def test_curl_client(server, tmp_path):
    """The same flow with curl, as a shell script would do it."""
    def curl(*args):
        return subprocess.run(["curl", "-sS", "--fail-with-body", *args], capture_output=True, text=True,
                              check=True).stdout

    job = json.loads(curl("-X", "POST", f"{server.url}/v1/videos", "-H", "Content-Type: application/json",
                          "-d", json.dumps(SMALL)))
    server.wait(job["id"])
    status = json.loads(curl(f"{server.url}/v1/videos/{job['id']}"))
    assert status["status"] == "completed"
    curl("-o", str(tmp_path / "c.mp4"), f"{server.url}/v1/videos/{job['id']}/content")
    assert ffprobe_codecs(tmp_path / "c.mp4") == ["aac", "h264"]
    models = json.loads(curl(f"{server.url}/v1/models"))
    assert models["object"] == "list" and models["data"][0]["object"] == "model"


def test_defaults_over_the_servers_limits_are_refused(start_server):
    server = start_server("--max-frames", "9", "--max-width", "64", "--max-height", "64", "--max-steps", "2")
    assert_error(server.post({"prompt": "p", "size": "64x64", "steps": 1}), 400, "frames", ["limit of 9"])
    assert_error(server.post({"prompt": "p", "frames": 9, "steps": 1}), 400, "size", ["limit"])
    assert_error(server.post({"prompt": "p", "frames": 9, "size": "64x64"}), 400, "steps", ["limit of 2"])
    assert_error(server.post({"prompt": "p", "seconds": 1, "size": "64x64", "steps": 1}), 400, "seconds")
    assert server.post({"prompt": "p", "frames": 9, "size": "64x64", "steps": 1}).status_code == 202
