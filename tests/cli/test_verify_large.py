"""`attn verify` on TinyLlama-1.1B's preset: random weights at its full size.

With two tokens, a batch of 1, every check passes: h2 (query heads sharing a KV
head differ) compares its 616 pairs of heads on a batch of its own, 8 sequences of
the 2 tokens, where the one row of two keys the tokens give would bring some pair
within its bound. About 40 core-seconds and 4.4 GB of memory (the float32
weights); ctest label "large".

Run: ATTN=build/native/native/attn /usr/bin/python3 tests/cli/test_verify_large.py
"""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cli import AttnTestCase  # noqa: E402


class VerifyTinyLlama(AttnTestCase):
    def test_two_tokens_pass_every_check(self):
        out = self.ok("verify", "--config", "tinyllama-1.1b", "--tokens", "1,2", "--batch", "1")
        self.assertIn("All 12 checks passed.", out)
        h2 = re.search(r"^h2 +shared_kv_heads_differ +(\S+) +> 1e-03 +PASS +(.*)$", out, re.M)
        self.assertIsNotNone(h2, out)
        self.assertGreater(float(h2.group(1)), 1e-2)
        self.assertIn("on a batch of its own: 8 sequences of 2 tokens", h2.group(2))


if __name__ == "__main__":
    unittest.main(verbosity=2)
