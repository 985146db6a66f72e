"""An independent float64 NumPy Llama, for cross-checking the C++ core.

It reads a Hugging Face Llama checkpoint folder (config.json + model.safetensors)
with its own code and computes the forward pass the way the maths is written on
paper. It shares nothing with the project: no imports, no generated weights.
Only the file formats and the published Llama equations are common ground.

    python3 numpy_llama.py CHECKPOINT_DIR 1,2,3,4   # prints the last row's logits
"""

import json
import os
import struct
import sys

import numpy as np


# --- checkpoint: safetensors by hand ----------------------------------------
# [8 bytes: little-endian u64 N][N bytes: JSON header][raw tensor data]
# header: {name: {"dtype", "shape", "data_offsets": [begin, end)}, "__metadata__": {...}}
# offsets are relative to the first byte after the header.

def _decode(raw, dtype):
    """Raw little-endian bytes -> float64 values."""
    if dtype == "F32":
        return np.frombuffer(raw, dtype="<f4").astype(np.float64)
    if dtype == "F16":
        return np.frombuffer(raw, dtype="<f2").astype(np.float64)
    if dtype == "BF16":
        # bfloat16 is the top half of a float32: shift the 16 bits into the high half.
        high = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return high.view(np.float32).astype(np.float64)
    raise ValueError("unsupported safetensors dtype %r" % dtype)


def read_safetensors(path):
    """{tensor name: float64 array of its stored shape}."""
    with open(path, "rb") as f:
        blob = f.read()
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_len].decode("utf-8"))
    data = blob[8 + header_len:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        shape = tuple(info["shape"])
        values = _decode(data[begin:end], info["dtype"])
        tensors[name] = values.reshape(shape)
    return tensors


def read_config(path):
    """The LlamaForCausalLM fields the forward pass needs."""
    with open(path) as f:
        c = json.load(f)
    n_heads = c["num_attention_heads"]
    return {
        "vocab_size": c["vocab_size"],
        "hidden_size": c["hidden_size"],                               # D
        "n_layers": c["num_hidden_layers"],                            # L
        "n_heads": n_heads,                                            # Hq
        "n_kv_heads": c.get("num_key_value_heads", n_heads),           # Hkv
        "head_dim": c.get("head_dim") or c["hidden_size"] // n_heads,  # dh
        "ffn_size": c["intermediate_size"],                            # F
        "rope_theta": c.get("rope_theta", 10000.0),
        "rms_norm_eps": c.get("rms_norm_eps", 1e-6),
        "tie_word_embeddings": c.get("tie_word_embeddings", False),
    }


def load_checkpoint(directory):
    """(config, weights) from a checkpoint folder; weights keep the HF names and [out, in] layout."""
    config = read_config(os.path.join(directory, "config.json"))
    weights = read_safetensors(os.path.join(directory, "model.safetensors"))
    return config, weights


# --- the operations ----------------------------------------------------------

def rms_norm(x, w, eps):
    """x: [..., D], w: [D]. x / sqrt(mean(x^2) + eps) * w."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def linear(x, w):
    """x: [..., in], w: [out, in] (Hugging Face storage) -> x @ W^T: [..., out]."""
    return np.einsum("...i,oi->...o", x, w)


def split_heads(x, n_heads):
    """[B, T, H*dh] -> [B, H, T, dh]."""
    B, T, width = x.shape
    return x.reshape(B, T, n_heads, width // n_heads).transpose(0, 2, 1, 3)


def rotate_half(x):
    """Hugging Face rotate_half: (x1, x2) -> (-x2, x1), channel i paired with i + dh/2."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def apply_rope(x, positions, theta):
    """x: [B, H, T, dh]; channel pair (i, i + dh/2) rotated by angle pos * theta^(-2i/dh)."""
    dh = x.shape[-1]
    inv_freq = theta ** (-np.arange(0, dh, 2, dtype=np.float64) / dh)  # [dh/2]
    angles = np.einsum("t,f->tf", positions.astype(np.float64), inv_freq)  # [T, dh/2]
    angles = np.concatenate([angles, angles], axis=-1)                   # [T, dh]
    # Angles in float64 whatever the precision of x, as every implementation does.
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    return x * cos + rotate_half(x) * sin


def softmax(scores):
    """Stable softmax over the last axis; -inf entries become exactly 0."""
    shifted = scores - np.max(scores, axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=-1, keepdims=True)


def attention(q, k, v):
    """Causal grouped-query attention.
    q: [B, Hq, T, dh], k, v: [B, Hkv, T, dh] -> (out [B, Hq, T, dh], probs [B, Hq, T, T]).
    Query head h = kv * G + g reads KV head kv = h // G, where G = Hq / Hkv:
    an index into the shared head, never a copy of it."""
    B, Hq, T, dh = q.shape
    Hkv = k.shape[1]
    G = Hq // Hkv
    q_grouped = q.reshape(B, Hkv, G, T, dh)  # [B, Hkv, G, T, dh]
    scale = q.dtype.type(1.0 / np.sqrt(dh))  # in the precision of q, so float32 runs stay float32
    scores = np.einsum("bkgtd,bksd->bkgts", q_grouped, k) * scale  # [B, Hkv, G, T, T]
    future = np.triu(np.ones((T, T), dtype=bool), k=1)  # key s > query t is forbidden
    probs = softmax(np.where(future, -np.inf, scores))
    out = np.einsum("bkgts,bksd->bkgtd", probs, v)  # [B, Hkv, G, T, dh]
    return out.reshape(B, Hq, T, dh), probs.reshape(B, Hq, T, T)


def silu(x):
    return x / (1.0 + np.exp(-x))


# --- the model ---------------------------------------------------------------

def forward(config, weights, tokens, real=np.float64):
    """tokens: [B, T] ints -> (logits [B, T, V], per-layer probabilities [B, Hq, T, T]).
    `real` is the precision of every step: float64 for the reference; float32 gives a
    plain single-precision run whose distance from float64 is the rounding floor."""
    c = dict(config, rms_norm_eps=real(config["rms_norm_eps"]))
    w = {name: tensor.astype(real) for name, tensor in weights.items()}
    tokens = np.asarray(tokens, dtype=np.int64)
    T = tokens.shape[1]
    positions = np.arange(T)
    x = w["model.embed_tokens.weight"][tokens]  # [B, T, D]
    all_probs = []
    for layer in range(c["n_layers"]):
        p = "model.layers.%d." % layer
        h = rms_norm(x, w[p + "input_layernorm.weight"], c["rms_norm_eps"])
        q = split_heads(linear(h, w[p + "self_attn.q_proj.weight"]), c["n_heads"])     # [B, Hq, T, dh]
        k = split_heads(linear(h, w[p + "self_attn.k_proj.weight"]), c["n_kv_heads"])  # [B, Hkv, T, dh]
        v = split_heads(linear(h, w[p + "self_attn.v_proj.weight"]), c["n_kv_heads"])  # [B, Hkv, T, dh]
        q = apply_rope(q, positions, c["rope_theta"])
        k = apply_rope(k, positions, c["rope_theta"])
        heads, probs = attention(q, k, v)
        all_probs.append(probs)
        merged = heads.transpose(0, 2, 1, 3).reshape(x.shape[0], T, -1)  # [B, T, Hq*dh]
        x = x + linear(merged, w[p + "self_attn.o_proj.weight"])

        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], c["rms_norm_eps"])
        gate = silu(linear(h, w[p + "mlp.gate_proj.weight"]))  # [B, T, F]
        up = linear(h, w[p + "mlp.up_proj.weight"])             # [B, T, F]
        x = x + linear(gate * up, w[p + "mlp.down_proj.weight"])

    x = rms_norm(x, w["model.norm.weight"], c["rms_norm_eps"])
    head = w["model.embed_tokens.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]  # [V, D]
    logits = np.einsum("btd,vd->btv", x, head)
    return logits, all_probs


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: numpy_llama.py CHECKPOINT_DIR TOKENS (e.g. 1,2,3)\n")
        return 2
    config, weights = load_checkpoint(argv[1])
    tokens = [[int(t) for t in argv[2].split(",")]]
    logits, _ = forward(config, weights, tokens)
    np.set_printoptions(precision=6, suppress=True, linewidth=120)
    print(logits[0, -1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
