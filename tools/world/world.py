"""The embedded default's small world (issue 20): scenes of one shape of a named color on a plain background of
another, moving in a named direction, bouncing or still, with a sound that belongs to the scene, rendered as clips at
the default's size (17 frames of 192x128 at 24 fps, 48 kHz stereo) and captioned in the official prompts' style,
with paraphrases. Everything follows from a seed; numpy only.

The sound: a sine tone whose pitch follows the object's height (220 Hz at the bottom edge to 880 Hz at the top,
two octaves), a click at each bounce, silence when the object is still.

    python3 tools/world/world.py --seed 3 --out /tmp/clip   # clip.npz (frames, audio), .txt (caption), .png
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
from pathlib import Path

import numpy as np

FRAMES, HEIGHT, WIDTH, FPS, SAMPLE_RATE = 17, 128, 192, 24, 48000
SAMPLES = round(FRAMES / FPS * SAMPLE_RATE)  # 34000: the clip's duration at the audio rate

# Named colors, far apart in RGB so that a decoded pixel has one nearest name.
COLORS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "green": (40, 170, 60),
    "blue": (40, 70, 220),
    "yellow": (240, 215, 40),
    "purple": (140, 50, 180),
    "white": (240, 240, 240),
    "black": (20, 20, 20),
    "gray": (128, 128, 128),
}
SHAPES = ("circle", "square", "triangle")
MOTIONS = ("left", "right", "up", "down", "bounce", "still")
RADIUS = 20  # the shape's half size in pixels
TRAVEL = 84  # pixels the object moves over a clip
LOW_HZ, HIGH_HZ = 220.0, 880.0


@dataclasses.dataclass(frozen=True)
class Scene:
    shape: str
    color: str
    background: str
    motion: str

    def key(self) -> str:
        return f"{self.color} {self.shape} {self.motion} on {self.background}"


def all_scenes() -> list[Scene]:
    """Every scene of the world: object and background colors differ."""
    return [Scene(s, c, b, m) for s, c, b, m in itertools.product(SHAPES, COLORS, COLORS, MOTIONS) if c != b]


def is_held_out(scene: Scene) -> bool:
    """About one scene in eight, fixed by a hash of its key: never trained on, used to score prompt adherence on
    combinations the model has not seen (each color, background and motion is seen in other combinations)."""
    return hashlib.sha256(scene.key().encode()).digest()[0] < 32


# ---------------------------------------------------------------------------------------------------------------
# Motion


def trajectory(scene: Scene, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The object's centre per frame (x, y in pixels, y down) and the frames at which it bounces."""
    t = np.arange(FRAMES) / (FRAMES - 1)
    margin = RADIUS + 4
    jitter = rng.uniform(-8, 8, size=2)
    cx, cy = WIDTH / 2 + jitter[0], HEIGHT / 2 + jitter[1]
    bounces: list[int] = []
    if scene.motion in ("left", "right"):
        sign = -1 if scene.motion == "left" else 1
        x = cx - sign * TRAVEL / 2 + sign * TRAVEL * t
        y = np.full(FRAMES, cy)
    elif scene.motion in ("up", "down"):
        travel = min(TRAVEL, HEIGHT - 2 * margin)
        sign = -1 if scene.motion == "up" else 1
        y = cy - sign * travel / 2 + sign * travel * t
        x = np.full(FRAMES, cx)
    elif scene.motion == "bounce":
        # Two arcs off the floor: |sin| of a height above it, the floor contacts at the frames where it touches.
        floor = HEIGHT - margin
        top = margin + rng.uniform(0, 8)
        phase = np.abs(np.sin(np.pi * (2 * t + 0.5)))
        y = floor - (floor - top) * phase
        x = np.full(FRAMES, cx)
        bounces = [f for f in range(FRAMES) if phase[f] < 0.2 and (f == 0 or phase[f] <= phase[f - 1])
                   and (f == FRAMES - 1 or phase[f] < phase[f + 1])]
    else:
        x, y = np.full(FRAMES, cx), np.full(FRAMES, cy)
    return x, y, bounces


# ---------------------------------------------------------------------------------------------------------------
# Pictures


def shape_mask(shape: str, x: float, y: float) -> np.ndarray:
    """[HEIGHT, WIDTH] coverage in [0, 1] of the shape centred at (x, y), anti-aliased by 4x4 supersampling (over
    the shape's bounding box only)."""
    s, reach = 4, RADIUS + 2
    out = np.zeros((HEIGHT, WIDTH), np.float64)
    x0, x1 = max(int(x - reach), 0), min(int(x + reach) + 1, WIDTH)
    y0, y1 = max(int(y - reach), 0), min(int(y + reach) + 1, HEIGHT)
    if x0 >= x1 or y0 >= y1:
        return out
    yy, xx = np.mgrid[y0 * s:y1 * s, x0 * s:x1 * s]
    px, py = (xx + 0.5) / s - x, (yy + 0.5) / s - y
    if shape == "circle":
        inside = px * px + py * py <= RADIUS * RADIUS
    elif shape == "square":
        half = RADIUS * 0.9
        inside = (np.abs(px) <= half) & (np.abs(py) <= half)
    else:  # an upward triangle of the circle's extent
        top, bottom = -RADIUS, RADIUS * 0.8
        frac = (py - top) / (bottom - top)
        inside = (py >= top) & (py <= bottom) & (np.abs(px) <= frac * RADIUS * 1.1)
    out[y0:y1, x0:x1] = inside.reshape(y1 - y0, s, x1 - x0, s).mean(axis=(1, 3))
    return out


def render_frames(scene: Scene, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """[FRAMES, HEIGHT, WIDTH, 3] uint8."""
    bg = np.array(COLORS[scene.background], np.float32)
    fg = np.array(COLORS[scene.color], np.float32)
    frames = np.empty((FRAMES, HEIGHT, WIDTH, 3), np.uint8)
    for f in range(FRAMES):
        a = shape_mask(scene.shape, x[f], y[f])[..., None]
        frames[f] = np.round(bg * (1 - a) + fg * a).astype(np.uint8)
    return frames


# ---------------------------------------------------------------------------------------------------------------
# Sound


def pitch_of_height(y: np.ndarray) -> np.ndarray:
    """The tone's frequency for a centre at y (pixels, y down): LOW_HZ at the bottom edge to HIGH_HZ at the top,
    exponential in height."""
    height = 1.0 - np.clip(y / HEIGHT, 0.0, 1.0)
    return LOW_HZ * (HIGH_HZ / LOW_HZ) ** height


def render_audio(scene: Scene, y: np.ndarray, bounces: list[int], rng: np.random.Generator) -> np.ndarray:
    """[2, SAMPLES] float32 in [-1, 1]: the tone (its pitch interpolated per sample from the frames' heights, its
    phase continuous), clicks at the bounces; silence for a still object."""
    audio = np.zeros(SAMPLES, np.float64)
    if scene.motion != "still":
        frame_times = np.arange(FRAMES) / FPS
        times = np.arange(SAMPLES) / SAMPLE_RATE
        freq = np.interp(times, frame_times, pitch_of_height(y))
        phase = 2 * np.pi * np.cumsum(freq) / SAMPLE_RATE + rng.uniform(0, 2 * np.pi)
        fade = np.clip(np.minimum(times, times[-1] - times) / 0.01, 0, 1)  # 10 ms in and out: no edge clicks
        audio += 0.3 * np.sin(phase) * fade
        for f in bounces:
            start = round(f / FPS * SAMPLE_RATE)
            n = min(SAMPLE_RATE // 100, SAMPLES - start)  # a 10 ms decaying burst
            audio[start:start + n] += 0.6 * rng.uniform(-1, 1, n) * np.exp(-np.arange(n) / (n / 5))
    audio = np.clip(audio, -1, 1).astype(np.float32)
    return np.stack([audio, audio])


# ---------------------------------------------------------------------------------------------------------------
# Captions

_MOVES = {
    "left": ["moves to the left", "slides to the left", "glides from right to left", "travels leftward"],
    "right": ["moves to the right", "slides to the right", "glides from left to right", "travels rightward"],
    "up": ["moves up", "rises upward", "floats up", "climbs toward the top of the frame"],
    "down": ["moves down", "sinks downward", "falls toward the bottom of the frame", "drops down"],
    "bounce": ["bounces", "bounces on the floor", "bounces up and down", "hops along the bottom edge"],
    "still": ["stays still", "rests motionless", "sits still", "does not move"],
}
_SOUNDS = {
    "left": ["A steady tone plays.", "A constant hum accompanies it.", "A single tone holds its pitch."],
    "up": ["A tone rises in pitch as it climbs.", "The pitch of a tone goes up with it.", "A rising tone plays."],
    "down": ["A tone falls in pitch as it descends.", "The pitch of a tone drops with it.", "A falling tone plays."],
    "bounce": ["A click sounds at each bounce.", "Each landing makes a sharp click over a wavering tone.",
               "Clicks mark every bounce."],
    "still": ["There is silence.", "No sound is heard.", "The scene is silent."],
}
_SOUNDS["right"] = _SOUNDS["left"]
_OPENINGS = ["A {color} {shape} {move} across a plain {background} background.",
             "On a flat {background} background, a {color} {shape} {move}.",
             "A {color} {shape} {move} in front of a solid {background} backdrop.",
             "The video shows a {color} {shape} that {move} over an empty {background} background."]


def caption(scene: Scene, variant: int) -> str:
    """One of the scene's paraphrases (variant modulo their count): a sentence on the picture, one on the sound."""
    opening = _OPENINGS[variant % len(_OPENINGS)]
    move = _MOVES[scene.motion][(variant // len(_OPENINGS)) % len(_MOVES[scene.motion])]
    sound = _SOUNDS[scene.motion][variant % len(_SOUNDS[scene.motion])]
    return opening.format(color=scene.color, shape=scene.shape, move=move, background=scene.background) + " " + sound


def parse_prompt(prompt: str) -> Scene | None:
    """The scene a prompt of this world names (its first color word is the object's, the one before "background" or
    "backdrop" the background's; a motion phrase of any paraphrase); None when it names no full scene."""
    words = prompt.lower().replace(",", " ").replace(".", " ").split()
    colors = [w for w in words if w in COLORS]
    shapes = [w for w in words if w in SHAPES]
    background = None
    for i, w in enumerate(words):
        if w in ("background", "backdrop") and i > 0:
            previous = [c for c in words[:i] if c in COLORS]
            background = previous[-1] if previous else None
    text = " ".join(words)
    motion = next((m for m, phrases in _MOVES.items() if any(p in text for p in phrases)), None)
    if not colors or not shapes or background is None or motion is None:
        return None
    color = next((c for c in colors if c != background), None)
    return Scene(shapes[0], color, background, motion) if color else None


# ---------------------------------------------------------------------------------------------------------------
# Clips


@dataclasses.dataclass
class Clip:
    scene: Scene
    frames: np.ndarray  # [FRAMES, HEIGHT, WIDTH, 3] uint8
    audio: np.ndarray  # [2, SAMPLES] float32
    caption: str


def make_clip(scene: Scene, seed: int) -> Clip:
    rng = np.random.default_rng([seed, *scene.key().encode()])
    x, y, bounces = trajectory(scene, rng)
    return Clip(scene, render_frames(scene, x, y), render_audio(scene, y, bounces, rng),
                caption(scene, int(rng.integers(0, 1 << 16))))


def write_png(path: Path, rgb: np.ndarray) -> None:
    """An 8-bit RGB PNG of `rgb` [H, W, 3] uint8 (no filter), e.g. a clip's first frame for image-to-video."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    height, width = rgb.shape[:2]
    rows = b"".join(b"\0" + rgb[r].tobytes() for r in range(height))
    Path(path).write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True,
                    help="path without extension: OUT.npz, OUT.txt (the caption) and OUT.png (the first frame)")
    args = ap.parse_args()
    scenes = [s for s in all_scenes() if not is_held_out(s)]
    rng = np.random.default_rng(args.seed)
    clip = make_clip(scenes[int(rng.integers(len(scenes)))], args.seed)
    np.savez_compressed(args.out + ".npz", frames=clip.frames, audio=clip.audio)
    Path(args.out + ".txt").write_text(clip.caption + "\n")
    write_png(Path(args.out + ".png"), clip.frames[0])
    print(clip.caption)


if __name__ == "__main__":
    main()
