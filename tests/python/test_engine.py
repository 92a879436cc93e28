"""The Python package `ltx` (python/) on the embedded default model at a tiny size: arrays, determinism, parity
with `ltx generate`, errors, progress, the GIL, Ctrl-C and saving.

ctest runs it with PYTHONPATH=<build>/python and LTX_CLI=<build>/ltx from the repository root. The tests that
generate need the Gemma 3 270M GGUF of scripts/setup and are skipped without it; the parity test needs LTX_CLI and
ffmpeg, the MP4 check ffprobe.
"""

import gc
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import wave

import numpy as np
import pytest

import ltx

PROMPT = "a red fox running through fresh snow"
TINY = dict(width=64, height=64, frames=9, steps=2)  # 8k+1 frames, multiples of 32: pipeline/params.h


def tiny(engine, seed=7, **options):
    return engine.generate(PROMPT, **{**TINY, "seed": seed, **options})


def tool_env():
    """The environment for ffmpeg and ffprobe: without a sanitizer build's LD_PRELOAD, which is for Python."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """One cache folder (the default model's file, Gemma's decoded matrices) for this module's engines and the CLI, made
    once as tests/cli do. Removed afterwards: it holds some 200 MB."""
    path = tmp_path_factory.mktemp("ltx_cache")
    old = os.environ.get("LTX_CACHE_DIR")
    os.environ["LTX_CACHE_DIR"] = str(path)
    yield path
    if old is None:
        del os.environ["LTX_CACHE_DIR"]
    else:
        os.environ["LTX_CACHE_DIR"] = old
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def engine(cache_dir):
    try:
        return ltx.Engine()
    except ltx.InvalidModel as e:
        if "not installed" in str(e):  # stages/default_model.cpp: the Gemma 3 270M GGUF is absent
            pytest.skip(str(e))
        raise


@pytest.fixture(scope="module")
def video(engine):
    return tiny(engine)


def test_version_and_error_classes():
    assert ltx.__version__ == ltx.version()
    assert len(ltx.version().split(".")) == 3, ltx.version()
    cli = os.environ.get("LTX_CLI")
    if cli:
        out = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout
        assert out.strip() == "ltx " + ltx.version()
    assert issubclass(ltx.Error, RuntimeError)
    for cls, also, category in [
        (ltx.InvalidRequest, ValueError, "invalid_request"),
        (ltx.InvalidModel, None, "invalid_model"),
        (ltx.IoError, OSError, "io"),
        (ltx.OutOfMemory, MemoryError, "out_of_memory"),
        (ltx.Cancelled, None, "cancelled"),
        (ltx.InternalError, None, "internal"),
    ]:
        assert issubclass(cls, ltx.Error), cls
        assert also is None or issubclass(cls, also), cls
        assert cls.category == category
        assert cls.__module__ == "ltx"


def test_missing_checkpoint_is_invalid_model_naming_it(tmp_path):
    absent = tmp_path / "absent.safetensors"
    heard = []
    with pytest.raises(ltx.InvalidModel) as e:
        ltx.Engine(checkpoint=absent, progress=heard.append)
    assert str(absent) in str(e.value) and "does not exist" in str(e.value)
    assert e.value.category == "invalid_model"
    assert e.value.component  # the part of the engine that raised it
    assert [(p.kind, p.stage) for p in heard if p.kind == "begin"] == [("begin", "load models")]

    # A progress callable that raises ends the load with its own exception, untouched.
    stop = RuntimeError("stop loading")

    def raising(p):
        raise stop

    with pytest.raises(RuntimeError) as e:
        ltx.Engine(checkpoint=absent, progress=raising)
    assert e.value is stop


def test_engine_options_are_checked_before_loading():
    with pytest.raises(ltx.InvalidRequest, match="memory_budget") as e:
        ltx.Engine(memory_budget="8X")
    assert e.value.category == "invalid_request"
    with pytest.raises(ltx.InvalidRequest, match="memory_budget"):
        ltx.Engine(memory_budget=-1)
    with pytest.raises(ltx.InvalidRequest, match="precision"):
        ltx.Engine(precision="fast")
    assert ltx.available_backends()[0] == "cpu"
    with pytest.raises(ltx.InvalidRequest, match=r"backend 'gpu' is not one of this build's \(valid: cpu"):
        ltx.Engine(backend="gpu")
    if "xla" in ltx.available_backends():
        with pytest.raises(ltx.InvalidRequest, match="'/nonexistent/plugin.so' could not be loaded"):
            ltx.Engine(backend="xla", xla_plugin="/nonexistent/plugin.so")
    with pytest.raises(ltx.InvalidRequest, match="threads"):
        ltx.Engine(checkpoint="/nonexistent.safetensors", threads=-2)
    with pytest.raises(TypeError, match="loras"):
        ltx.Engine(loras="style.safetensors")  # a list is meant
    with pytest.raises(TypeError, match="progress"):
        ltx.Engine(progress=5)


def test_frames_and_audio(engine, video):
    assert engine.default_model
    assert engine.model_version.startswith(("2.3", "2.0"))
    assert engine.load_seconds > 0

    frames = video.frames
    assert isinstance(frames, np.ndarray)
    assert frames.dtype == np.uint8
    assert frames.shape == (9, 64, 64, 3)
    assert frames.flags.c_contiguous and not frames.flags.writeable
    assert video.frames is frames  # one view, not a copy per access
    assert np.unique(frames).size > 1, "one flat colour"

    audio = video.audio
    assert isinstance(audio, np.ndarray)
    assert audio.dtype == np.float32
    assert audio.ndim == 2 and audio.shape[0] >= 1 and audio.flags.c_contiguous
    assert video.fps == 24.0
    assert video.sample_rate > 0
    # The vocoder's length is the video's duration, within a frame or two (tests/api engine_test.cpp).
    assert abs(audio.shape[1] / video.sample_rate - 9 / 24.0) <= 2 / 24.0
    assert np.all(np.isfinite(audio)) and np.all(np.abs(audio) <= 1.0)

    assert video.prompt == PROMPT
    assert video.seed == 7 and video.steps == 2
    assert video.seconds > 0
    names = [name for name, _ in video.stages]
    assert names[-3:] == ["encode prompt", "denoise", "decode"], names
    assert all(seconds >= 0 for _, seconds in video.stages)
    assert "9 frames 64x64" in repr(video)


def test_same_seed_same_arrays_other_seed_differs(engine, video):
    again = tiny(engine, seed=7)
    frames, audio = again.frames, again.audio
    del again  # the arrays keep the memory they view
    gc.collect()
    np.testing.assert_array_equal(frames, video.frames)
    np.testing.assert_array_equal(audio, video.audio)

    other = tiny(engine, seed=8)
    assert other.seed == 8
    assert not np.array_equal(other.frames, video.frames)
    assert not np.array_equal(other.audio, video.audio)


@pytest.mark.skipif("xla" not in ltx.available_backends(), reason="this build has no XLA backend (scripts/setup)")
def test_the_xla_backend_generates_what_the_cpu_does(engine, video, cache_dir):
    """Engine(backend="xla"): every graph compiled by XLA (its CPU plugin), the same frames within a few levels."""
    on_xla = tiny(ltx.Engine(backend="xla"))
    assert on_xla.frames.shape == video.frames.shape
    assert np.abs(on_xla.frames.astype(int) - video.frames.astype(int)).max() <= 3  # 1 measured
    assert np.allclose(on_xla.audio, video.audio, atol=0.005)  # 1.2e-4 measured


def test_parity_with_the_cli(video, cache_dir, tmp_path):
    cli = os.environ.get("LTX_CLI")
    if not cli:
        pytest.skip("LTX_CLI is not set (ctest sets it to the built ltx)")
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg is absent (scripts/setup installs Debian's ffmpeg)")
    frames_dir, wav = tmp_path / "frames", tmp_path / "fox.wav"
    subprocess.run(
        [cli, "generate", "--prompt", PROMPT, "--width", "64", "--height", "64", "--frames", "9", "--steps", "2",
         "--seed", "7", "--output", str(tmp_path / "fox.mp4"), "--frames-dir", str(frames_dir), "--wav", str(wav),
         "--quiet"],
        check=True, timeout=600)  # LTX_CACHE_DIR (the fixture's) is inherited: the same default model

    rgb = subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-i", str(frames_dir / "frame_%05d.png"), "-f", "rawvideo", "-pix_fmt",
         "rgb24", "-"],
        capture_output=True, check=True, env=tool_env()).stdout
    cli_frames = np.frombuffer(rgb, dtype=np.uint8)
    assert cli_frames.size == video.frames.size
    np.testing.assert_array_equal(cli_frames.reshape(video.frames.shape), video.frames)

    with wave.open(str(wav), "rb") as w:
        assert w.getsampwidth() == 2
        assert w.getnchannels() == video.audio.shape[0]
        assert w.getframerate() == video.sample_rate
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    pcm = pcm.reshape(-1, video.audio.shape[0]).T  # interleaved -> [channels, samples]
    assert pcm.shape == video.audio.shape
    assert np.count_nonzero(pcm) > 0, "silence: nothing to compare"
    # io/wav_write.cpp writes lrint(x * 32767): one quantization step apart at most.
    assert np.max(np.abs(video.audio.astype(np.float64) * 32767.0 - pcm)) <= 1.0


def test_invalid_request_names_the_field_and_the_engine_stays_usable(engine):
    with pytest.raises(ltx.InvalidRequest) as e:
        engine.generate(PROMPT, **{**TINY, "width": 65})
    assert isinstance(e.value, ValueError)
    assert "width 65" in str(e.value), str(e.value)
    assert e.value.category == "invalid_request"
    assert e.value.component == "generate"
    assert tiny(engine).frames.shape == (9, 64, 64, 3)


NAN = math.nan
ABSENT_PNG = "/nonexistent/cat.png"


@pytest.mark.parametrize(
    "options, words",
    [
        (dict(images=[(ABSENT_PNG, 20, 2.0, 60)]), ["frame 20", "strength", "CRF 60", "does not exist"]),
        (dict(images=[dict(path=ABSENT_PNG, frame=20, strength=2.0, crf=60)]), ["frame 20", "CRF 60"]),
        (dict(images=[ABSENT_PNG]), [ABSENT_PNG, "does not exist"]),
        (dict(frames=10), ["frames 10", "8k+1"]),
        (dict(fps=0.0), ["fps"]),
        (dict(cfg=NAN), ["video_guidance.cfg"]),
        (dict(audio_stg=NAN), ["audio_guidance.stg"]),
        (dict(stg_blocks=[1000]), ["video_guidance.stg_blocks holds 1000", "audio_guidance.stg_blocks holds 1000"]),
        (dict(two_stage=True), ["TwoStage", "upsampler"]),
        (dict(distilled=True), ["distilled"]),
        (dict(sampler="heun"), ["sampler", "res2s"]),
        (dict(keyframe_interpolation=True), ["keyframe_interpolation needs images"]),
        (dict(retake=dict(path=ABSENT_PNG, start=0.5, end=0.2)), ["retake", "0 <= start < end", "does not exist"]),
        (dict(audio=ABSENT_PNG), ["audio", "does not exist"]),
        (dict(reference_videos=[(ABSENT_PNG, 0.5)], conditioning_strength=0.5),
         ["reference video 1", "does not exist", "need the IC-LoRA"]),
        (dict(conditioning_mask=ABSENT_PNG), ["conditioning_mask needs reference_videos"]),
    ],
)
def test_request_options_reach_the_engine(engine, options, words):
    with pytest.raises(ltx.InvalidRequest) as e:
        engine.generate(PROMPT, **{**TINY, **options})
    for word in words:
        assert word in str(e.value), (word, str(e.value))


def test_enhance_rewrites_and_refuses_an_image_without_a_vision_tower(engine, tmp_path):
    a = engine.enhance("a red fox in fresh snow", greedy=True, max_new_tokens=8)
    assert a and a == engine.enhance("a red fox in fresh snow", greedy=True, max_new_tokens=8)
    with pytest.raises(ltx.InvalidRequest) as e:
        engine.enhance("a fox", image=ABSENT_PNG)
    assert ABSENT_PNG in str(e.value)
    with pytest.raises(ltx.InvalidRequest) as e:  # the default's 270M text encoder has no vision tower
        engine.generate(PROMPT, **TINY, images=[ABSENT_PNG], enhance_prompt=True)
    assert "enhance_prompt" in str(e.value), str(e.value)


def test_progress_reports_the_denoise_steps(engine):
    heard = []
    tiny(engine, progress=heard.append)
    assert all(isinstance(p, ltx.Progress) for p in heard)
    assert [p.stage for p in heard if p.kind == "end"] == ["encode prompt", "denoise", "decode"]
    denoise = [p for p in heard if p.stage == "denoise" and p.kind != "note"]
    assert [p.kind for p in denoise] == ["begin", "step", "step", "end"]
    assert [(p.step, p.total) for p in denoise if p.kind == "step"] == [(1, 2), (2, 2)]
    assert denoise[-1].step == 2
    assert all(p.elapsed >= 0 for p in denoise)


def test_an_exception_in_progress_ends_generate_and_the_engine_stays_usable(engine):
    stop = RuntimeError("stop")
    steps = []

    def raising(p):
        if p.stage == "denoise" and p.kind == "step":
            steps.append(p.step)
            raise stop

    with pytest.raises(RuntimeError) as e:
        tiny(engine, progress=raising)
    assert e.value is stop  # the same object: not wrapped, not an ltx.Error
    assert steps == [1]
    assert tiny(engine).frames.shape == (9, 64, 64, 3)


def test_generate_releases_the_gil(engine):
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        t0 = time.monotonic()
        tiny(engine, steps=4)
        t1 = time.monotonic()
    finally:
        done.set()
        ticker.join()
    # Holding the GIL, the call would let the ticker run at its edges only.
    assert t1 - t0 > 0.07, "generate took too little time to tell"
    inside = [t for t in ticks if t0 + 0.01 < t < t1 - 0.01]
    assert len(inside) >= 5, f"{len(inside)} ticks during {t1 - t0:.3f} s of generate"


CTRL_C = r"""
import json, os, signal, sys, threading, time
import ltx

engine = ltx.Engine()
heard, sent = [], []

def interrupt_after_the_first_denoise_step():
    while not any(p.stage == "denoise" and p.kind == "step" for p in heard):
        time.sleep(0.001)
    sent.append(time.monotonic())
    os.kill(os.getpid(), signal.SIGINT)

# The progress callable is list.append, which runs no Python code: the signal can only be seen by the call itself.
threading.Thread(target=interrupt_after_the_first_denoise_step, daemon=True).start()
out = {"interrupted": False}
try:
    engine.generate("a red fox running through fresh snow", width=64, height=64, frames=9, steps=int(sys.argv[1]),
                    progress=heard.append)
except KeyboardInterrupt:
    out["interrupted"] = True
    out["latency"] = time.monotonic() - sent[0]
out["steps"] = sum(1 for p in heard if p.stage == "denoise" and p.kind == "step")
out["after"] = list(engine.generate("a red fox", width=64, height=64, frames=9, steps=2).frames.shape)
print(json.dumps(out))
"""


def test_ctrl_c_cancels_generate_and_the_engine_stays_usable(engine, cache_dir):
    # Needs `engine` for its skip and for the cache it filled. A child process, as SIGINT goes to a whole process.
    steps = 1000  # far more than run before the signal lands
    env = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(ltx.__file__))
    env["PYTHONPATH"] = os.pathsep.join(p for p in [package_parent, env.get("PYTHONPATH")] if p)
    run = subprocess.run([sys.executable, "-c", CTRL_C, str(steps)], capture_output=True, text=True, env=env,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["interrupted"], out
    assert out["latency"] < 5.0, out  # the 50 ms signal check, then the step in progress
    assert 1 <= out["steps"] < steps, out
    assert out["after"] == [9, 64, 64, 3]


def test_save_writes_h264_aac_mp4_and_wav(video, tmp_path):
    mp4, wav = tmp_path / "fox.mp4", tmp_path / "fox.wav"
    video.save(mp4, wav=wav)
    assert mp4.stat().st_size > 0
    with wave.open(str(wav), "rb") as w:
        assert (w.getnchannels(), w.getframerate(), w.getnframes()) == (
            video.audio.shape[0], video.sample_rate, video.audio.shape[1])

    if shutil.which("ffprobe") is not None:
        probe = subprocess.run(
            ["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name", "-of", "json", str(mp4)],
            capture_output=True, text=True, check=True, env=tool_env()).stdout
        streams = sorted((s["codec_type"], s["codec_name"]) for s in json.loads(probe)["streams"])
        assert streams == [("audio", "aac"), ("video", "h264")]

    with pytest.raises(ltx.IoError) as e:
        video.save(tmp_path / "absent_dir" / "fox.mp4")
    assert isinstance(e.value, OSError) and e.value.category == "io"


def test_generate_batch_is_prompt_major(engine):
    prompts = ["a red fox in the snow", "a lighthouse at dusk"]
    videos = engine.generate_batch(prompts, **TINY, seed=7)
    assert [v.prompt for v in videos] == prompts
    assert all(v.frames.shape == (9, 64, 64, 3) for v in videos)
    assert not np.array_equal(videos[0].frames, videos[1].frames)
