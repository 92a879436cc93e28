# Writes python_written.safetensors with the official safetensors package, so the C++ reader is checked against
# a file it did not write. Run: .venv/bin/python tests/io/data/make_python_written.py
import pathlib

import torch
from safetensors.torch import save_file

out = pathlib.Path(__file__).with_name("python_written.safetensors")
tensors = {
    "a.f32": torch.arange(6, dtype=torch.float32).reshape(2, 3) * 0.5 - 1,
    "b.bf16": torch.tensor([[1.0, -2.0], [0.375, 1024.0]], dtype=torch.bfloat16),
    "c.f16": torch.tensor([0.5, -0.25, 65504.0], dtype=torch.float16),
    "d.i64": torch.tensor([-(2**40), 3], dtype=torch.int64),
    "e.i32": torch.tensor([[7], [-9]], dtype=torch.int32),
    "f.u8": torch.tensor([0, 255, 17], dtype=torch.uint8),
}
save_file(tensors, str(out), metadata={"format": "pt", "note": "ltx test"})
