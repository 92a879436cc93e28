"""Prompt adherence of a generated clip of the default's world (tools/world/world.py), measured from the decoded
frames and audio only: the background color, the object's color, the direction of its centroid's motion, whether a
tone sounds, and the trend of its pitch. Each is read as the world's renderer would have made it and compared with
the scene the prompt names.

    python3 tools/world/adherence.py --ltx build/ltx [--seed 10] [--count 8]   # held-out prompts, a score table
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import world  # noqa: E402

ATTRIBUTES = ("background", "color", "motion", "tone", "pitch")


def nearest_color(rgb: np.ndarray) -> str:
    names = list(world.COLORS)
    palette = np.array([world.COLORS[n] for n in names], np.float32)
    return names[int(np.argmin(((palette - rgb.astype(np.float32)) ** 2).sum(axis=1)))]


@dataclasses.dataclass
class Reading:
    background: str
    color: str
    motion: str  # one of world.MOTIONS
    tone: bool
    pitch: str  # "rising", "falling", "steady" or "none"


def read_picture(frames: np.ndarray) -> tuple[str, str, str]:
    """Background color (the median of the border ring), object color (the median of the pixels far from the
    background) and motion (the object's centroid path: net displacement, or vertical oscillation for a bounce)."""
    f = frames.astype(np.float32)
    border = np.concatenate([f[:, :4].reshape(-1, 3), f[:, -4:].reshape(-1, 3), f[:, :, :4].reshape(-1, 3),
                             f[:, :, -4:].reshape(-1, 3)])
    bg_rgb = np.median(border, axis=0)
    distance = np.sqrt(((f - bg_rgb) ** 2).sum(axis=-1))  # [F, H, W]
    mask = distance > 60.0
    if mask.sum() < 20:
        return nearest_color(bg_rgb), nearest_color(bg_rgb), "still"
    color = nearest_color(np.median(f[mask], axis=0))
    xs, ys = [], []
    yy, xx = np.mgrid[0:f.shape[1], 0:f.shape[2]]
    for m in mask:
        if m.sum() >= 20:
            xs.append(xx[m].mean())
            ys.append(yy[m].mean())
    if len(xs) < 3:
        return nearest_color(bg_rgb), color, "still"
    x, y = np.array(xs), np.array(ys)
    dx, dy = x[-1] - x[0], y[-1] - y[0]
    swing = y.max() - y.min()
    reversals = int(np.sum(np.diff(np.sign(np.diff(y))[np.abs(np.diff(y)) > 1.0]) != 0))
    threshold = 12.0
    if swing > 2 * threshold and reversals >= 1 and abs(dy) < swing * 0.7 and abs(dx) < threshold:
        motion = "bounce"
    elif max(abs(dx), abs(dy)) < threshold:
        motion = "still"
    elif abs(dx) >= abs(dy):
        motion = "left" if dx < 0 else "right"
    else:
        motion = "up" if dy < 0 else "down"
    return nearest_color(bg_rgb), color, motion


def dominant_frequency(x: np.ndarray, sample_rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    freqs = np.fft.rfftfreq(len(x), 1.0 / sample_rate)
    band = (freqs >= 100) & (freqs <= 2000)
    return float(freqs[band][np.argmax(spectrum[band])])


def read_sound(audio: np.ndarray, sample_rate: int) -> tuple[bool, str]:
    """Whether a tone sounds (RMS over 0.02 of full scale) and its pitch trend (the dominant frequency of the first
    third against the last third: more than 6% apart is a rise or a fall), in the loudest channel (not a mix: two
    channels out of phase would cancel in one)."""
    mono = audio[int(np.argmax(np.sqrt(np.mean(audio ** 2, axis=1))))] if audio.ndim == 2 else audio
    if float(np.sqrt(np.mean(mono ** 2))) < 0.02:
        return False, "none"
    third = len(mono) // 3
    first, last = dominant_frequency(mono[:third], sample_rate), dominant_frequency(mono[-third:], sample_rate)
    if last > first * 1.06:
        return True, "rising"
    if last < first / 1.06:
        return True, "falling"
    return True, "steady"


def read_clip(frames: np.ndarray, audio: np.ndarray, sample_rate: int) -> Reading:
    background, color, motion = read_picture(frames)
    tone, pitch = read_sound(audio, sample_rate)
    return Reading(background, color, motion, tone, pitch)


def expected(scene: world.Scene) -> Reading:
    pitch = {"up": "rising", "down": "falling", "still": "none"}.get(scene.motion, "steady")
    return Reading(scene.background, scene.color, scene.motion, scene.motion != "still", pitch)


def score(scene: world.Scene, reading: Reading) -> dict[str, bool]:
    """Per attribute, whether the clip shows what the prompt says (a bounce's pitch wavers: its trend is not scored)."""
    want = expected(scene)
    result = {a: getattr(reading, a) == getattr(want, a) for a in ATTRIBUTES}
    if scene.motion == "bounce":
        del result["pitch"]
    return result


# ---------------------------------------------------------------------------------------------------------------
# Reading the engine's outputs: the PNG frames `ltx generate --frames-dir` writes, its 16-bit WAV.


def read_png(path: Path) -> np.ndarray:
    """An 8-bit RGB PNG (non-interlaced, any filter), as the engine writes them."""
    data = path.read_bytes()
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big")
            if body[8] != 8 or body[9] != 2 or body[12] != 0:
                raise ValueError(f"{path}: not an 8-bit RGB non-interlaced PNG")
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * 3)
    out = np.zeros((height, width * 3), np.int64)
    for r in range(height):
        kind, line = raw[r, 0], raw[r, 1:].astype(np.int64)
        prior = out[r - 1] if r > 0 else np.zeros(width * 3, np.int64)
        if kind == 0:
            row = line
        elif kind == 1:  # Sub: each byte plus the one a pixel to its left: a running sum per channel
            row = np.cumsum(line.reshape(width, 3), axis=0).reshape(-1)
        elif kind == 2:  # Up
            row = line + prior
        else:  # Average and Paeth depend on the bytes just decoded: pixel by pixel
            row = np.zeros(width * 3, np.int64)
            for i in range(width * 3):
                a, b, c = (row[i - 3] if i >= 3 else 0), prior[i], (prior[i - 3] if i >= 3 else 0)
                if kind == 3:
                    p = (a + b) // 2
                else:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                row[i] = (line[i] + p) & 0xFF
        out[r] = row & 0xFF
    return out.reshape(height, width, 3).astype(np.uint8)


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    import wave
    with wave.open(str(path), "rb") as w:
        rate, channels, n = w.getframerate(), w.getnchannels(), w.getnframes()
        pcm = np.frombuffer(w.readframes(n), "<i2").reshape(n, channels)
    return (pcm.T.astype(np.float32) / 32768.0), rate


def held_out_prompts(count: int) -> list[tuple[world.Scene, str]]:
    """`count` held-out scenes (a seeded order), each with a paraphrase of its own, picked so that every run of
    eight differs in object color, background and motion as far as the world allows: a model that always draws one
    color or one motion scores at chance."""
    pool = [s for s in world.all_scenes() if world.is_held_out(s)]
    random.Random(2020).shuffle(pool)
    chosen: list[world.Scene] = []
    while len(chosen) < min(count, len(pool)):
        recent = chosen[-(len(chosen) % 8 or 8):] if len(chosen) % 8 else []
        fresh = [s for s in pool if s not in chosen and all(
            s.color != r.color and s.background != r.background and s.motion != r.motion for r in recent)]
        chosen.append((fresh or [s for s in pool if s not in chosen])[0])
    return [(s, world.caption(s, i)) for i, s in enumerate(chosen)]


def generate_and_score(ltx: str, prompts: list[tuple[world.Scene, str]], seed: int, ltx_args: list[str],
                       out: Path) -> list[dict[str, bool]]:
    """Each prompt generated by `ltx generate` at the world's size with `seed` (into out/<i>/) and scored."""
    results = []
    for i, (scene, prompt) in enumerate(prompts):
        d = out / str(i)
        d.mkdir(parents=True, exist_ok=True)
        cmd = [ltx, "generate", "--prompt", prompt, "--seed", str(seed), "--frames", str(world.FRAMES),
               "--width", str(world.WIDTH), "--height", str(world.HEIGHT), "--output", str(d / "x.mp4"),
               "--wav", str(d / "x.wav"), "--frames-dir", str(d / "frames"), "--quiet", *ltx_args]
        subprocess.run(cmd, check=True)
        frames = np.stack([read_png(p) for p in sorted((d / "frames").glob("*.png"))])
        audio, rate = read_wav(d / "x.wav")
        results.append(score(scene, read_clip(frames, audio, rate)))
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ltx", required=True, help="the ltx binary")
    ap.add_argument("--seed", type=int, default=10)
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("--ltx-args", default="", help="more arguments for ltx generate (a model, a size)")
    args = ap.parse_args()
    prompts = held_out_prompts(args.count)
    with tempfile.TemporaryDirectory() as tmp:
        results = generate_and_score(args.ltx, prompts, args.seed, args.ltx_args.split(), Path(tmp))
    print("| prompt | " + " | ".join(ATTRIBUTES) + " |\n|---|" + "---|" * len(ATTRIBUTES))
    for (_, prompt), result in zip(prompts, results):
        print(f"| {prompt} | " + " | ".join("yes" if result.get(a) else ("-" if a not in result else "no")
                                            for a in ATTRIBUTES) + " |")
    totals = [(sum(r.get(a, False) for r in results), sum(a in r for r in results)) for a in ATTRIBUTES]
    print("| **held-out total** | " + " | ".join(f"{ok}/{n}" for ok, n in totals) + " |")


if __name__ == "__main__":
    main()
