"""llama2.c checkpoints in attn: the trained stories260K model from ../shared.

- Greedy decoding from BOS for 200 forward passes prints exactly llama2.c's
  published test expectation for this model (its test_all.py).
- With prompts, the prompt ids and the whole greedy continuation equal an
  independent NumPy reading of the same files (llama2c_numpy.py: run.c's
  tokenizer and forward, written from the published formats).
- attn verify --checkpoint takes the file, every check passes; the probe's
  cached-vs-full, row-sum and future-cell checks pass on it.
- Bad files (truncated, wrong magic or version, sizes that do not add up, dims
  that do not divide, a tokenizer shorter than the vocabulary, no tokenizer)
  exit 2 with one line naming the problem.
The data is read where it lies, ../shared/models/stories260K beside the project.
Without it the test fails with one line naming the folder, unless
ANATOMY_NO_SHARED_MODELS=1 says this clone has none (then: SKIPPED, exit 77).

Run: ATTN=build/native/native/attn /usr/bin/python3 tests/cli/test_llama2c.py
"""

import json
import os
import struct
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_cli import SANITIZED, AttnTestCase  # noqa: E402
import llama2c_numpy  # noqa: E402

SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "models", "stories260K"))
MODEL = os.path.join(SHARED, "stories260K.bin")
TOKENIZER = os.path.join(SHARED, "tok512.bin")

# llama2.c's test_all.py: `run stories260K.bin -z tok512.bin -t 0.0 -n 200`, its last newline stripped.
EXPECTED = ("Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a "
            "big, red ball. She wanted to play with it, but it was too high.\nLily's mom said, \"Lily, let's go to the "
            "park.\" Lily was sad and didn't know what to do. She said, \"I want to play with your ball, but I can't find "
            "it.\"\nLily was sad and didn't know what to do. She said, \"I'm sorry, Lily. I didn't know what to do.\"\n"
            "Lily didn't want to help her mom, so she")


class Llama2c(AttnTestCase):
    def probe(self, prompt, generate):
        out = self.path("trace.json")
        self.ok("probe", "--model", MODEL, "--tokenizer", TOKENIZER, "--prompt", prompt, "--generate", str(generate),
                "--output", out)
        with open(out) as f:
            return json.load(f)

    def test_greedy_from_bos_is_llama2c_published_output(self):
        trace = self.probe("", 200)  # BOS is the first input; 200 forward passes in all
        self.assertEqual(trace["tokens"], [[1]])
        self.assertEqual(trace["probe"]["continuation"]["text"], EXPECTED)
        self.assertTrue(trace["all_checks_passed"])

    def test_prompts_match_an_independent_numpy_llama2c(self):
        config, _ = llama2c_numpy.read_checkpoint(MODEL)
        pieces, scores = llama2c_numpy.read_tokenizer(TOKENIZER, config["vocab"])
        for prompt, generate in [("Once upon a time", 40), ("Lily and Ben went to the park. They saw", 60),
                                 ("The cat sat on the mat, é ü ☃ and 42!", 30)]:
            with self.subTest(prompt=prompt):
                trace = self.probe(prompt, generate)
                ids = llama2c_numpy.encode(prompt, pieces, scores)
                self.assertEqual(trace["tokens"][0], ids, "prompt ids differ from run.c's encoding")
                expected = llama2c_numpy.greedy(MODEL, ids, len(ids) - 1 + generate)
                self.assertEqual(trace["probe"]["continuation"]["ids"], expected)
                checks = {c["id"]: c for c in trace["checks"]}
                for id in ["p1", "p2", "p3", "p4"]:
                    self.assertTrue(checks[id]["passed"], checks[id])

    def test_the_numpy_reference_can_disagree(self):
        # A reference that is wrong by one step must not match: the comparison above can fail.
        config, _ = llama2c_numpy.read_checkpoint(MODEL)
        pieces, scores = llama2c_numpy.read_tokenizer(TOKENIZER, config["vocab"])
        ids = llama2c_numpy.encode("Once upon a time", pieces, scores)
        trace = self.probe("Once upon a time", 20)
        self.assertNotEqual(trace["probe"]["continuation"]["ids"], llama2c_numpy.greedy(MODEL, ids[:-1], len(ids) + 19))

    def test_head_patterns_match_numpy_and_say_what_the_model_is(self):
        # attn probe --head-patterns against the four scores computed here from the
        # NumPy run.c's own probabilities, written from their definitions (the mean weight
        # on one key over the stated queries), on the prompt and on the induction ids the
        # core chose (BOS + R random ids written twice).
        prompt = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park."
        out = self.path("patterns.json")
        self.ok("probe", "--model", MODEL, "--tokenizer", TOKENIZER, "--prompt", prompt, "--generate", "0",
                "--head-patterns", "--output", out)
        with open(out) as f:
            patterns = json.load(f)["probe"]["head_patterns"]
        text, repeated, R = patterns["text_ids"], patterns["induction_ids"], patterns["induction_length"]
        self.assertEqual(len(repeated), 2 * R + 1)
        self.assertEqual(repeated[1:R + 1], repeated[R + 1:])
        rows, rows_repeated = llama2c_numpy.attention(MODEL, text), llama2c_numpy.attention(MODEL, repeated)
        T = len(text)

        def mean(rows_lh, queries, key):
            return sum(float(rows_lh[t][key(t)]) for t in queries) / len(queries)

        expected = {
            "previous_token": lambda lh: mean(rows[lh[0]][lh[1]], range(1, T), lambda t: t - 1),
            "first_token": lambda lh: mean(rows[lh[0]][lh[1]], range(T // 2, T), lambda t: 0),
            "self": lambda lh: mean(rows[lh[0]][lh[1]], range(1, T), lambda t: t),
            "induction": lambda lh: mean(rows_repeated[lh[0]][lh[1]], range(R + 1, 2 * R + 1), lambda t: t - R + 1),
        }
        for pattern in patterns["patterns"]:
            worst = max(abs(score - expected[pattern["name"]]((l, h)))
                        for l, layer in enumerate(pattern["heads"]) for h, score in enumerate(layer))
            self.assertLess(worst, 1e-5, pattern["name"])
        # What the page says of stories260K rests on these: previous-token heads, no sink, no induction.
        showing = {p["name"]: p["showing"] for p in patterns["patterns"]}
        self.assertGreater(len(showing["previous_token"]), 0)
        self.assertEqual(showing["first_token"], [])
        self.assertEqual(showing["induction"], [])
        report = self.ok("probe", "--model", MODEL, "--tokenizer", TOKENIZER, "--prompt", prompt, "--generate", "0",
                         "--head-patterns")
        self.assertIn("heads showing it %d of 40" % len(showing["previous_token"]), report)

    def test_head_patterns_catch_an_off_by_one(self):
        # The same comparison fails when the reference reads the key one position off.
        out = self.path("patterns.json")
        self.ok("probe", "--model", MODEL, "--tokenizer", TOKENIZER, "--prompt", "Once upon a time, there was a cat.",
                "--generate", "0", "--head-patterns", "--output", out)
        with open(out) as f:
            patterns = json.load(f)["probe"]["head_patterns"]
        rows = llama2c_numpy.attention(MODEL, patterns["text_ids"])
        T = len(patterns["text_ids"])
        previous = patterns["patterns"][0]["heads"]
        self_off = max(abs(previous[l][h] - sum(float(rows[l][h][t][t]) for t in range(1, T)) / (T - 1))
                       for l in range(5) for h in range(8))
        self.assertGreater(self_off, 0.1)

    def test_verify_takes_the_file(self):
        out = self.ok("verify", "--checkpoint", MODEL, "--tokens", "1,403,407,261,378,300")
        self.assertIn("All 12 checks passed.", out)

    def test_exported_files_of_stories15m_shapes_in_both_versions(self):
        # Random weights with stories15M's shapes (2 of its 6 layers, to stay quick) and a
        # synthetic 32,000-piece tokenizer.bin: the reader, the tokenizer and the probe at
        # the larger models' sizes, against the NumPy run.c on the same files.
        for version in ["0", "1"]:
            with self.subTest(version=version):
                folder = self.path("s15-v" + version)
                self.ok("export-checkpoint", folder, "--config", "stories15m", "--layers", "2", "--format", "llama2c",
                        "--llama2c-version", version)
                model, tokenizer = os.path.join(folder, "model.bin"), os.path.join(folder, "tokenizer.bin")
                out = self.path("trace-%s.json" % version)
                prompt = "Once upon a time there was a cat"
                self.ok("probe", "--model", model, "--tokenizer", tokenizer, "--prompt", prompt, "--generate", "12",
                        "--output", out)
                with open(out) as f:
                    trace = json.load(f)
                self.assertEqual(trace["config"]["vocab_size"], 32000)
                self.assertEqual(trace["config"]["rope_pairing"], "interleaved")
                self.assertTrue(trace["all_checks_passed"])
                config, _ = llama2c_numpy.read_checkpoint(model)
                pieces, scores = llama2c_numpy.read_tokenizer(tokenizer, config["vocab"])
                ids = llama2c_numpy.encode(prompt, pieces, scores)
                self.assertEqual(trace["tokens"][0], ids)
                self.assertEqual(trace["probe"]["continuation"]["ids"], llama2c_numpy.greedy(model, ids, len(ids) - 1 + 12))
                if SANITIZED:
                    # 7 s a version at these sizes under the sanitizer build, which verifies a
                    # llama2c file in test_verify_takes_the_file; the native pass runs this one.
                    continue
                # stories15M's 6 query heads each have a KV head of their own: h2 (heads sharing a KV head
                # attend differently) has nothing to compare and is left out.
                table = self.ok("verify", "--checkpoint", model)
                self.assertIn("All 11 checks passed.", table)
                self.assertNotIn("\nh2 ", table)

    def test_export_refuses_what_llama2c_cannot_hold(self):
        self.fails(["export-checkpoint", self.path("x"), "--config", "tiny", "--format", "llama2c"], "interleaved")
        self.fails(["export-checkpoint", self.path("x"), "--config", "stories260k", "--format", "gguf"], "gguf")
        self.fails(["export-checkpoint", self.path("x"), "--config", "stories260k", "--format", "llama2c",
                    "--dtype", "bfloat16"], "float32")

    # --- bad input ---
    def write(self, name, data):
        path = self.path(name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def model_bytes(self):
        with open(MODEL, "rb") as f:
            return f.read()

    def test_bad_files_are_named(self):
        data = self.model_bytes()
        self.fails(["probe", "--model", self.write("short.bin", data[:20]), "--tokenizer", TOKENIZER], "short.bin", "header")
        self.fails(["probe", "--model", self.write("cut.bin", data[:-4]), "--tokenizer", TOKENIZER], "cut.bin", "implies")
        self.fails(["probe", "--model", self.write("long.bin", data + b"\0\0\0\0"), "--tokenizer", TOKENIZER], "implies")
        v3 = struct.pack("<Ii", 0x616B3432, 3) + bytes(248)
        self.fails(["probe", "--model", self.write("v3.bin", v3), "--tokenizer", TOKENIZER], "version 3")
        v2 = struct.pack("<Ii", 0x616B3432, 2) + bytes(248)
        self.fails(["verify", "--checkpoint", self.write("v2.bin", v2)], "version 2")
        odd = struct.pack("<7i", 63, 172, 5, 8, 4, 512, 512) + data[28:]
        self.fails(["probe", "--model", self.write("odd.bin", odd), "--tokenizer", TOKENIZER], "dim 63", "n_heads 8")
        groups = struct.pack("<7i", 64, 172, 5, 8, 3, 512, 512) + data[28:]
        self.fails(["probe", "--model", self.write("groups.bin", groups), "--tokenizer", TOKENIZER], "n_kv_heads 3")
        zero = struct.pack("<7i", 64, 172, 0, 8, 4, 512, 512) + data[28:]
        self.fails(["probe", "--model", self.write("zero.bin", zero), "--tokenizer", TOKENIZER], "n_layers")

    def test_bad_tokenizers_are_named(self):
        with open(TOKENIZER, "rb") as f:
            tok = f.read()
        self.fails(["probe", "--model", MODEL, "--tokenizer", self.write("tok.bin", tok[: len(tok) // 2])], "tok.bin", "ends at piece")
        self.fails(["probe", "--model", MODEL], "--tokenizer")
        self.fails(["probe", "--model", MODEL, "--tokenizer", self.path("nowhere.bin")], "nowhere.bin", "does not exist")


def main():
    if not os.path.isfile(MODEL) or not os.path.isfile(TOKENIZER):
        if os.environ.get("ANATOMY_NO_SHARED_MODELS") == "1":
            print("SKIPPED: ANATOMY_NO_SHARED_MODELS=1 and %s is not there" % SHARED)
            return 77
        print("%s (stories260K.bin, tok512.bin) is missing: it is read where it lies beside the project; "
              "set ANATOMY_NO_SHARED_MODELS=1 to skip this test in a clone without it" % SHARED, file=sys.stderr)
        return 1
    program = unittest.main(exit=False, verbosity=1)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
