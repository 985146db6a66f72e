#!/usr/bin/env python3
"""What makes a first-token attention sink form in this project's decoder: trains one
model per configuration with `attn train`, then measures each with the record's head
scores and with `attn stream` (a cache of 64 entries under each eviction policy), and
prints the table docs/sinks.md holds.

    python3 tools/sink_experiment.py                      # every run (about an hour on 2 cores)
    python3 tools/sink_experiment.py --only base,wd1      # some of them
    python3 tools/sink_experiment.py --table              # the table from the runs already made
    python3 tools/sink_experiment.py --from-json docs/sinks-experiment.json   # the table docs/sinks.md holds

Each run goes to build/sink-experiment/NAME/ (a checkpoint and attn train's
training.json); a run whose folder holds a training.json is measured again, not
retrained. The base is the configuration of the page's Shakespeare model (width 64,
2 layers, context 64, AdamW at 1e-2, weight decay 0.1, a fifth of each batch repeated
random strings) at 3,000 steps; every other run changes what its description says.
The runs in MADE were made by the command in their own training.json and are measured
where they lie.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Relative to the repository root, where every command runs, so that each run's record
# (training.json's "command") reads as a command to type there.
CORPUS = os.path.join("..", "shared", "corpora", "tinyshakespeare.txt")
RUNS_DIR = os.path.join("build", "sink-experiment")
WIDTH = {"hidden_size": 64, "intermediate_size": 192}

# name, what it changes, attn train's arguments beyond the base's, config keys beyond WIDTH
BASE = ["--steps", "3000", "--context", "64", "--batch", "64", "--lr", "1e-2", "--weight-decay", "0.1",
        "--warmup", "100", "--repeat-fraction", "0.2"]
RUNS = [
    ("base", "the base", [], {}),
    ("layers4", "4 layers", [], {"num_hidden_layers": 4}),
    ("context256", "context 256 (batch 16: the same tokens per step)", ["--context", "256", "--batch", "16"], {}),
    ("wd1", "weight decay 1.0", ["--weight-decay", "1.0"], {}),
    ("lr3e-3", "learning rate 3e-3", ["--lr", "3e-3"], {}),
    ("wd0", "no weight decay", ["--weight-decay", "0"], {}),
    ("repeat0", "no repeated strings", ["--repeat-fraction", "0"], {}),
    ("repeat50", "half the windows repeated strings", ["--repeat-fraction", "0.5"], {}),
    ("heads8", "8 query heads of 8 channels (4 KV heads)", [], {"num_attention_heads": 8, "num_key_value_heads": 4}),
    ("wide4", "width 128, 4 layers, 8 query heads of 16 channels (4 KV heads)", [],
     {"hidden_size": 128, "intermediate_size": 384, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 4}),
    ("learned", "learned sink logits (gpt-oss's)", [], {"attention_sinks": True}),
    ("repeat0-layers4", "no repeated strings, 4 layers", ["--repeat-fraction", "0"], {"num_hidden_layers": 4}),
]
# Runs measured where they lie, each made by the command in its training.json: chapter 1's
# model (the base at 8,000 steps), two longer runs of 8 heads, and the two models the
# notebook's sinks section ships (the 4-layer run without repeated strings, and the same
# with learned sink logits).
MADE = [
    ("chapter1", "chapter 1's model: the base at 8,000 steps", os.path.join("web", "public", "models", "shakespeare")),
    ("heads8-repeat0-steps10000", "8 query heads of 8 channels, no repeated strings, 10,000 steps",
     os.path.join(RUNS_DIR, "heads8-repeat0-steps10000")),
    ("learned-heads8-repeat0-steps10000", "the same with learned sink logits",
     os.path.join(RUNS_DIR, "learned-heads8-repeat0-steps10000")),
    ("shipped-4-layers", "the notebook's model: 4 layers, no repeated strings",
     os.path.join("web", "public", "models", "shakespeare-4-layers")),
    ("shipped-learned-sinks", "the notebook's model with learned sink logits",
     os.path.join("web", "public", "models", "shakespeare-learned-sinks")),
]


def arguments(extra):
    """The base's arguments with `extra`'s flags replacing or joining them."""
    merged = dict(zip(BASE[::2], BASE[1::2]))
    merged.update(zip(extra[::2], extra[1::2]))
    return [item for pair in merged.items() for item in pair]


def train(attn, name, extra, config, threads):
    out = os.path.join(RUNS_DIR, name)
    if os.path.exists(os.path.join(ROOT, out, "training.json")):
        return out
    os.makedirs(os.path.join(ROOT, RUNS_DIR), exist_ok=True)
    command = [attn, "train", "--text", CORPUS, "--out", out, "--eval-every", "500", "--threads", str(threads),
               "--config", json.dumps(dict(WIDTH, **config))] + arguments(extra)
    print("training %s: %s" % (name, " ".join(command[1:])), file=sys.stderr, flush=True)
    subprocess.run(command, check=True, cwd=ROOT)
    return out


def stream(attn, model, text_file):
    """attn stream's mean loss after the first eviction per policy (W = 64), for K = 1 and K = 4."""
    losses = {}
    for K in (1, 4):
        report = json.loads(subprocess.run([attn, "stream", "--model", model, "--text", text_file, "--window", "64",
                                            "--sinks", str(K), "--length", "2000", "--json"],
                                           check=True, capture_output=True, text=True, cwd=ROOT).stdout)
        for p in report["policies"]:
            key = p["policy"] + ("_K%d" % K if p["policy"] == "sinks_and_window" else "")
            losses[key] = p["mean_loss_after_first_eviction"]
    return losses


def learned_share(attn, model, text):
    """For a model with learned sink logits: each layer's strongest head's mean share given to
    the sink by the second half of the queries on `text` (attn probe's probe.sinks.learned_share)."""
    with tempfile.TemporaryDirectory() as folder:
        trace = os.path.join(folder, "trace.json")
        subprocess.run([attn, "probe", "--model", model, "--prompt", text, "--output", trace],
                       check=True, capture_output=True, cwd=ROOT)
        with open(trace) as f:
            shares = json.load(f)["probe"]["sinks"]["learned_share"]
    return [(max(row), row.index(max(row))) for row in shares]


def strongest(pattern):
    """[(layer's strongest score, head)] for every layer."""
    return [(max(row), row.index(max(row))) for row in pattern["heads"]]


def measure(attn, name, what, folder, text_file, probe_text):
    with open(os.path.join(ROOT, folder, "training.json")) as f:
        record = json.load(f)
    patterns = {p["name"]: p for p in record["head_patterns"]["patterns"]}
    return {
        "name": name,
        "what": what,
        "steps": record["result"]["steps"],
        "seconds": record["result"]["training_seconds"],
        "threads": record["threads"],
        "heldout_loss": record["result"]["heldout_loss"],
        "first_token": strongest(patterns["first_token"]),
        "first_token_baseline": patterns["first_token"]["uniform_baseline"],
        "previous_token": max(max(row) for row in patterns["previous_token"]["heads"]),
        "induction": max(max(row) for row in patterns["induction"]["heads"]),
        "stream": stream(attn, folder, text_file),
        "learned_share": learned_share(attn, folder, probe_text) if record["config"].get("attention_sinks") else None,
    }


def table(rows):
    lines = ["| run | steps | training | held-out loss | first-token score, strongest head per layer | previous token | induction "
             "| W = 64: sliding window | sinks + window, K = 1 | K = 4 | recompute | keep everything |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    per_layer = lambda pairs: ", ".join("L%d %.3f (h%d)" % (l, score, head) for l, (score, head) in enumerate(pairs))  # noqa: E731
    for r in rows:
        sinks = per_layer(r["first_token"])
        if r.get("learned_share"):
            sinks += "; learned sink share " + per_layer(r["learned_share"])
        s = r["stream"]
        lines.append("| %s | %s | %d s | %.3f | %s | %.2f | %.2f | %.3f | %.3f | %.3f | %.3f | %.3f |" % (
            r["what"], format(r["steps"], ","), round(r["seconds"]), r["heldout_loss"], sinks, r["previous_token"],
            r["induction"], s["sliding_window"], s["sinks_and_window_K1"], s["sinks_and_window_K4"],
            s["recompute_window"], s["keep_all"]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attn", default=os.path.join(ROOT, "build", "native", "native", "attn"))
    parser.add_argument("--only", help="comma-separated run names (%s)" % ", ".join([r[0] for r in RUNS] + [r[0] for r in MADE]))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--table", action="store_true", help="measure the runs already made; train nothing")
    parser.add_argument("--json", help="also write the measurements to this file")
    parser.add_argument("--from-json", help="print the table of measurements written before by --json; run nothing")
    args = parser.parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            print(table(json.load(f)))
        return
    if not os.path.exists(os.path.join(ROOT, CORPUS)):
        sys.exit("sink_experiment: %s is missing (the corpus is read where it lies beside the project)" % CORPUS)
    chosen = [r for r in RUNS if not args.only or r[0] in args.only.split(",")]
    made = [r for r in MADE if not args.only or r[0] in args.only.split(",")]
    if args.only and len(chosen) + len(made) != len(args.only.split(",")):
        sys.exit("sink_experiment: --only names a run that is not one of: %s" % ", ".join([r[0] for r in RUNS] + [r[0] for r in MADE]))
    with open(os.path.join(ROOT, CORPUS), encoding="utf-8") as f:
        corpus = f.read()
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(corpus[-100000:])  # inside the held-out tenth; attn stream reads its first 2,000 tokens
        text_file = f.name
    scores_text = corpus[-100000:][:63]  # the heads' scores: held-out characters within the trained positions
    try:
        runs = []
        for name, what, extra, config in chosen:
            folder = os.path.join(RUNS_DIR, name)
            if not args.table:
                started = time.time()
                folder = train(args.attn, name, extra, config, args.threads)
                print("%s: %.0f s" % (name, time.time() - started), file=sys.stderr, flush=True)
            runs.append((name, what, folder))
        rows = [measure(args.attn, name, what, folder, text_file, scores_text)
                for name, what, folder in runs + made if os.path.exists(os.path.join(ROOT, folder, "training.json"))]
        print(table(rows))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
    finally:
        os.unlink(text_file)


if __name__ == "__main__":
    main()
