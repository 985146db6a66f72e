"""Training speed, side by side: `attn train` against plain PyTorch CPU eager
training of the same model (native/bench/torch_train.py: 2 layers, width 32, 4 query
and 2 KV heads, RoPE, SwiGLU 96, tied head, AdamW, clipping), the same batch and
context, the same number of threads, on the same text, taking turns so that both
see the same machine load. Prints the median tokens per second of each over the
rounds, their ratio, and the load average before and after.

Run with Debian's interpreter (python3-torch):
    /usr/bin/python3 native/bench/train_speed.py [--rounds 3] [--steps 150] [--threads 2] [--json]
ATTN selects the binary (default build/native/native/attn); the text defaults to
../shared/corpora/tinyshakespeare.txt beside the project.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
ATTN = os.environ.get("ATTN", os.path.join(REPO, "build", "native", "native", "attn"))
TEXT = os.path.normpath(os.path.join(REPO, "..", "shared", "corpora", "tinyshakespeare.txt"))


def attn_rate(args, tmp, round_index):
    """Tokens per second of one `attn train` run (its record's training time: no evaluation, no writing)."""
    out = os.path.join(tmp, "attn-%d" % round_index)
    subprocess.run([ATTN, "train", "--text", args.text, "--out", out, "--steps", str(args.steps), "--batch", str(args.batch),
                    "--context", str(args.context), "--threads", str(args.threads), "--eval-every", str(10 ** 7)],
                   check=True, stderr=subprocess.DEVNULL)
    with open(os.path.join(out, "training.json")) as f:
        return json.load(f)["result"]["tokens_per_second"]


def torch_rate(args):
    """Tokens per second of one PyTorch run (its timed steps, after its warm-up steps)."""
    result = subprocess.run([sys.executable, os.path.join(HERE, "torch_train.py"), "--text", args.text, "--steps", str(args.steps),
                             "--batch", str(args.batch), "--context", str(args.context), "--threads", str(args.threads),
                             "--eval-every", str(10 ** 9), "--json"], check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])["tokens_per_second"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--text", default=TEXT)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--context", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not os.path.exists(args.text):
        sys.exit("train_speed: %s is missing (the corpus is read where it lies, beside the project)" % args.text)
    load_before = os.getloadavg()
    ours, theirs = [], []
    with tempfile.TemporaryDirectory(prefix="train-speed-") as tmp:
        for r in range(args.rounds):
            ours.append(attn_rate(args, tmp, r))
            theirs.append(torch_rate(args))
    load_after = os.getloadavg()
    import torch  # only for its version, after the runs
    report = {
        "attn_tokens_per_second": ours, "torch_tokens_per_second": theirs,
        "attn_median": statistics.median(ours), "torch_median": statistics.median(theirs),
        "ratio": statistics.median(ours) / statistics.median(theirs),
        "steps": args.steps, "batch": args.batch, "context": args.context, "threads": args.threads,
        "torch": torch.__version__, "load_average_before": load_before, "load_average_after": load_after,
    }
    if args.json:
        print(json.dumps(report))
        return
    print("training speed, %d rounds of %d steps of %d x %d tokens on %d threads (tokens per second)" %
          (args.rounds, args.steps, args.batch, args.context, args.threads))
    print("  attn train      median %9.0f   runs %s" % (report["attn_median"], ", ".join("%.0f" % x for x in ours)))
    print("  PyTorch %-8s median %9.0f   runs %s" % (torch.__version__, report["torch_median"],
                                                     ", ".join("%.0f" % x for x in theirs)))
    print("  ratio %.2fx; load average %.2f before, %.2f after (1 minute)" % (report["ratio"], load_before[0], load_after[0]))


if __name__ == "__main__":
    main()
