"""A NumPy Llama that plays the learner for `attn diff`'s tests.

It reads the Hugging Face folder `attn export-checkpoint` writes (config.json,
model.safetensors) with its own code, runs the forward pass of B sequences in
one go (no cache), and records every tensor of tools/anatomy_dump.py's table.
Each of MISTAKES switches on one known bug, so a test can check that `attn diff`
finds the operation it breaks and names it.

    python3 numpy_llama.py --checkpoint DIR --tokens 1,5,9[;2,7,3] --out FILE.npz|FILE.safetensors
                           [--dtype float64|float32] [--eps E] [--mistake NAME ...] [--only NAME,NAME]
                           [--cached N]   (the first N ids through a KV cache; the rest's tensors)
    python3 numpy_llama.py --self-check [--attn PATH]
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from anatomy_dump import AnatomyDump, write_safetensors  # noqa: E402


MISTAKES = {
    "rope_pairing_swapped": "RoPE rotates adjacent pairs (2i, 2i+1) instead of (i, i + dh/2)",
    "rope_on_v": "values are rotated by RoPE too before attention (the recorded v is the unrotated one)",
    "kv_head_modulo": "query head h reads KV head h % Hkv instead of h // (Hq / Hkv)",
    "mask_after_softmax": "softmax over all keys, then the future cells zeroed (rows no longer sum to 1)",
    "softmax_wrong_axis": "softmax over the query axis instead of the key axis (mask applied before)",
    "scale_missing": "scores not scaled by 1/sqrt(dh)",
    "scale_inv_d": "scores scaled by 1/dh instead of 1/sqrt(dh)",
    "rmsnorm_mean_subtracted": "every RMSNorm subtracts the mean first, like LayerNorm",
    "rmsnorm_eps_outside_sqrt": "every RMSNorm divides by sqrt(mean(x^2)) + eps instead of sqrt(mean(x^2) + eps)",
    "heads_reshape_without_transpose": "heads split by a bare reshape [B,T,H*dh] -> [B,H,T,dh] (merged by its inverse)",
    "weights_in_out": "q_proj and o_proj applied as x @ W instead of x @ W.T",
    # Visible only with a KV cache (run(..., cached=N)): the second pass's positions and mask.
    # Visible only with an untied checkpoint (export_untied): the head read from the wrong matrix.
    "head_tied_to_embedding": "logits from the embedding table where the checkpoint has its own lm_head",
    "positions_restart": "after the cache, RoPE positions start again at 0 instead of at the cache's length",
    "mask_not_shifted": "after the cache, the causal mask lets query t see keys s <= t instead of s <= t + cached",
}

# The first tensor, in the table's data-flow order, that each mistake changes
# (what self_check finds; attn diff should point at the same operation).
FIRST_CHANGED = {
    "rope_pairing_swapped": "layers.0.q_rope",
    "rope_on_v": "layers.0.heads",
    "kv_head_modulo": "layers.0.scores",
    "mask_after_softmax": "layers.0.probs",
    "softmax_wrong_axis": "layers.0.probs",
    "scale_missing": "layers.0.scores",
    "scale_inv_d": "layers.0.scores",
    "rmsnorm_mean_subtracted": "layers.0.attn_norm",
    "rmsnorm_eps_outside_sqrt": "layers.0.attn_norm",
    "heads_reshape_without_transpose": "layers.0.q",
    "weights_in_out": "layers.0.q",
    "head_tied_to_embedding": "logits",
    "positions_restart": "layers.0.q_rope",
    "mask_not_shifted": "layers.0.probs",
}

# The mistakes only a second pass after a KV cache shows, and the cache self_check and
# the tests use for them: the first CACHED ids of each sequence go through the cache first.
CACHE_MISTAKES = ("positions_restart", "mask_not_shifted")
CACHED = 3


# --- checkpoint ------------------------------------------------------------------
# safetensors: [u64 little-endian N][N bytes of JSON: name -> {dtype, shape,
# data_offsets [begin, end) counted from the end of the header}][raw data]

SAFETENSORS_DTYPES = {"F32": "<f4", "F64": "<f8"}


def read_safetensors(path):
    """{name: array of its stored shape and dtype} (F32 and F64 only)."""
    with open(path, "rb") as f:
        blob = f.read()
    (header_size,) = struct.unpack_from("<Q", blob, 0)
    header = json.loads(blob[8:8 + header_size])
    data = blob[8 + header_size:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] not in SAFETENSORS_DTYPES:
            raise ValueError("%s: %s is %s; this reader knows F32 and F64" % (path, name, entry["dtype"]))
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(data[begin:end], dtype=SAFETENSORS_DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return tensors


def read_checkpoint(folder, eps=None):
    """-> (config dict, weights dict). eps, when given, replaces config.json's rms_norm_eps."""
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    if eps is not None:
        config["rms_norm_eps"] = float(eps)
    config.setdefault("head_dim", config["hidden_size"] // config["num_attention_heads"])
    weights = read_safetensors(os.path.join(folder, "model.safetensors"))
    return config, weights


def export_untied(attn, folder, seed=7):
    """`attn export-checkpoint folder`, then an lm_head of its own (random, [V, D] float32)
    added to model.safetensors and tie_word_embeddings set false: an untied checkpoint."""
    subprocess.run([attn, "export-checkpoint", folder], check=True, stdout=subprocess.DEVNULL)
    path = os.path.join(folder, "model.safetensors")
    weights = read_safetensors(path)
    vocab, width = weights["model.embed_tokens.weight"].shape
    head = np.random.default_rng(seed).normal(0, 0.2, (vocab, width)).astype(np.float32)
    write_safetensors(path, {**weights, "lm_head.weight": head})
    config_path = os.path.join(folder, "config.json")
    with open(config_path) as f:
        config = json.load(f)
    config["tie_word_embeddings"] = False
    with open(config_path, "w") as f:
        json.dump(config, f, indent=2)
    return folder


def export_with_eps(attn, folder, eps):
    """`attn export-checkpoint folder`, then config.json's rms_norm_eps set to eps
    (None: left as exported), so the core and this model both read the new value."""
    subprocess.run([attn, "export-checkpoint", folder], check=True, stdout=subprocess.DEVNULL)
    if eps is not None:
        path = os.path.join(folder, "config.json")
        with open(path) as f:
            config = json.load(f)
        config["rms_norm_eps"] = float(eps)
        with open(path, "w") as f:
            json.dump(config, f, indent=2)
            f.write("\n")
    return folder


# --- operations --------------------------------------------------------------------

def rmsnorm(x, weight, eps, mistakes):
    """x: [B, T, D] -> x / sqrt(mean(x^2) + eps) * weight: [B, T, D]."""
    if "rmsnorm_mean_subtracted" in mistakes:
        x = x - x.mean(axis=-1, keepdims=True)
    mean_square = np.mean(x * x, axis=-1, keepdims=True)  # [B, T, 1]
    if "rmsnorm_eps_outside_sqrt" in mistakes:
        return x / (np.sqrt(mean_square) + eps) * weight
    return x / np.sqrt(mean_square + eps) * weight


def project(x, weight, in_out=False):
    """x: [B, T, in], weight: [out, in] (Hugging Face layout) -> x @ weight.T: [B, T, out].
    in_out: the mistake of reading the matrix as [in, out] (x @ weight; square only)."""
    return x @ weight if in_out else x @ weight.T


def split_heads(x, n_heads, mistakes):
    """x: [B, T, H*dh] -> [B, H, T, dh]."""
    batch, tokens, width = x.shape
    if "heads_reshape_without_transpose" in mistakes:
        return x.reshape(batch, n_heads, tokens, width // n_heads)
    return x.reshape(batch, tokens, n_heads, width // n_heads).transpose(0, 2, 1, 3)


def merge_heads(x, mistakes):
    """x: [B, H, T, dh] -> [B, T, H*dh]; the inverse of split_heads."""
    batch, n_heads, tokens, head_dim = x.shape
    if "heads_reshape_without_transpose" in mistakes:
        return x.reshape(batch, tokens, n_heads * head_dim)
    return x.transpose(0, 2, 1, 3).reshape(batch, tokens, n_heads * head_dim)


def rope(x, theta, interleaved, start=0):
    """x: [B, H, T, dh] at positions start .. start + T - 1 -> each channel pair rotated by
    position * theta^(-2i/dh). Hugging Face pairs channel i with i + dh/2; interleaved pairs 2i with 2i + 1."""
    tokens, head_dim = x.shape[2], x.shape[3]
    frequency = theta ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)  # [dh/2]
    positions = np.arange(start, start + tokens, dtype=np.float64)                   # [T]
    angle = positions[:, None] * frequency[None, :]                                  # [T, dh/2]
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    if interleaved:
        first, second = x[..., 0::2], x[..., 1::2]                                   # [B, H, T, dh/2]
    else:
        first, second = x[..., :head_dim // 2], x[..., head_dim // 2:]
    rotated_first = first * cos - second * sin
    rotated_second = first * sin + second * cos
    out = np.empty_like(x)
    if interleaved:
        out[..., 0::2], out[..., 1::2] = rotated_first, rotated_second
    else:
        out[..., :head_dim // 2], out[..., head_dim // 2:] = rotated_first, rotated_second
    return out


def kv_head_of(n_heads, n_kv_heads, mistakes):
    """GQA as an index: [Hq] -> the KV head each query head reads."""
    heads = np.arange(n_heads)
    if "kv_head_modulo" in mistakes:
        return heads % n_kv_heads
    return heads // (n_heads // n_kv_heads)


def attention_scores(q, k, kv_head, mistakes):
    """q: [B, Hq, T, dh], k: [B, Hkv, S, dh] -> q.k * scale: [B, Hq, T, S] (unmasked)."""
    head_dim = q.shape[-1]
    if "scale_missing" in mistakes:
        scale = 1.0
    elif "scale_inv_d" in mistakes:
        scale = 1.0 / head_dim
    else:
        scale = 1.0 / np.sqrt(head_dim)
    keys = k[:, kv_head]                                     # [B, Hq, S, dh]
    return (q @ keys.transpose(0, 1, 3, 2)) * q.dtype.type(scale)


def causal_softmax(scores, mistakes):
    """scores: [B, Hq, T, S] -> probabilities over the keys s <= t + S - T (the new queries
    follow the S - T cached keys); future cells 0."""
    tokens, keys = scores.shape[-2], scores.shape[-1]
    history = 0 if "mask_not_shifted" in mistakes else keys - tokens
    allowed = np.arange(keys)[None, :] <= np.arange(tokens)[:, None] + history   # [T, S]: causal
    axis = -2 if "softmax_wrong_axis" in mistakes else -1
    if "mask_after_softmax" in mistakes:
        masked = scores
    else:
        masked = np.where(allowed, scores, -np.inf)
    exps = np.exp(masked - masked.max(axis=axis, keepdims=True))
    probs = exps / exps.sum(axis=axis, keepdims=True)
    if "mask_after_softmax" in mistakes:
        probs = np.where(allowed, probs, 0)
    return probs


def attend(probs, v, kv_head):
    """probs: [B, Hq, T, S], v: [B, Hkv, S, dh] -> probs @ v per head: [B, Hq, T, dh]."""
    return probs @ v[:, kv_head]


def silu(x):
    return x / (1 + np.exp(-x))


def swiglu(x, w_gate, w_up, w_down):
    """x: [B, T, D] -> down(silu(gate(x)) * up(x)): [B, T, D]; the hidden is [B, T, F]."""
    return project(silu(project(x, w_gate)) * project(x, w_up), w_down)


# --- the model -----------------------------------------------------------------------

def forward(config, weights, tokens, mistakes, dump, cache):
    """tokens: [B, T] int ids following the rows already in cache (per layer: keys after RoPE
    and values, [B, Hkv, S - T, dh] each, appended to here); every tensor of the table is
    saved to dump, in data-flow order."""
    n_heads, n_kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    eps, theta = config["rms_norm_eps"], config["rope_theta"]
    interleaved = "rope_pairing_swapped" in mistakes
    in_out = "weights_in_out" in mistakes
    kv_head = kv_head_of(n_heads, n_kv_heads, mistakes)             # [Hq]
    embed = weights["model.embed_tokens.weight"]                     # [V, D]
    history = cache[0][0].shape[2] if cache else 0                   # S - T rows cached
    start = 0 if "positions_restart" in mistakes else history        # the new tokens' first position

    x = embed[tokens]                                                # [B, T, D]
    dump.save("embed", x)
    for l in range(config["num_hidden_layers"]):
        w = lambda part: weights["model.layers.%d.%s.weight" % (l, part)]  # noqa: E731
        at = lambda name: "layers.%d.%s" % (l, name)                        # noqa: E731

        h = rmsnorm(x, w("input_layernorm"), eps, mistakes)          # [B, T, D]
        dump.save(at("attn_norm"), h)
        q = split_heads(project(h, w("self_attn.q_proj"), in_out), n_heads, mistakes)   # [B, Hq, T, dh]
        k = split_heads(project(h, w("self_attn.k_proj")), n_kv_heads, mistakes)        # [B, Hkv, T, dh]
        v = split_heads(project(h, w("self_attn.v_proj")), n_kv_heads, mistakes)        # [B, Hkv, T, dh]
        dump.save(at("q"), q)
        dump.save(at("k"), k)
        dump.save(at("v"), v)
        q = rope(q, theta, interleaved, start)                       # [B, Hq, T, dh]
        k = rope(k, theta, interleaved, start)                       # [B, Hkv, T, dh]
        dump.save(at("q_rope"), q)
        dump.save(at("k_rope"), k)
        if "rope_on_v" in mistakes:
            v = rope(v, theta, interleaved, start)
        if len(cache) <= l:
            cache.append((k[:, :, :0], v[:, :, :0]))
        k = np.concatenate([cache[l][0], k], axis=2)                 # [B, Hkv, S, dh]
        v = np.concatenate([cache[l][1], v], axis=2)                 # [B, Hkv, S, dh]
        cache[l] = (k, v)
        scores = attention_scores(q, k, kv_head, mistakes)           # [B, Hq, T, S]
        dump.save(at("scores"), scores)
        probs = causal_softmax(scores, mistakes)                     # [B, Hq, T, S]
        dump.save(at("probs"), probs)
        heads = attend(probs, v, kv_head)                            # [B, Hq, T, dh]
        dump.save(at("heads"), heads)
        attn_out = project(merge_heads(heads, mistakes), w("self_attn.o_proj"), in_out)  # [B, T, D]
        dump.save(at("attn_out"), attn_out)
        x = x + attn_out                                             # [B, T, D]
        dump.save(at("resid_mid"), x)
        h = rmsnorm(x, w("post_attention_layernorm"), eps, mistakes)  # [B, T, D]
        dump.save(at("ffn_norm"), h)
        ffn_out = swiglu(h, w("mlp.gate_proj"), w("mlp.up_proj"), w("mlp.down_proj"))  # [B, T, D]
        dump.save(at("ffn_out"), ffn_out)
        x = x + ffn_out                                              # [B, T, D]
        dump.save(at("out"), x)
    h = rmsnorm(x, weights["model.norm.weight"], eps, mistakes)      # [B, T, D]
    dump.save("final_norm", h)
    # Tied embeddings: the output matrix is the embedding table unless a head is stored.
    head = embed if "head_tied_to_embedding" in mistakes else weights.get("lm_head.weight", embed)  # [V, D]
    logits = project(h, head)                                        # [B, T, V]
    dump.save("logits", logits)


def run(checkpoint_dir, token_rows, dtype="float64", mistakes=(), eps=None, cached=0):
    """token_rows: B lists of T ids -> {table name: ndarray of dtype}, in data-flow order.
    cached: the first `cached` ids of each row go through a KV cache first (their tensors
    are not kept); the tensors are those of the rest, T - cached queries over T keys."""
    unknown = set(mistakes) - set(MISTAKES)
    if unknown:
        raise ValueError("unknown mistake(s) %s; known: %s" % (", ".join(sorted(unknown)), ", ".join(MISTAKES)))
    config, weights = read_checkpoint(checkpoint_dir, eps)
    dtype = np.dtype(dtype)
    weights = {name: values.astype(dtype) for name, values in weights.items()}
    tokens = np.array(token_rows, dtype=np.int64)                    # [B, T]
    if tokens.ndim != 2 or tokens.size == 0:
        raise ValueError("token_rows must be B non-empty rows of the same length")
    if tokens.min() < 0 or tokens.max() >= config["vocab_size"]:
        raise ValueError("token ids must be in [0, %d)" % config["vocab_size"])
    if not 0 <= cached < tokens.shape[1]:
        raise ValueError("cached must leave at least one token: 0 <= cached < %d" % tokens.shape[1])
    cache = []
    if cached:
        forward(config, weights, tokens[:, :cached], set(mistakes), AnatomyDump(), cache)
    dump = AnatomyDump()
    forward(config, weights, tokens[:, cached:], set(mistakes), dump, cache)
    return dump.tensors


# --- self-check ------------------------------------------------------------------------

def relative_difference(a, b):
    """max |a - b| / max |b|."""
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def first_changed(tensors, reference):
    """The first name, in data-flow order, whose values differ at all from reference's."""
    for name, values in tensors.items():
        if not np.array_equal(values, reference[name]):
            return name
    return None


def self_check(attn):
    tokens = [[1, 5, 9, 2, 7, 3, 11, 4], [3, 3, 8, 0, 14, 6, 2, 31]]
    with tempfile.TemporaryDirectory() as tmp:
        tiny = export_with_eps(attn, os.path.join(tmp, "tiny"), None)
        wide_eps = export_with_eps(attn, os.path.join(tmp, "eps"), 0.5)
        untied = export_untied(attn, os.path.join(tmp, "untied"))
        correct = {tiny: run(tiny, tokens), wide_eps: run(wide_eps, tokens), untied: run(untied, tokens)}

        # The correct run: probability rows sum to 1, future cells are exactly 0.
        future = np.triu(np.ones((len(tokens[0]),) * 2, dtype=bool), k=1)          # [T, S]
        for name, values in correct[tiny].items():
            if name.endswith(".probs"):
                assert np.allclose(values.sum(axis=-1), 1, atol=1e-12, rtol=0), name
                assert np.all(values[..., future] == 0), name

        # Through the cache: the second pass's tensors are the full pass's rows for its
        # positions (scores and probs: those queries over every key).
        after_cache = run(tiny, tokens, cached=CACHED)
        for name, values in after_cache.items():
            rows = correct[tiny][name][:, :, CACHED:] if values.ndim == 4 else correct[tiny][name][:, CACHED:]
            assert np.allclose(values, rows, rtol=1e-12, atol=1e-12), name

        # float32 follows float64 (the float32 path is what a learner mostly runs).
        in_float32 = run(tiny, tokens, "float32")
        assert relative_difference(in_float32["logits"], correct[tiny]["logits"]) < 1e-5

        # Each mistake: everything before its first changed tensor is bit-identical to
        # the correct run, and that tensor moves by more than 1e-3 relative.
        print("%-32s  %-20s  %s" % ("mistake", "first changed", "relative difference"))
        for mistake in MISTAKES:
            folder = {"rmsnorm_eps_outside_sqrt": wide_eps, "head_tied_to_embedding": untied}.get(mistake, tiny)
            cached = CACHED if mistake in CACHE_MISTAKES else 0
            reference = after_cache if cached else correct[folder]
            wrong = run(folder, tokens, mistakes={mistake}, cached=cached)
            name = first_changed(wrong, reference)
            size = relative_difference(wrong[name], reference[name]) if name else 0.0
            print("%-32s  %-20s  %.3g" % (mistake, name, size))
            assert name == FIRST_CHANGED[mistake], (mistake, name)
            assert size > 1e-3, (mistake, name, size)
        tiny_eps_effect = relative_difference(run(tiny, tokens, mistakes={"rmsnorm_eps_outside_sqrt"})["logits"],
                                              correct[tiny]["logits"])
        print("(rmsnorm_eps_outside_sqrt at eps 1e-6 moves the logits by only %.2g relative)" % tiny_eps_effect)

        # The dump writes both formats, and they read back bit for bit.
        for suffix in (".npz", ".safetensors"):
            dump = AnatomyDump()
            for name in ("embed", "layers.1.probs", "logits"):
                dump.save(name, correct[tiny][name])
            dump.save("final_norm", in_float32["final_norm"])
            path = os.path.join(tmp, "dump" + suffix)
            dump.write(path)
            back = dict(np.load(path)) if suffix == ".npz" else read_safetensors(path)
            assert back.keys() == dump.tensors.keys(), suffix
            for name, values in dump.tensors.items():
                assert back[name].dtype == values.dtype and np.array_equal(back[name], values), (suffix, name)
    print("self-check passed")


# --- command line ------------------------------------------------------------------------

def parse_tokens(text):
    """'1,2,3;4,5,6' -> [[1, 2, 3], [4, 5, 6]]."""
    rows = [[int(t) for t in row.split(",")] for row in text.split(";")]
    if len({len(row) for row in rows}) != 1:
        raise ValueError("every sequence in --tokens must have the same length")
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description="A NumPy Llama that writes an anatomy dump, with optional mistakes.")
    parser.add_argument("--checkpoint", help="folder from attn export-checkpoint")
    parser.add_argument("--tokens", help="comma-separated ids; sequences separated by ';', all the same length")
    parser.add_argument("--out", help="FILE.npz or FILE.safetensors")
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    parser.add_argument("--eps", type=float, help="use this rms_norm_eps instead of config.json's")
    parser.add_argument("--mistake", action="extend", nargs="+", default=[], choices=list(MISTAKES), metavar="NAME",
                        help="one or more of: " + ", ".join(MISTAKES))
    parser.add_argument("--only", help="comma-separated table names to write (default: all)")
    parser.add_argument("--cached", type=int, default=0,
                        help="run the first N ids of each sequence through a KV cache first; write the rest's tensors")
    parser.add_argument("--self-check", action="store_true", help="check the model and every mistake, then exit")
    parser.add_argument("--attn", default=os.environ.get("ATTN", os.path.join(here, "..", "..", "build", "native",
                                                                               "native", "attn")),
                        help="the attn binary, for --self-check (default: $ATTN or build/native/native/attn)")
    args = parser.parse_args()
    if args.self_check:
        self_check(args.attn)
        return
    if not (args.checkpoint and args.tokens and args.out):
        parser.error("--checkpoint, --tokens and --out are required (or --self-check)")
    try:
        tensors = run(args.checkpoint, parse_tokens(args.tokens), args.dtype, args.mistake, args.eps, args.cached)
    except ValueError as error:
        parser.error(str(error))
    names = args.only.split(",") if args.only else list(tensors)
    missing = [name for name in names if name not in tensors]
    if missing:
        parser.error("--only: no tensor %s; this model records %s" % (", ".join(missing), ", ".join(tensors)))
    dump = AnatomyDump()
    for name in names:
        dump.save(name, tensors[name])
    dump.write(args.out)


if __name__ == "__main__":
    main()
