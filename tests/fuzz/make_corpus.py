#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/): small valid inputs of each format, so that
fuzzing starts from files the readers accept, and a few near misses. Standard library only (the media seeds are
made with the ffmpeg program where there is one); deterministic.

    python3 tests/fuzz/make_corpus.py
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent / "corpus"
REPO = Path(__file__).resolve().parents[2]


def safetensors(tensors: dict[str, tuple[str, list[int], bytes]], metadata: dict[str, str] | None = None) -> bytes:
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def f32(values: list[float]) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


# GGUF v3 (ggml/docs/gguf.md): value types 4 u32, 5 i32, 6 f32, 7 bool, 8 string, 9 array.
def gguf_string(s: str) -> bytes:
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_value(v) -> bytes:
    if isinstance(v, bool):
        return struct.pack("<I", 7) + struct.pack("<?", v)
    if isinstance(v, int):
        return struct.pack("<I", 4) + struct.pack("<I", v)
    if isinstance(v, float):
        return struct.pack("<I", 6) + struct.pack("<f", v)
    if isinstance(v, str):
        return struct.pack("<I", 8) + gguf_string(v)
    if isinstance(v, list):
        inner = v[0]
        if isinstance(inner, str):
            return struct.pack("<IIQ", 9, 8, len(v)) + b"".join(gguf_string(x) for x in v)
        if isinstance(inner, float):
            return struct.pack("<IIQ", 9, 6, len(v)) + b"".join(struct.pack("<f", x) for x in v)
        return struct.pack("<IIQ", 9, 5, len(v)) + b"".join(struct.pack("<i", x) for x in v)
    raise TypeError(v)


def gguf(metadata: dict, tensors: dict[str, tuple[int, list[int], bytes]]) -> bytes:
    """tensors: name -> (ggml type, ne (innermost first), data)."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for k, v in metadata.items():
        out += gguf_string(k) + gguf_value(v)
    offset, datas = 0, []
    for name, (ggml_type, ne, raw) in tensors.items():
        out += gguf_string(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne)
        out += struct.pack("<IQ", ggml_type, offset)
        datas.append(raw + b"\0" * (-len(raw) % 32))
        offset += len(datas[-1])
    out += b"\0" * (-len(out) % 32)
    return out + b"".join(datas)


def png(w: int, h: int) -> bytes:
    raw = b"".join(b"\0" + bytes((x * 37 + y * 11 + c * 5) % 256 for x in range(w) for c in range(3)) for y in range(h))

    def chunk(t: bytes, d: bytes) -> bytes:
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def bmp(w: int, h: int) -> bytes:
    row = b"".join(bytes(((x * 9) % 256, (x * 3) % 256, 128)) for x in range(w))
    row += b"\0" * (-len(row) % 4)
    pixels = row * h
    return (b"BM" + struct.pack("<IHHI", 54 + len(pixels), 0, 0, 54)
            + struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(pixels), 2835, 2835, 0, 0) + pixels)


def write(target: str, name: str, data: bytes | str) -> None:
    d = ROOT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data.encode() if isinstance(data, str) else data)


def media_seeds() -> None:
    """Tiny clips of the containers and codecs users give (3 frames of 32x32, a tenth of a second of tone), made with
    the ffmpeg program; skipped where it is missing (the committed seeds stay)."""
    if shutil.which("ffmpeg") is None:
        print("make_corpus: no ffmpeg program; media seeds left as they are")
        return
    video = ["-f", "lavfi", "-i", "testsrc=size=32x32:rate=24:duration=0.125"]
    audio = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=16000:duration=0.1"]
    clips = {
        "h264_aac.mp4": video + audio + ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-b:a", "16k"],
        "ffv1_flac.mkv": video + audio + ["-c:v", "ffv1", "-c:a", "flac"],
        "mjpeg_pcm.avi": video + audio + ["-c:v", "mjpeg", "-c:a", "pcm_s16le"],
        "vp9_opus.webm": video + ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=0.1",
                                  "-c:v", "libvpx-vp9", "-deadline", "realtime", "-c:a", "libopus", "-b:a", "8k"],
        "png.mov": video + ["-c:v", "png"],
        "tone.wav": audio + ["-c:a", "pcm_s16le"],
        "tone_mono.mp3": audio + ["-c:a", "libmp3lame", "-b:a", "8k"],
        "tone.ogg": audio + ["-c:a", "libvorbis"],
    }
    d = ROOT / "media"
    d.mkdir(parents=True, exist_ok=True)
    # A playlist naming another file: refused (io/ffmpeg_util.h kReadableFormats), never followed.
    write("media", "playlist.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nh264_aac.mp4\n#EXT-X-ENDLIST\n")
    for name, args in clips.items():
        out = d / name
        if subprocess.run(["ffmpeg", "-v", "error", "-y", *args, "-shortest", str(out)]).returncode != 0:
            print(f"make_corpus: ffmpeg could not make {name}; skipped")
            out.unlink(missing_ok=True)


def main() -> None:
    write("safetensors", "two_tensors", safetensors(
        {"a": ("F32", [2, 3], f32([1, 2, 3, 4, 5, 6])), "b": ("BF16", [4], b"\x80\x3f" * 4)}, {"format": "pt"}))
    write("safetensors", "empty_header", struct.pack("<Q", 2) + b"{}")
    write("safetensors", "all_dtypes", safetensors({
        "f16": ("F16", [2], b"\x00\x3c" * 2), "i64": ("I64", [1], struct.pack("<q", 7)),
        "u8": ("U8", [3], b"\x01\x02\x03"), "f8": ("F8_E4M3", [2], b"\x38\x40"), "i32": ("I32", [1], b"\0" * 4)}))

    vocab = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>", "\n", "a", "b", "ab", "\u2581",
             "\u2581ab", "<0x41>"]
    gemma_meta = {
        "general.architecture": "gemma3", "gemma3.embedding_length": 8, "gemma3.feed_forward_length": 16,
        "gemma3.block_count": 1, "gemma3.attention.head_count": 2, "gemma3.attention.head_count_kv": 1,
        "gemma3.attention.key_length": 4, "gemma3.attention.layer_norm_rms_epsilon": 1e-6,
        "gemma3.attention.sliding_window": 4, "gemma3.context_length": 64,
        "tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": vocab,
        "tokenizer.ggml.scores": [0.0] * len(vocab), "tokenizer.ggml.token_type": [3, 3, 3, 2] + [1] * (len(vocab) - 4),
        "tokenizer.ggml.bos_token_id": 2, "tokenizer.ggml.eos_token_id": 1, "tokenizer.ggml.padding_token_id": 0,
    }
    write("gguf", "gemma_like", gguf(gemma_meta, {
        "token_embd.weight": (0, [8, len(vocab)], f32([0.01 * i for i in range(8 * len(vocab))])),
        "q8": (8, [32, 1], struct.pack("<e", 0.5) + bytes(range(32))),
        "output_norm.weight": (0, [8], f32([1.0] * 8))}))
    write("gguf", "mmproj_like", gguf({
        "general.architecture": "clip", "clip.projector_type": "gemma3", "clip.vision.image_size": 28,
        "clip.vision.patch_size": 14, "clip.vision.embedding_length": 4, "clip.vision.feed_forward_length": 8,
        "clip.vision.projection_dim": 8, "clip.vision.block_count": 1, "clip.vision.attention.head_count": 2,
        "clip.vision.attention.layer_norm_epsilon": 1e-6, "clip.vision.projector.scale_factor": 2}, {}))
    write("gguf", "header_only", b"GGUF" + struct.pack("<IQQ", 3, 0, 0))

    for path in sorted((REPO / "tests/golden/text").glob("*/config.json")):
        write("json_config", path.parent.name + ".json", path.read_bytes())
    manifest = json.loads((REPO / "tests/golden/dit/ltx23_av/manifest.json").read_text())
    weights = REPO / "tests/golden/dit/ltx23_av" / manifest["weights"]
    raw = weights.read_bytes()
    header = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
    if "config" in header.get("__metadata__", {}):
        write("json_config", "ltx23_checkpoint_config.json", header["__metadata__"]["config"])
    write("json_config", "not_an_object.json", "[1, 2, {\"text_config\": null}]")

    for i, text in enumerate(["a red fox in fresh snow", "<start_of_turn>user\nhi<end_of_turn>\n", "\u00e9\u00e8 \U0001F98A",
                              "\xff\xfe invalid \xc3", "  \t\n\n\n\n  "]):
        write("tokenizer", f"text_{i}", text.encode("utf-8", "surrogateescape") if "\xff" not in text
              else b"\xff\xfe invalid \xc3")

    tok = {"normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
           "added_tokens": [{"id": 0, "content": "<pad>", "special": True, "normalized": False},
                            {"id": 1, "content": "<eos>", "special": True, "normalized": False},
                            {"id": 2, "content": "<bos>", "special": True, "normalized": False},
                            {"id": 3, "content": "<unk>", "special": True, "normalized": False}],
           "model": {"type": "BPE", "byte_fallback": True, "fuse_unk": True,
                     "vocab": {"<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3, "a": 4, "b": 5, "\u2581": 6, "ab": 7,
                               "<0x41>": 8},
                     "merges": ["a b", "\u2581 ab"]}}
    write("tokenizer_json", "tiny_bpe.json", json.dumps(tok))

    write("image", "rgb_8x6.png", png(8, 6))
    write("image", "rgb_5x3.bmp", bmp(5, 3))

    media_seeds()

    write("noise_record", "two_draws", safetensors(
        {"noise.0000": ("F32", [1, 4], f32([0.1, -0.2, 0.3, 1.5])), "noise.0001": ("F32", [2], f32([0.5, 0.25]))},
        {"format": "pt"}))

    lora = {}
    for b in range(2):
        for m, (out, inp) in {"attn1.to_q": (32, 32), "ff.net.0.proj": (128, 32)}.items():
            key = f"diffusion_model.transformer_blocks.{b}.{m}"
            lora[key + ".lora_A.weight"] = ("F32", [4, inp], f32([0.01] * (4 * inp)))
            lora[key + ".lora_B.weight"] = ("F32", [out, 4], f32([0.02] * (out * 4)))
    write("lora", "official_two_blocks", safetensors(lora))
    write("lora", "kohya_alpha", safetensors({
        "lora_unet_transformer_blocks_0_attn1_to_k.lora_down.weight": ("F32", [2, 32], f32([0.1] * 64)),
        "lora_unet_transformer_blocks_0_attn1_to_k.lora_up.weight": ("F32", [32, 2], f32([0.1] * 64)),
        "lora_unet_transformer_blocks_0_attn1_to_k.alpha": ("F32", [], f32([1.0]))}))
    write("lora", "peft_metadata", safetensors({
        "base_model.model.transformer_blocks.0.attn1.to_q.lora_A.weight": ("F32", [2, 32], f32([0.1] * 64)),
        "base_model.model.transformer_blocks.0.attn1.to_q.lora_B.weight": ("F32", [32, 2], f32([0.1] * 64))},
        {"lora_adapter_metadata": '{"lora_alpha": 8, "r": 4}'}))

    write("request", "zeros", bytes(64))
    write("request", "defaults_like", struct.pack("<qqqBd", 768, 512, 121, 3, 24.0) + bytes(40))
    write("request", "ones", b"\x01" * 96)

    small = {"prompt": "a red fox", "size": "64x64", "frames": 9, "steps": 2, "seed": 7}
    write("server_request", "small.json", json.dumps(small))
    write("server_request", "full.json", json.dumps({
        **small, "model": "ltx-2.3", "negative_prompt": "blurry", "fps": 24, "batch": 2, "mode": "one_stage",
        "sampler": "res2s", "enhance_prompt": False, "video_guidance": {"cfg": 3.0, "stg": 1.0, "stg_blocks": [1]},
        "audio_guidance": {"cfg": 7.0}, "images": [{"data": "iVBORw0KGgo=", "frame": 0, "strength": 0.5}]}))
    write("server_request", "seconds.json", json.dumps({"prompt": "x", "seconds": 1.5, "size": "96x64"}))


if __name__ == "__main__":
    main()
