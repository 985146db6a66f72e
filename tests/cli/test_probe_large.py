"""`attn probe` on a checkpoint with TinyLlama-1.1B's real shapes and 2 layers.

`attn export-checkpoint --config tinyllama-1.1b --layers 2 --dtype bfloat16`
writes 438 MB (random weights, vocabulary 32,000, a synthetic tokenizer.json)
into a temporary folder, deleted afterwards. The probe runs on it in bfloat16
(read in place) and in float32 (the same file widened row by row), with the
checks of test_probe.check_probe_trace plus TinyLlama's exact shapes and cache
sizes. About 40 s on two busy cores; ctest label "large".

Run: ATTN=build/native/native/attn /usr/bin/python3 tests/cli/test_probe_large.py
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cli import AttnTestCase  # noqa: E402
from test_probe import check_probe_trace  # noqa: E402

PROMPT = "The cache keeps the keys and values of every earlier token."
D, Hq, Hkv, dh, F, V, L = 2048, 32, 4, 64, 5632, 32000, 2


class ProbeTinyLlamaShapes(AttnTestCase):
    def test_two_layers_of_tinyllama(self):
        checkpoint = self.export("tinyllama-2", "--config", "tinyllama-1.1b", "--layers", "2", "--dtype", "bfloat16")
        size = os.path.getsize(os.path.join(checkpoint, "model.safetensors"))
        params = 2 * V * D + L * (2 * D + D * Hq * dh + 2 * D * Hkv * dh + Hq * dh * D + 3 * D * F) + D
        self.assertGreater(size, 2 * params)  # 2 bytes each plus the header
        with open(os.path.join(checkpoint, "tokenizer.json")) as f:
            self.assertEqual(len(json.load(f)["model"]["vocab"]), V)

        for dtype in ["bfloat16", "float32"]:
            trace_path = self.path("trace-%s.json" % dtype)
            out = self.ok("probe", "--model", checkpoint, "--dtype", dtype, "--prompt", PROMPT, "--generate", "4",
                          "--output", trace_path)
            with open(trace_path) as f:
                trace = json.load(f)
            layers, heads, T, vocab = check_probe_trace(self, trace, 4, dtype=dtype)
            self.assertEqual((layers, heads, vocab), (L, Hq, V))
            self.assertGreaterEqual(T, 10)
            probe = trace["probe"]
            self.assertEqual(probe["shapes"]["layer"], {
                "input_layernorm": [D], "post_attention_layernorm": [D],
                "q_proj": [Hq * dh, D], "k_proj": [Hkv * dh, D], "v_proj": [Hkv * dh, D], "o_proj": [D, Hq * dh],
                "gate_proj": [F, D], "up_proj": [F, D], "down_proj": [D, F]})
            self.assertEqual(probe["shapes"]["embed_tokens"], [V, D])
            self.assertEqual(probe["shapes"]["lm_head"], [V, D])
            scalar = 2 if dtype == "bfloat16" else 4
            self.assertEqual(probe["cache"]["bytes_per_token"], 2 * L * Hkv * dh * scalar)
            self.assertEqual(trace["cache_payload"]["scalars_per_token"], 2 * L * Hkv * dh)
            precision = probe["precision"]
            self.assertEqual(precision["weights_stored"], "BF16")
            self.assertEqual(precision["weight_bytes_converted"], 0)  # read in place either way
            self.assertEqual(precision["weight_bytes_in_place"], 2 * (2 * V * D + L * (D * Hq * dh + 2 * D * Hkv * dh + Hq * dh * D + 3 * D * F)))
            self.assertEqual(probe["cached_vs_full"]["max_abs_diff"], 0.0)  # same sums in the same order
            self.assertIn("All 4 checks passed.", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
