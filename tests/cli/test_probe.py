"""`attn probe` on checkpoints written by `attn export-checkpoint` (no download).

The fast tests use the tiny model (vocabulary 32); `test_probe_large.py` runs a
2-layer model with TinyLlama-1.1B's real shapes. Each trace must have every
field of docs/trace-schema.md plus the probe's, the cached pass must match the
full pass (max |difference| <= the stated tolerance, argmax equal at every
position), probability rows must sum to 1 and sink_stats must be [L][Hq].
Every error exits 2 with one "attn:" line naming the problem.

Run: ATTN=build/native/native/attn /usr/bin/python3 tests/cli/test_probe.py
Standard library only.
"""

import json
import os
import shutil
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cli import AttnTestCase, add_rope_buffers, add_tensor, read_safetensors, shape_of, write_safetensors  # noqa: E402

# probe_logit_tolerance in core/pretrained/probe.hpp: cached vs full logits.
LOGIT_TOLERANCE = 1e-3
# Rows of float32 probabilities sum to 1 within a few ulps per term; check p3's bound.
ROW_SUM_TOLERANCE = 1e-5
TRACE_FIELDS = ["schema_version", "kind", "config", "weights", "tokens", "token_text", "positions", "layers", "logits",
                "logits_positions", "checks", "all_checks_passed", "cache_payload", "build", "sink_stats", "probe"]
PROBE_FIELDS = ["model", "prompt", "device", "dtype", "precision", "software", "shapes", "cache", "cached_vs_full", "sinks",
                "top_next", "continuation", "timing"]


def check_probe_trace(test, trace, generate, dtype="float32", device_kind="cpu", cache_dtype=None):
    """Asserts everything a probe trace promises; returns (L, Hq, T, V).
    The cache is in the weights' dtype on the CPU; the GPU's is float32 (cache_dtype)."""
    cache_dtype = cache_dtype or dtype
    for field in TRACE_FIELDS:
        test.assertIn(field, trace)
    for field in PROBE_FIELDS:
        test.assertIn(field, trace["probe"])
    test.assertEqual(trace["kind"], "attention-anatomy-trace")
    test.assertEqual(trace["schema_version"], 1)
    config, probe = trace["config"], trace["probe"]
    L, Hq, Hkv, dh, V = (config[k] for k in ["n_layers", "n_heads", "n_kv_heads", "head_dim", "vocab_size"])
    B, T = shape_of(trace["tokens"])
    test.assertEqual(B, 1)
    test.assertEqual(shape_of(trace["token_text"]), (1, T))
    test.assertTrue(all(isinstance(text, str) for text in trace["token_text"][0]))
    test.assertEqual(trace["positions"], list(range(T)))

    # Attention: [B][Hq][T][T], rows summing to 1, nothing after the query.
    test.assertEqual(len(trace["layers"]), L)
    for layer in trace["layers"]:
        probs = layer["probabilities"]
        test.assertEqual(shape_of(probs), (1, Hq, T, T))
        for head in probs[0]:
            for t, row in enumerate(head):
                test.assertAlmostEqual(sum(row), 1.0, delta=ROW_SUM_TOLERANCE)
                test.assertEqual(row[t + 1:], [0.0] * (T - t - 1), "attention to a future token")
    # Logits only for the last position (the rule for the viewer).
    test.assertEqual(trace["logits_positions"], [T - 1])
    test.assertEqual(shape_of(trace["logits"]), (1, 1, V))

    # Cached vs full.
    cvf = probe["cached_vs_full"]
    test.assertEqual(cvf["positions"], T)
    test.assertLessEqual(cvf["max_abs_diff"], LOGIT_TOLERANCE)
    test.assertEqual(cvf["tolerance"], LOGIT_TOLERANCE)
    test.assertEqual(cvf["argmax_agrees"], [True] * T)
    test.assertEqual(cvf["argmax_full"], cvf["argmax_cached"])
    test.assertIs(cvf["all_argmax_agree"], True)
    test.assertEqual([c["id"] for c in trace["checks"]], ["p1", "p2", "p3", "p4"])
    test.assertTrue(all(c["passed"] for c in trace["checks"]), trace["checks"])
    test.assertIs(trace["all_checks_passed"], True)

    # Sinks: [L][Hq], each a mean of probabilities.
    test.assertEqual(shape_of(trace["sink_stats"]), (L, Hq))
    for layer in trace["sink_stats"]:
        for value in layer:
            test.assertTrue(0.0 <= value <= 1.0)
    test.assertEqual(probe["sinks"]["queries_from"], T // 2)
    test.assertEqual(len(probe["sinks"]["layer_mean"]), L)

    # Shapes and cache sizes.
    test.assertEqual(probe["shapes"]["layer"]["q_proj"], [Hq * dh, config["hidden_size"]])
    test.assertEqual(probe["shapes"]["layer"]["k_proj"], [Hkv * dh, config["hidden_size"]])
    test.assertEqual(probe["shapes"]["layer"]["down_proj"], [config["hidden_size"], config["ffn_size"]])
    block = {step["name"]: step["shape"] for step in probe["shapes"]["block"]}
    test.assertEqual(block["scores"], [1, Hq, T, T])
    test.assertEqual(block["k_heads"], [1, Hkv, T, dh])
    test.assertEqual(block["logits"], [1, T, V])
    cache = probe["cache"]
    scalar = 4 if cache_dtype == "float32" else 2
    test.assertEqual(cache["dtype"], cache_dtype)
    test.assertEqual(cache["bytes_per_scalar"], scalar)
    test.assertEqual(cache["scalars_per_token"], 2 * L * Hkv * dh)
    test.assertEqual(cache["bytes_per_token"], 2 * L * Hkv * dh * scalar)
    test.assertEqual(cache["total_bytes"], cache["bytes_per_token"] * cache["tokens"])
    test.assertEqual(cache["layer_tensor_shape"], [1, Hkv, cache["tokens"], dh])

    # Next tokens and the continuation.
    top = probe["top_next"]
    test.assertEqual(len(top), min(5, V))
    test.assertEqual(top[0]["id"], cvf["argmax_full"][-1])
    probabilities = [t["probability"] for t in top]
    test.assertEqual(probabilities, sorted(probabilities, reverse=True))
    cont = probe["continuation"]
    test.assertEqual(cont["requested"], generate)
    if generate:
        test.assertEqual(cont["ids"][0], top[0]["id"])
        test.assertTrue(1 <= len(cont["ids"]) <= generate)
        test.assertEqual(len(cont["ids"]) == generate, not cont["stopped_at_eos"] or len(cont["ids"]) == generate)
        test.assertEqual(cache["tokens"], T + len(cont["ids"]) - 1)
    test.assertEqual(len(cont["token_text"]), len(cont["ids"]))

    # Provenance and timing.
    test.assertEqual(probe["dtype"], dtype)
    test.assertEqual(probe["device"]["kind"], device_kind)
    for field in ["project_version", "compiler", "xtensor", "nlohmann_json"]:
        test.assertTrue(probe["software"][field])
    timing = probe["timing"]
    for field in ["load_seconds", "prefill_seconds", "cached_prefill_seconds", "decode_seconds", "total_seconds"]:
        test.assertGreaterEqual(timing[field], 0)
    test.assertGreater(timing["peak_rss_bytes"], 0)
    test.assertEqual(len(timing["load_average"]), 3)
    return L, Hq, T, V


class Probe(AttnTestCase):
    def probe(self, checkpoint, *args):
        trace_path = self.path("trace.json")
        out = self.ok("probe", "--model", checkpoint, "--output", trace_path, *args)
        self.assertIn("Trace written to " + trace_path, out)
        with open(trace_path) as f:
            return out, json.load(f)

    def test_help(self):
        out = self.ok("probe", "--help")
        for option in ["--model", "--device", "--dtype", "--prompt", "--tokens", "--chat", "--generate", "--output", "--threads"]:
            self.assertIn(option, out)

    def test_tiny_trace(self):
        out, trace = self.probe(self.export("tiny"), "--generate", "3")
        L, Hq, T, V = check_probe_trace(self, trace, 3)
        self.assertEqual((L, Hq, V), (2, 4, 32))
        self.assertEqual(trace["tokens"][0][0], 1)  # BOS from config.json
        self.assertEqual(trace["probe"]["prompt"]["default"], True)
        self.assertEqual(trace["probe"]["precision"]["weights_stored"], "F32")
        self.assertEqual(trace["weights"], {"source": "checkpoint", "path": self.path("tiny")})
        for line in ["All 4 checks passed.", "attention sinks", "next token:", "continuation (3 of 3 tokens)", "peak RSS"]:
            self.assertIn(line, out)

    def test_tokens_and_threads_give_the_same_numbers(self):
        checkpoint = self.export("tiny")
        _, one = self.probe(checkpoint, "--tokens", "1,5,9,13,2,31,0,7", "--threads", "1", "--generate", "4")
        _, two = self.probe(checkpoint, "--tokens", "1,5,9,13,2,31,0,7", "--threads", "2", "--generate", "4")
        check_probe_trace(self, one, 4)
        self.assertEqual(one["tokens"], [[1, 5, 9, 13, 2, 31, 0, 7]])
        self.assertEqual(one["probe"]["prompt"], {"source": "ids", "ids": "1,5,9,13,2,31,0,7"})
        self.assertEqual(one["logits"], two["logits"])
        self.assertEqual(one["layers"], two["layers"])
        self.assertEqual(one["probe"]["continuation"], two["probe"]["continuation"])
        self.assertEqual(two["probe"]["device"]["threads_used"], 2)

    def test_chat_template(self):
        _, trace = self.probe(self.export("tiny"), "--chat", "--prompt", "hi", "--generate", "0")
        check_probe_trace(self, trace, 0)
        ids = trace["tokens"][0]
        self.assertEqual(ids[0], 1)
        self.assertIn(2, ids[1:], "</s> after the user turn is the EOS id")
        self.assertEqual(trace["probe"]["prompt"]["chat"], True)

    def test_bfloat16_from_a_float32_file(self):
        _, trace = self.probe(self.export("tiny"), "--dtype", "bfloat16", "--generate", "2")
        check_probe_trace(self, trace, 2, dtype="bfloat16")
        precision = trace["probe"]["precision"]
        self.assertEqual(precision["weights_held"], "bfloat16")
        self.assertEqual(precision["weight_bytes_in_place"], 0)
        # The tiny model's matrices (tied): 32x32 embedding + 2 x (4 x 32x32 + 8x... ) in 2 bytes each.
        matrices = 32 * 32 + 2 * (32 * 32 + 16 * 32 * 2 + 32 * 32 + 3 * 96 * 32)
        self.assertEqual(precision["weight_bytes_converted"], 2 * matrices)

    def test_bfloat16_file_is_read_in_place(self):
        checkpoint = self.export("tiny-bf16", "--dtype", "bfloat16")
        for dtype in ["float32", "bfloat16"]:
            _, trace = self.probe(checkpoint, "--dtype", dtype, "--generate", "2")
            check_probe_trace(self, trace, 2, dtype=dtype)
            self.assertEqual(trace["probe"]["precision"]["weight_bytes_converted"], 0)
            self.assertEqual(trace["probe"]["precision"]["weights_stored"], "BF16")

    def test_sharded_checkpoint_gives_the_same_logits(self):
        checkpoint = self.export("tiny")
        _, single = self.probe(checkpoint, "--generate", "2")
        shard(os.path.join(checkpoint, "model.safetensors"), checkpoint)
        _, sharded = self.probe(checkpoint, "--generate", "2")
        self.assertEqual(sharded["probe"]["model"]["shards"], 2)
        self.assertEqual(single["logits"], sharded["logits"])


    def test_rope_buffers_are_ignored(self):
        # The rule of core/checkpoint/llama_tensors.hpp (is_ignored_tensor), the same for attn verify.
        checkpoint = self.export("tiny")
        _, plain = self.probe(checkpoint, "--generate", "2")
        add_rope_buffers(os.path.join(checkpoint, "model.safetensors"))
        _, with_buffers = self.probe(checkpoint, "--generate", "2")
        self.assertEqual(plain["logits"], with_buffers["logits"])
        self.assertEqual(plain["probe"]["continuation"], with_buffers["probe"]["continuation"])


def shard(model_path, directory):
    """Splits model.safetensors into two shards plus model.safetensors.index.json."""
    header, data = read_safetensors(model_path)
    names = sorted(name for name in header if name != "__metadata__")
    halves = [names[: len(names) // 2], names[len(names) // 2:]]
    weight_map = {}
    for i, part in enumerate(halves):
        file_name = "model-%05d-of-00002.safetensors" % (i + 1)
        new_header, chunks, offset = {}, [], 0
        for name in part:
            begin, end = header[name]["data_offsets"]
            new_header[name] = dict(header[name], data_offsets=[offset, offset + end - begin])
            chunks.append(data[begin:end])
            offset += end - begin
            weight_map[name] = file_name
        write_safetensors(os.path.join(directory, file_name), new_header, b"".join(chunks))
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)
    os.remove(model_path)
    return weight_map


class ProbeErrors(AttnTestCase):
    def setUp(self):
        super().setUp()
        self.checkpoint = self.export("tiny")
        self.config = os.path.join(self.checkpoint, "config.json")

    def probe_fails(self, *args_and_mentions, args=()):
        return self.fails(["probe", "--model", self.checkpoint, *args], *args_and_mentions)

    def edit_config(self, **changes):
        with open(self.config) as f:
            config = json.load(f)
        config.update(changes)
        with open(self.config, "w") as f:
            json.dump(config, f)

    def test_cuda_is_a_clear_error(self):
        # The native build has no CUDA (the cuda build's GPU probe is tested in tests/cuda/test_gpu_cli.py),
        # and the refusal comes before the checkpoint is read.
        for device, named in [("cuda", "cuda:0"), ("cuda:0", "cuda:0"), ("cuda:3", "cuda:3")]:
            line = self.fails(["probe", "--model", self.path("missing"), "--device", device], "no CUDA support")
            self.assertIn(named, line)

    def test_bad_devices(self):
        self.probe_fails("--device", "tpu", args=["--device", "tpu"])
        self.probe_fails("cuda:x", args=["--device", "cuda:x"])

    def test_bad_dtype(self):
        self.probe_fails("--dtype", "float16", args=["--dtype", "float16"])

    def test_prompt_and_tokens(self):
        self.probe_fails("--prompt", "--tokens", args=["--prompt", "hi", "--tokens", "1,2"])

    def test_chat_with_tokens(self):
        self.probe_fails("--chat", args=["--chat", "--tokens", "1,2"])

    def test_token_outside_vocabulary(self):
        self.probe_fails("32", "vocabulary", args=["--tokens", "1,32"])

    def test_generate_not_a_number(self):
        self.probe_fails("--generate", "many", args=["--generate", "many"])
        self.probe_fails("--generate", "-1", args=["--generate", "-1"])

    def test_threads_zero(self):
        self.probe_fails("--threads", args=["--threads", "0"])

    def test_prompt_too_long(self):
        self.probe_fails("256", args=["--tokens", ",".join(["5"] * 257)])

    def test_missing_model(self):
        self.fails(["probe", "--model", self.path("nowhere")], "nowhere", "does not exist")

    def test_model_required(self):
        self.fails(["probe"], "--model")

    def test_output_in_missing_directory(self):
        self.probe_fails("no-such-dir", args=["--output", self.path("no-such-dir", "t.json")])

    def test_no_tokenizer(self):
        os.remove(os.path.join(self.checkpoint, "tokenizer.json"))
        self.probe_fails("tokenizer.json", args=["--tokens", "1,2"])

    def test_tokenizer_not_json(self):
        with open(os.path.join(self.checkpoint, "tokenizer.json"), "w") as f:
            f.write("{nope")
        self.probe_fails("tokenizer.json", "JSON")

    def test_tokenizer_without_model(self):
        with open(os.path.join(self.checkpoint, "tokenizer.json"), "w") as f:
            json.dump({"version": "1.0"}, f)
        self.probe_fails("tokenizer.json", "model")

    def test_tokenizer_larger_than_vocabulary(self):
        self.edit_config(vocab_size=32)
        with open(os.path.join(self.checkpoint, "tokenizer.json")) as f:
            tokenizer = json.load(f)
        tokenizer["model"]["vocab"]["zz"] = 32
        with open(os.path.join(self.checkpoint, "tokenizer.json"), "w") as f:
            json.dump(tokenizer, f)
        self.probe_fails("33 pieces", "vocab_size 32")

    def test_bos_disagrees_with_tokenizer(self):
        self.edit_config(bos_token_id=5)
        self.probe_fails("bos_token_id", "<s>")

    def test_eos_outside_vocabulary(self):
        self.edit_config(eos_token_id=[2, 99])
        self.probe_fails("eos_token_id", "99")

    def test_eos_wrong_type(self):
        self.edit_config(eos_token_id="2")
        self.probe_fails("eos_token_id")

    def test_untied_needs_lm_head(self):
        self.edit_config(tie_word_embeddings=False)
        self.probe_fails("lm_head.weight")

    def test_rope_scaling_unsupported(self):
        self.edit_config(rope_scaling={"type": "linear", "factor": 2.0})
        self.probe_fails("rope_scaling")

    def test_shape_against_config(self):
        self.edit_config(num_key_value_heads=4)  # the k_proj tensors have 2 heads of 8
        self.probe_fails("k_proj", "[16, 32]", "[32, 32]")

    def test_unknown_tensor_is_named(self):
        model = os.path.join(self.checkpoint, "model.safetensors")
        add_rope_buffers(model)  # harmless, and not what is reported
        header, data = read_safetensors(model)
        for name in ["model.layers.0.self_attn.q_proj.bias", "model.layers.0.mlp.rotary_emb.inv_freq"]:
            write_safetensors(model, header, data)
            add_tensor(model, name, [0.0] * 4)
            self.probe_fails(name, "unexpected")

    def test_truncated_weights(self):
        path = os.path.join(self.checkpoint, "model.safetensors")
        with open(path, "rb") as f:
            blob = f.read()
        with open(path, "wb") as f:
            f.write(blob[:-100])
        self.probe_fails("model.safetensors", "truncated")

    def test_index_names_the_wrong_shard(self):
        weight_map = shard(os.path.join(self.checkpoint, "model.safetensors"), self.checkpoint)
        index_path = os.path.join(self.checkpoint, "model.safetensors.index.json")
        moved = next(name for name, file in weight_map.items() if file.startswith("model-00001"))
        weight_map[moved] = "model-00002-of-00002.safetensors"
        with open(index_path, "w") as f:
            json.dump({"weight_map": weight_map}, f)
        self.probe_fails(moved, "model-00002-of-00002.safetensors")

    def test_index_names_a_missing_shard(self):
        weight_map = shard(os.path.join(self.checkpoint, "model.safetensors"), self.checkpoint)
        os.remove(os.path.join(self.checkpoint, "model-00002-of-00002.safetensors"))
        self.probe_fails("model-00002-of-00002.safetensors")


if __name__ == "__main__":
    unittest.main(verbosity=2)
