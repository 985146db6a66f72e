"""In a build without CUDA (the native preset), asking for a GPU is refused in
one clear line with exit status 2: attn verify --device cuda[:N] and
attn bench attention | decode, and attn probe --device cuda (before it reads
the checkpoint). Standard library only.
Run: ATTN=build/native/native/attn /usr/bin/python3 tests/cli/test_cuda_refused.py
"""

import os
import subprocess
import sys

ATTN = os.environ.get("ATTN", "build/native/native/attn")

for args in (["verify", "--device", "cuda"], ["verify", "--device", "cuda:1"],
             ["bench", "attention", "--device", "cuda"], ["bench", "decode"],
             ["probe", "--model", "no-such-folder", "--device", "cuda"]):
    result = subprocess.run([ATTN, *args], capture_output=True, text=True, timeout=60)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (args, result.returncode, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("attn: ") and "no CUDA support" in lines[0], (args, result.stderr)
    assert result.stdout == "", (args, result.stdout)
print("cuda_refused: every GPU request refused in one line")
