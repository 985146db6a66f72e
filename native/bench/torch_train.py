"""Plain PyTorch CPU eager training of our tiny Llama-style decoder: the calibration
our own trainer is compared against (same model, data, optimiser and head scores).

Run with Debian's interpreter (python3-torch, python3-numpy):
    /usr/bin/python3 native/bench/torch_train.py [--steps 200] [--json] ...

Model: character vocabulary V (id 0 = BOS), width D, n_layers blocks of
  x += wo(attention(rope(wq(rmsnorm(x))), rope(wk(..)), wv(..)))   4 query heads, 2 KV heads
  x += w_down(silu(w_gate(rmsnorm(x))) * w_up(rmsnorm(x)))         hidden 3 * D
then a final RMSNorm and the tied head logits = h @ tok_emb^T. No biases.
Data: windows tokens = [BOS] + chars[i : i+T-1], targets = chars[i : i+T]; the last
10% of the text is held out. --repeat-fraction replaces that share of each batch with
BOS + a random string of 8..16 characters repeated (what induction heads learn from).
Output: progress on stderr; with --json one JSON line on stdout (keys in main()).
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

BOS = 0
N_HEADS, N_KV_HEADS = 4, 2
NORM_EPS = 1e-5
ROPE_THETA = 10000.0
EVAL_WINDOWS = 16   # held-out loss
SCORE_WINDOWS = 4   # previous-token and sink scores
INDUCTION_R = 24    # length of the random string written twice
INDUCTION_STRINGS = 4


def log(*args):
    print("torch_train:", *args, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------
# model

class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):  # x [..., D]
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + NORM_EPS) * self.weight


def rope_tables(T, head_dim):
    # interleaved pairing: channels 2i and 2i+1 rotate together by pos * theta^(-2i/dh)
    freqs = ROPE_THETA ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)  # [dh/2]
    angles = torch.outer(torch.arange(T, dtype=torch.float32), freqs)                      # [T, dh/2]
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x, cos, sin):  # x [B, H, T, dh], cos/sin [T, dh/2]
    x0, x1 = x[..., 0::2], x[..., 1::2]                # [B, H, T, dh/2] each
    out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)  # [B, H, T, dh/2, 2]
    return out.flatten(-2)                             # [B, H, T, dh], pairs back in place


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.head_dim = dim // N_HEADS
        self.kv_mul = N_HEADS // N_KV_HEADS            # query heads per KV head
        self.wq = nn.Linear(dim, N_HEADS * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, N_KV_HEADS * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, N_KV_HEADS * self.head_dim, bias=False)
        self.wo = nn.Linear(N_HEADS * self.head_dim, dim, bias=False)

    def forward(self, x, cos, sin, mask):  # x [B, T, D], mask [T, T] True where allowed
        B, T, _ = x.shape
        dh = self.head_dim
        q = self.wq(x).view(B, T, N_HEADS, dh).transpose(1, 2)      # [B, Hq, T, dh]
        k = self.wk(x).view(B, T, N_KV_HEADS, dh).transpose(1, 2)   # [B, Hkv, T, dh]
        v = self.wv(x).view(B, T, N_KV_HEADS, dh).transpose(1, 2)   # [B, Hkv, T, dh]
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        # GQA as an index: query head h = g * kv_mul + r reads KV head g = h // kv_mul,
        # by viewing q as [B, Hkv, kv_mul, T, dh] and broadcasting k, v (no repeat_kv copy)
        q = q.view(B, N_KV_HEADS, self.kv_mul, T, dh)
        scores = q @ k.unsqueeze(2).transpose(-1, -2) / math.sqrt(dh)  # [B, Hkv, kv_mul, T, T]
        probs = F.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        out = probs @ v.unsqueeze(2)                                   # [B, Hkv, kv_mul, T, dh]
        out = out.view(B, N_HEADS, T, dh).transpose(1, 2).reshape(B, T, N_HEADS * dh)
        return self.wo(out), probs.view(B, N_HEADS, T, T)


class FeedForward(nn.Module):  # SwiGLU
    def __init__(self, dim, hidden):
        super().__init__()
        self.w_gate = nn.Linear(dim, hidden, bias=False)
        self.w_up = nn.Linear(dim, hidden, bias=False)
        self.w_down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):  # x [B, T, D]
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(dim), Attention(dim)
        self.ffn_norm, self.ffn = RMSNorm(dim), FeedForward(dim, 3 * dim)

    def forward(self, x, cos, sin, mask):
        a, probs = self.attn(self.attn_norm(x), cos, sin, mask)
        x = x + a
        return x + self.ffn(self.ffn_norm(x)), probs


class Decoder(nn.Module):
    def __init__(self, vocab, dim, n_layers):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block(dim) for _ in range(n_layers))
        self.norm = RMSNorm(dim)
        for p in self.parameters():
            if p.dim() == 2:   # every matrix and the embedding; norms stay 1
                nn.init.normal_(p, mean=0.0, std=0.02)

    def forward(self, tokens):  # tokens [B, T] -> logits [B, T, V], probs per layer [B, Hq, T, T]
        T = tokens.shape[1]
        cos, sin = rope_tables(T, self.layers[0].attn.head_dim)
        mask = torch.ones(T, T, dtype=torch.bool).tril()   # query t sees keys 0..t
        x = self.tok_emb(tokens)                            # [B, T, D]
        all_probs = []
        for layer in self.layers:
            x, probs = layer(x, cos, sin, mask)
            all_probs.append(probs)
        return self.norm(x) @ self.tok_emb.weight.t(), all_probs  # tied head


def loss_of(model, tokens, targets):  # mean cross-entropy over all B*T positions
    logits, _ = model(tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


# ----------------------------------------------------------------------------
# data

def ordinary_window(ids, i, T):  # -> tokens [T], targets [T]
    return np.concatenate(([BOS], ids[i:i + T - 1])), ids[i:i + T]


def repeat_window(rng, vocab, T):  # BOS + a random string of 8..16 chars repeated
    s = rng.randint(1, vocab, size=rng.randint(8, 17))
    seq = np.resize(s, T)                       # s repeated to length T
    return np.concatenate(([BOS], seq[:T - 1])), seq


def batch(rng, ids, vocab, B, T, repeat_fraction):  # -> tokens, targets [B, T] int64
    n_repeat = int(round(repeat_fraction * B))
    rows = [repeat_window(rng, vocab, T) for _ in range(n_repeat)]
    rows += [ordinary_window(ids, i, T) for i in rng.randint(0, len(ids) - T + 1, size=B - n_repeat)]
    tokens = torch.from_numpy(np.stack([r[0] for r in rows]).astype(np.int64))
    targets = torch.from_numpy(np.stack([r[1] for r in rows]).astype(np.int64))
    return tokens, targets


def fixed_windows(ids, n, T):  # n evenly spaced ordinary windows of the held-out text
    rows = [ordinary_window(ids, int(i), T) for i in np.linspace(0, len(ids) - T, n)]
    return (torch.from_numpy(np.stack([r[0] for r in rows]).astype(np.int64)),
            torch.from_numpy(np.stack([r[1] for r in rows]).astype(np.int64)))


# ----------------------------------------------------------------------------
# training

def lr_at(step, args):  # linear warm-up, then cosine to 10% of peak at step steps-1
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = min(1.0, (step - args.warmup) / max(1, args.steps - 1 - args.warmup))
    floor = 0.1 * args.lr
    return floor + (args.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def make_optimizer(model, args):
    # weight decay on the 2-D projection matrices only: not the norms, not the embedding
    decay = [p for n, p in model.named_parameters() if p.dim() == 2 and n != "tok_emb.weight"]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() == 2 and n != "tok_emb.weight")]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=args.lr, betas=(0.9, 0.95), eps=1e-8)


@torch.no_grad()
def heldout_loss(model, windows):
    model.eval()
    loss = loss_of(model, *windows).item()
    model.train()
    return loss


@torch.no_grad()
def head_scores(model, held, vocab, T, seed):  # -> previous_token, induction, sink [layer][head]
    model.eval()
    tokens, _ = fixed_windows(held, SCORE_WINDOWS, T)
    _, probs = model(tokens)                                       # per layer [4, Hq, T, T]
    t = torch.arange(1, T)
    previous = [p[:, :, t, t - 1].mean(dim=(0, 2)).tolist() for p in probs]
    sink = [p[:, :, T // 2:, 0].mean(dim=(0, 2)).tolist() for p in probs]

    rng, R = np.random.RandomState(seed + 1), INDUCTION_R
    strings = [rng.randint(1, vocab, size=R) for _ in range(INDUCTION_STRINGS)]
    tokens = torch.from_numpy(np.stack([np.concatenate(([BOS], s, s)) for s in strings]).astype(np.int64))
    _, probs = model(tokens)                                       # per layer [4, Hq, 1+2R, 1+2R]
    t = torch.arange(R + 1, 2 * R + 1)                             # second copy's positions
    induction = [p[:, :, t, t - R + 1].mean(dim=(0, 2)).tolist() for p in probs]
    model.train()
    return previous, induction, sink


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--text", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared",
                                                   "corpora", "tinyshakespeare.txt"))
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--context", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=None, help="stop after this much wall time")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--warm-steps", type=int, default=3, help="untimed steps before timing starts")
    ap.add_argument("--repeat-fraction", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    assert args.dim % N_HEADS == 0 and (args.dim // N_HEADS) % 2 == 0, "head size must be even"

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.RandomState(args.seed)

    with open(args.text, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    vocab = len(chars) + 1                                   # + BOS at id 0
    id_of = {c: i + 1 for i, c in enumerate(chars)}
    ids = np.array([id_of[c] for c in text], dtype=np.int64)   # [N]
    split = int(0.9 * len(ids))
    train, held = ids[:split], ids[split:]
    T, B = args.context, args.batch
    eval_windows = fixed_windows(held, EVAL_WINDOWS, T)

    model = Decoder(vocab, args.dim, args.layers)
    opt = make_optimizer(model, args)
    log("V=%d D=%d layers=%d params=%d train=%d held=%d chars, torch %s, %d threads"
        % (vocab, args.dim, args.layers, sum(p.numel() for p in model.parameters()),
           len(train), len(held), torch.__version__, torch.get_num_threads()))

    start = time.perf_counter()
    timed_s, timed_steps, step, loss = 0.0, 0, 0, float("nan")
    while step < args.steps:
        if args.seconds is not None and time.perf_counter() - start >= args.seconds:
            break
        t0 = time.perf_counter()
        tokens, targets = batch(rng, train, vocab, B, T, args.repeat_fraction)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, args)
        loss_t = loss_of(model, tokens, targets)
        opt.zero_grad(set_to_none=True)
        loss_t.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        loss = loss_t.item()
        if step >= args.warm_steps:
            timed_s += time.perf_counter() - t0
            timed_steps += 1
        step += 1
        if step % args.eval_every == 0 and step < args.steps:
            log("step %d/%d train %.4f heldout %.4f lr %.2e %.0f tok/s"
                % (step, args.steps, loss, heldout_loss(model, eval_windows), lr_at(step - 1, args),
                   B * T * timed_steps / max(timed_s, 1e-9)))
    seconds = time.perf_counter() - start
    held_loss = heldout_loss(model, eval_windows)
    tps = B * T * timed_steps / timed_s if timed_steps else float("nan")
    log("step %d/%d train %.4f heldout %.4f %.0f tok/s (end)" % (step, args.steps, loss, held_loss, tps))

    previous, induction, sink = head_scores(model, held, vocab, T, args.seed)
    result = {"tokens_per_second": tps, "steps": step, "seconds": seconds, "train_loss": loss,
              "heldout_loss": held_loss, "threads": torch.get_num_threads(), "torch": torch.__version__,
              "previous_token": previous, "induction": induction, "sink": sink}
    if args.json:
        print(json.dumps(result))
        return
    print("%d steps in %.1f s, %.0f tokens/s (torch %s, %d threads)"
          % (step, seconds, tps, torch.__version__, result["threads"]))
    print("train loss %.4f, held-out loss %.4f" % (loss, held_loss))
    for name in ("previous_token", "induction", "sink"):
        for layer, row in enumerate(result[name]):
            print("%-14s layer %d: %s" % (name, layer, " ".join("%.3f" % v for v in row)))


if __name__ == "__main__":
    main()
