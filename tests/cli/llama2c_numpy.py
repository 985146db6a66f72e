"""An independent NumPy reading of llama2.c checkpoints and tokenizers, for
cross-checking attn's: the file formats and run.c's arithmetic as published, and
nothing of the project's code.

    python3 llama2c_numpy.py MODEL.bin TOKENIZER.bin "prompt" STEPS   # prints the greedy ids
"""

import struct
import sys

import numpy as np


def read_checkpoint(path):
    """-> (config dict, weights dict of float32 arrays, each matrix [out, in])."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic == 0x616B3432:
        version = struct.unpack_from("<i", data, 4)[0]
        assert version == 1, version
        dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack_from("<7i", data, 8)
        shared = data[36] != 0
        offset = 256
    else:
        version = 0
        dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack_from("<7i", data, 0)
        shared = vocab > 0
        vocab = abs(vocab)
        offset = 28
    floats = np.frombuffer(data, dtype="<f4", offset=offset)
    head = dim // heads
    kv_dim = kv_heads * head
    shapes = {"emb": (vocab, dim), "att_norm": (layers, dim), "wq": (layers, dim, dim), "wk": (layers, kv_dim, dim),
              "wv": (layers, kv_dim, dim), "wo": (layers, dim, dim), "ffn_norm": (layers, dim),
              "w1": (layers, hidden, dim), "w2": (layers, dim, hidden), "w3": (layers, hidden, dim), "norm": (dim,)}
    order = (["emb", "att_norm", "wq", "wk", "wv", "wo", "ffn_norm", "w1", "w2", "w3", "norm"] if version == 0 else
             ["att_norm", "ffn_norm", "norm", "emb", "wq", "wk", "wv", "wo", "w1", "w2", "w3"])
    weights, at = {}, 0
    for name in order:
        n = int(np.prod(shapes[name]))
        weights[name] = floats[at:at + n].reshape(shapes[name])
        at += n
    if version == 0:
        at += seq_len * head  # two RoPE tables of seq_len x head/2
    weights["cls"] = weights["emb"] if shared else floats[at:at + vocab * dim].reshape(vocab, dim)
    config = dict(dim=dim, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads, vocab=vocab, seq_len=seq_len)
    return config, weights


def rmsnorm(x, w):
    return w * (x / np.sqrt(np.mean(x * x) + 1e-5))


class Model:
    """run.c's forward, one token at a time with a KV cache, in float32."""

    def __init__(self, path):
        self.c, self.w = read_checkpoint(path)
        c = self.c
        head = c["dim"] // c["heads"]
        self.k = np.zeros((c["layers"], c["seq_len"], c["kv_heads"] * head), np.float32)
        self.v = np.zeros_like(self.k)
        self.record = None  # when a list [L][Hq]: every probability row is appended to it

    def forward(self, token, pos):
        c, w = self.c, self.w
        dim, head, heads = c["dim"], c["dim"] // c["heads"], c["heads"]
        group = heads // c["kv_heads"]
        x = w["emb"][token].astype(np.float32)
        # RoPE on adjacent pairs: channel pair (i, i + 1) of each head at frequency 10000^(-(i % head) / head).
        i = np.arange(0, dim, 2)
        freq = (1.0 / np.power(np.float32(10000.0), (i % head).astype(np.float32) / np.float32(head))).astype(np.float32)
        angle = np.float32(pos) * freq
        cos, sin = np.cos(angle), np.sin(angle)

        def rope(vec, n):
            out = vec.copy()
            a, b = vec[0:n:2], vec[1:n:2]
            out[0:n:2] = a * cos[: n // 2] - b * sin[: n // 2]
            out[1:n:2] = a * sin[: n // 2] + b * cos[: n // 2]
            return out

        for l in range(c["layers"]):
            h = rmsnorm(x, w["att_norm"][l])
            q = rope(w["wq"][l] @ h, dim)
            kv_dim = c["kv_heads"] * head
            self.k[l, pos] = rope(w["wk"][l] @ h, kv_dim)
            self.v[l, pos] = w["wv"][l] @ h
            out = np.zeros(dim, np.float32)
            for hh in range(heads):
                kv = hh // group
                qh = q[hh * head:(hh + 1) * head]
                keys = self.k[l, :pos + 1, kv * head:(kv + 1) * head]
                scores = keys @ qh / np.sqrt(np.float32(head))
                p = np.exp(scores - scores.max())
                p /= p.sum()
                if self.record is not None:
                    self.record[l][hh].append(p)
                out[hh * head:(hh + 1) * head] = p @ self.v[l, :pos + 1, kv * head:(kv + 1) * head]
            x = x + w["wo"][l] @ out
            h = rmsnorm(x, w["ffn_norm"][l])
            gate = w["w1"][l] @ h
            x = x + w["w2"][l] @ ((gate / (1.0 + np.exp(-gate))) * (w["w3"][l] @ h))
        return w["cls"] @ rmsnorm(x, w["norm"])


def read_tokenizer(path, vocab):
    """-> (pieces as bytes, scores)."""
    with open(path, "rb") as f:
        data = f.read()
    at = 4
    pieces, scores = [], []
    for _ in range(vocab):
        score, length = struct.unpack_from("<fi", data, at)
        at += 8
        pieces.append(data[at:at + length])
        at += length
        scores.append(score)
    return pieces, scores


def encode(text, pieces, scores):
    """run.c's encode: BOS, a dummy " ", each UTF-8 character or its bytes (+3), then
    repeatedly merge the adjacent pair whose concatenation is the best-scoring piece."""
    lookup = {}
    for i, p in enumerate(pieces):
        lookup.setdefault(p, i)
    ids = [1]
    if text:
        ids.append(lookup[b" "])
    for ch in text:
        b = ch.encode("utf-8")
        if b in lookup:
            ids.append(lookup[b])
        else:
            ids.extend(byte + 3 for byte in b)
    while True:
        best, best_score = None, -1e10
        for i in range(len(ids) - 1):
            merged = pieces[ids[i]] + pieces[ids[i + 1]]
            if merged in lookup and scores[lookup[merged]] > best_score:
                best, best_score = i, scores[lookup[merged]]
        if best is None:
            return ids
        ids[best:best + 2] = [lookup[pieces[ids[best]] + pieces[ids[best + 1]]]]


def attention(model_path, ids):
    """Every layer and head's probability rows for `ids`, run one token at a time:
    rows[l][h][t] holds the weights of query t over keys 0..t."""
    model = Model(model_path)
    model.record = [[[] for _ in range(model.c["heads"])] for _ in range(model.c["layers"])]
    for pos, token in enumerate(ids):
        model.forward(token, pos)
    return model.record


def greedy(model_path, prompt_ids, steps):
    """The ids run.c would print: feed the prompt, then argmax, for `steps` forward
    passes in all, stopping at BOS."""
    model = Model(model_path)
    token, out = prompt_ids[0], []
    for pos in range(steps):
        logits = model.forward(token, pos)
        nxt = prompt_ids[pos + 1] if pos + 1 < len(prompt_ids) else int(np.argmax(logits))
        if nxt == 1:
            break
        if pos + 1 >= len(prompt_ids):
            out.append(nxt)
        token = nxt
    return out


if __name__ == "__main__":
    config, _ = read_checkpoint(sys.argv[1])
    pieces, scores = read_tokenizer(sys.argv[2], config["vocab"])
    ids = encode(sys.argv[3], pieces, scores)
    print(",".join(map(str, greedy(sys.argv[1], ids, int(sys.argv[4])))))
