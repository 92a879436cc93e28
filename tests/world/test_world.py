"""The default's world (tools/world): its renderer, captions and adherence reader agree with each other, so that a
score measured on generated clips means what it says. Numpy only; seconds."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "world"))
import adherence  # noqa: E402
import world  # noqa: E402


def test_the_reader_recovers_every_attribute_of_rendered_clips():
    # One clip per motion and shape, colors rotating over the palette: what the renderer drew, the reader reads.
    colors = list(world.COLORS)
    for i, (motion, shape) in enumerate((m, s) for m in world.MOTIONS for s in world.SHAPES):
        scene = world.Scene(shape, colors[i % len(colors)], colors[(i + 3) % len(colors)], motion)
        clip = world.make_clip(scene, seed=i)
        result = adherence.score(scene, adherence.read_clip(clip.frames, clip.audio, world.SAMPLE_RATE))
        assert all(result.values()), (scene, result)


def test_a_wrong_clip_scores_wrong():
    # The reader is not agreeable: a clip of another scene fails the attributes that differ.
    asked = world.Scene("circle", "red", "blue", "left")
    shown = world.make_clip(world.Scene("circle", "yellow", "black", "up"), seed=1)
    result = adherence.score(asked, adherence.read_clip(shown.frames, shown.audio, world.SAMPLE_RATE))
    assert result == {"background": False, "color": False, "motion": False, "tone": True, "pitch": False}


def test_every_paraphrase_names_its_scene():
    for scene in world.all_scenes()[::5]:
        for variant in range(48):
            text = world.caption(scene, variant)
            assert world.parse_prompt(text) == scene, text


def test_clips_are_deterministic_and_shaped():
    scene = world.Scene("triangle", "green", "white", "bounce")
    a, b = world.make_clip(scene, seed=7), world.make_clip(scene, seed=7)
    assert a.frames.shape == (world.FRAMES, world.HEIGHT, world.WIDTH, 3) and a.frames.dtype == np.uint8
    assert a.audio.shape == (2, world.SAMPLES) and a.audio.dtype == np.float32
    assert np.array_equal(a.frames, b.frames) and np.array_equal(a.audio, b.audio) and a.caption == b.caption
    assert not np.array_equal(a.frames, world.make_clip(scene, seed=8).frames)


def test_held_out_scenes_are_unseen_combinations_of_seen_words():
    scenes = world.all_scenes()
    held = [s for s in scenes if world.is_held_out(s)]
    train = [s for s in scenes if not world.is_held_out(s)]
    assert 0.08 < len(held) / len(scenes) < 0.2
    assert {s.motion for s in held} == set(world.MOTIONS)
    for attribute in ("shape", "color", "background", "motion"):
        assert {getattr(s, attribute) for s in train} == {getattr(s, attribute) for s in scenes}
    prompts = adherence.held_out_prompts(12)
    for attribute in ("color", "background", "motion"):  # the first six differ in each: no single guess scores
        assert len({getattr(s, attribute) for s, _ in prompts[:6]}) == 6, attribute
    assert all(world.is_held_out(s) and world.parse_prompt(p) == s for s, p in prompts)


@pytest.mark.parametrize("filter_type", [0, 1, 2, 3, 4])
def test_png_reader_undoes_each_filter(tmp_path, filter_type):
    import struct
    import zlib
    rng = np.random.default_rng(filter_type)
    image = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    rows, prior = [], np.zeros(21, np.int64)
    for r in range(5):
        x = image[r].reshape(-1).astype(np.int64)
        a = np.concatenate([np.zeros(3, np.int64), x[:-3]])
        c = np.concatenate([np.zeros(3, np.int64), prior[:-3]])
        if filter_type == 0:
            pred = np.zeros_like(x)
        elif filter_type == 1:
            pred = a
        elif filter_type == 2:
            pred = prior
        elif filter_type == 3:
            pred = (a + prior) // 2
        else:
            pa, pb, pc = np.abs(prior - c), np.abs(a - c), np.abs(a + prior - 2 * c)
            pred = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, prior, c))
        rows.append(bytes([filter_type]) + ((x - pred) & 0xFF).astype(np.uint8).tobytes())
        prior = x

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 7, 5, 8, 2, 0, 0, 0)) +
           chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b""))
    (tmp_path / "x.png").write_bytes(png)
    assert np.array_equal(adherence.read_png(tmp_path / "x.png"), image)


def test_a_written_png_reads_back(tmp_path):
    frame = world.make_clip(world.Scene("triangle", "purple", "yellow", "up"), seed=4).frames[0]
    world.write_png(tmp_path / "f.png", frame)
    assert np.array_equal(adherence.read_png(tmp_path / "f.png"), frame)
