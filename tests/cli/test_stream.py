"""attn stream: a text decoded through a KV cache of W entries under each eviction policy.

- Against an independent NumPy decoder (written here with tests/diff/numpy_llama.py's
  layers, in float64): its cache holds keys before RoPE and rotates them by their slot
  at every step, as StreamingLLM's code does, where the core turns a moved key back by
  one position. Every policy's loss at every position agrees to 1e-5 nats (--dtype
  float64; float32, as the model runs, to 2e-4), on the model trained on Shakespeare
  (web/public/models/shakespeare).
- Sinks and window with no sinks gives the sliding window's losses, exactly (a window as
  long as the text giving keep_all's is a unit test: the command refuses such a window).
- The positions each policy reaches, against those the model was trained on, in the
  report's last line; a window past the trained positions is warned about on stderr.
- Bad input: sinks not fewer than the window, a text too short to evict, an unreadable
  model, a llama2.c file without its tokenizer: exit 2, one line.
"""

import json
import os
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "diff"))
from test_cli import REPO, AttnTestCase, run_attn  # noqa: E402
import numpy_llama as llama  # noqa: E402

SHAKESPEARE = os.path.join(REPO, "web", "public", "models", "shakespeare")
TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n"
        "First Citizen:\nYou are all resolved rather to die than to famish?\n\nAll:\nResolved. resolved.\n\n"
        "First Citizen:\nFirst, you know Caius Marcius is chief enemy to the people.\n")


def character_ids(text):
    """BOS, then one id per character, from the model's own tokenizer.json."""
    with open(os.path.join(SHAKESPEARE, "tokenizer.json")) as f:
        vocab = json.load(f)["model"]["vocab"]
    return [vocab["<s>"]] + [vocab[c] for c in text]


def layer_step(config, weights, layer, x, keys, values, position):
    """One token x [1, 1, D] through layer `layer`; keys and values are the cache's
    pre-RoPE rows [1, Hkv, S, dh] (this token's already appended), `position` its slot."""
    w = lambda part: weights["model.layers.%d.%s.weight" % (layer, part)]  # noqa: E731
    n_heads, n_kv = config["num_attention_heads"], config["num_key_value_heads"]
    theta, eps = config["rope_theta"], config["rms_norm_eps"]
    kv_head = llama.kv_head_of(n_heads, n_kv, ())
    h = llama.rmsnorm(x, w("input_layernorm"), eps, ())
    q = llama.rope(llama.split_heads(llama.project(h, w("self_attn.q_proj")), n_heads, ()), theta, False, position)
    rotated = llama.rope(keys, theta, False, 0)                       # every key at its slot 0 .. S - 1
    probs = llama.causal_softmax(llama.attention_scores(q, rotated, kv_head, ()), ())
    x = x + llama.project(llama.merge_heads(llama.attend(probs, values, kv_head), ()), w("self_attn.o_proj"))
    h = llama.rmsnorm(x, w("post_attention_layernorm"), eps, ())
    return x + llama.swiglu(h, w("mlp.gate_proj"), w("mlp.up_proj"), w("mlp.down_proj"))


def numpy_stream(config, weights, ids, policy, window, sinks):
    """The loss of each next token, decoding one at a time under `policy`."""
    n_kv, eps = config["num_key_value_heads"], config["rms_norm_eps"]
    layers = config["num_hidden_layers"]
    embed = weights["model.embed_tokens.weight"]
    keys = [None] * layers
    values = [None] * layers
    losses = []
    for t in range(len(ids) - 1):
        held = 0 if keys[0] is None else keys[0].shape[2]
        if policy != "keep_all" and held + 1 > window:  # evict one: the oldest, or the oldest after the sinks
            drop = sinks if policy == "sinks_and_window" else 0
            for l in range(layers):
                keys[l] = np.delete(keys[l], drop, axis=2)
                values[l] = np.delete(values[l], drop, axis=2)
        x = embed[[[ids[t]]]]                                           # [1, 1, D]
        for l in range(layers):
            w = lambda part: weights["model.layers.%d.%s.weight" % (l, part)]  # noqa: E731
            h = llama.rmsnorm(x, w("input_layernorm"), eps, ())
            k = llama.split_heads(llama.project(h, w("self_attn.k_proj")), n_kv, ())
            v = llama.split_heads(llama.project(h, w("self_attn.v_proj")), n_kv, ())
            keys[l] = k if keys[l] is None else np.concatenate([keys[l], k], axis=2)
            values[l] = v if values[l] is None else np.concatenate([values[l], v], axis=2)
            x = layer_step(config, weights, l, x, keys[l], values[l], keys[l].shape[2] - 1)
        logits = llama.project(llama.rmsnorm(x, weights["model.norm.weight"], eps, ()), embed)[0, 0]
        logits = logits - logits.max()
        losses.append(float(np.log(np.exp(logits).sum()) - logits[ids[t + 1]]))
    return losses


class Stream(AttnTestCase):
    def stream(self, *extra, text=TEXT):
        path = self.path("text.txt")
        with open(path, "w") as f:
            f.write(text)
        return json.loads(self.ok("stream", "--model", SHAKESPEARE, "--text", path, "--json", *extra))

    def test_every_policy_agrees_with_an_independent_numpy_decoder(self):
        report = self.stream("--window", "24", "--sinks", "2", "--length", "160", "--dtype", "float64")
        as_run = {p["policy"]: p["losses"] for p in self.stream("--window", "24", "--sinks", "2", "--length", "160")["policies"]}
        ids = character_ids(TEXT)[:160]
        self.assertEqual(report["tokens"], 160)
        self.assertEqual(report["first_eviction_at"], 24)
        config, weights = llama.read_checkpoint(SHAKESPEARE)
        weights = {name: w.astype(np.float64) for name, w in weights.items()}
        by_name = {p["policy"]: p for p in report["policies"]}
        for policy in ["keep_all", "sliding_window", "sinks_and_window"]:
            ours = by_name[policy]["losses"]
            theirs = numpy_stream(config, weights, ids, policy, 24, 2)
            worst = max(abs(a - b) for a, b in zip(ours, theirs))
            self.assertEqual(len(ours), len(theirs))
            self.assertLess(worst, 1e-5, "%s: |core - NumPy| up to %g nats" % (policy, worst))
            # In float32, as the model runs: the same to float32's rounding (keep_all's positions past 64 widen it).
            self.assertLess(max(abs(a - b) for a, b in zip(as_run[policy], theirs)), 2e-4, policy)
            mean = sum(theirs[24:]) / len(theirs[24:])
            self.assertAlmostEqual(by_name[policy]["mean_loss_after_first_eviction"], mean, delta=1e-5)
        # The reference: each prediction from a fresh pass over the last 24 characters.
        reference = by_name["recompute_window"]["losses"]
        for t in [0, 23, 24, 100, 158]:
            window = ids[max(0, t - 23):t + 1]
            cache = []
            dump = type("Dump", (), {"save": lambda self, name, x: setattr(self, name.replace(".", "_"), x)})()
            llama.forward(config, weights, np.array([window]), (), dump, cache)
            logits = dump.logits[0, -1] - dump.logits[0, -1].max()
            self.assertAlmostEqual(reference[t], float(np.log(np.exp(logits).sum()) - logits[ids[t + 1]]), delta=1e-5)
        # A broken decoder is caught: the NumPy sliding window that forgets to evict is keep_all.
        wrong = numpy_stream(config, weights, ids, "keep_all", 24, 2)
        self.assertGreater(max(abs(a - b) for a, b in zip(by_name["sliding_window"]["losses"], wrong)), 1e-3)

    def test_no_sinks_is_the_sliding_window(self):
        # (A window as long as the text, which the command refuses as evicting nothing, is keep_all
        # bit for bit: tests/unit/test_kv_eviction.cpp.)
        none = self.stream("--window", "16", "--sinks", "0", "--length", "80")
        by_name = {p["policy"]: p["losses"] for p in none["policies"]}
        self.assertEqual(by_name["sinks_and_window"], by_name["sliding_window"])
        self.assertNotEqual(by_name["sliding_window"], by_name["keep_all"])

    def test_generate_continues_under_each_policy(self):
        report = self.stream("--window", "16", "--sinks", "0", "--length", "80", "--generate", "12")
        conts = {p["policy"]: p["continuation"] for p in report["policies"]}
        self.assertEqual(sorted(conts), ["keep_all", "recompute_window", "sinks_and_window", "sliding_window"])
        for c in conts.values():
            self.assertEqual(len(c["ids"]), 12)
            self.assertEqual(c["text"], "".join(self.characters_of(c["ids"])))
        self.assertEqual(conts["sinks_and_window"], conts["sliding_window"])  # no sinks: the same cache

    def characters_of(self, ids):
        with open(os.path.join(SHAKESPEARE, "tokenizer.json")) as f:
            vocab = json.load(f)["model"]["vocab"]
        piece = {i: c for c, i in vocab.items()}
        return [piece[i] for i in ids]

    def test_the_report_names_each_policy(self):
        path = self.path("text.txt")
        with open(path, "w") as f:
            f.write(TEXT)
        out = self.ok("stream", "--model", SHAKESPEARE, "--text", path, "--window", "24", "--sinks", "1")
        for name in ["keep_all", "sliding_window", "sinks_and_window", "recompute_window", "nats/token", "first eviction"]:
            self.assertIn(name, out)

    def test_the_positions_each_policy_reaches_and_a_window_past_the_trained_ones(self):
        path = self.path("text.txt")
        with open(path, "w") as f:
            f.write(TEXT)
        with open(os.path.join(SHAKESPEARE, "config.json")) as f:
            trained = json.load(f)["max_position_embeddings"]  # positions 0 .. trained - 1
        length, generate = 200, 5
        # keep_all reads the text's tokens and every generated one but the last: positions 0 .. read - 1.
        read = length + generate - 1
        for window, windowed in [(trained, "stay within them (positions 0 to %d)" % (trained - 1)),
                                 (trained + 1, "reach position %d, past them too" % trained)]:
            with self.subTest(window=window):
                run = run_attn("stream", "--model", SHAKESPEARE, "--text", path, "--window", str(window),
                               "--length", str(length), "--generate", str(generate))
                self.assertEqual(run.returncode, 0, run.stderr)
                self.assertEqual(run.stdout.splitlines()[-1],
                                 "keep_all reaches position %d, past the positions the model was trained on (0 to %d); "
                                 "the windowed policies %s." % (read - 1, trained - 1, windowed))
                warning = ("attn: warning: the windowed policies (--window %d) reach %d positions, past the %d that '%s' "
                           "was trained on (max_position_embeddings or seq_len): beyond them its predictions degrade\n"
                           % (window, window, trained, SHAKESPEARE))
                self.assertEqual(run.stderr, warning if window > trained else "")

    def test_bad_input_exits_2_with_one_line(self):
        path = self.path("text.txt")
        with open(path, "w") as f:
            f.write(TEXT)
        self.fails(["stream", "--model", SHAKESPEARE, "--text", path, "--window", "4", "--sinks", "4"], "--window 4", "--sinks 4")
        self.fails(["stream", "--model", SHAKESPEARE, "--text", path, "--window", "400"], "evicts nothing", "--window")
        self.fails(["stream", "--model", self.path("nope"), "--text", path], "nope")
        self.fails(["stream", "--model", SHAKESPEARE, "--text", self.path("missing.txt")], "missing.txt")
        self.fails(["stream", "--model", SHAKESPEARE, "--text", path, "--window", "0"], "--window")
        self.fails(["stream", "--model", SHAKESPEARE, "--text", path, "--generate", "x"], "--generate")


if __name__ == "__main__":
    unittest.main()
