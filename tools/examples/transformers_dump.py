"""Hugging Face transformers' LlamaForCausalLM as the learner: its intermediate
tensors, taken with forward hooks, saved for `attn diff`.

    python3 tools/examples/transformers_dump.py --checkpoint DIR --tokens 1,5,9,2[;3,3,8,0] --out hf.npz
    attn diff --checkpoint DIR --tokens 1,5,9,2[;3,3,8,0] --theirs hf.npz

DIR is any Llama folder transformers reads (say, one `attn export-checkpoint` wrote).
The model runs in float32 with eager attention, so its probabilities come back
with output_attentions. The hooks see what each module takes and gives:

    embed          model.embed_tokens' output
    attn_norm      input_layernorm's output
    q, k, v        q_proj, k_proj, v_proj outputs, split into heads as transformers does
                   (view(B, T, H, dh).transpose(1, 2))
    probs          the attention weights output_attentions returns
    heads          o_proj's input (the heads merged), split back into heads
    attn_out       o_proj's output
    resid_mid      post_attention_layernorm's input
    ffn_norm       post_attention_layernorm's output
    ffn_out        mlp's output
    out            the decoder layer's output
    final_norm     model.norm's output
    logits         the model's logits

q_rope, k_rope and scores are computed inside the attention function, where no
hook reaches, so they are left out; attn diff compares what it is given.
Needs torch and transformers; NumPy for the file (tools/anatomy_dump.py).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from anatomy_dump import AnatomyDump  # noqa: E402


def parse_tokens(text):
    """'1,2,3;4,5,6' -> [[1, 2, 3], [4, 5, 6]]."""
    rows = [[int(t) for t in row.split(",")] for row in text.split(";")]
    if len({len(row) for row in rows}) != 1:
        raise SystemExit("every sequence in --tokens must have the same length")
    return rows


def first_tensor(value):
    """A module's output: the tensor itself, or the first of a tuple (decoder layers in older versions)."""
    return value[0] if isinstance(value, (tuple, list)) else value


def dump_transformers(checkpoint, rows):
    import torch
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(checkpoint, torch_dtype=torch.float32, attn_implementation="eager")
    model.eval()
    config = model.config
    n_heads, n_kv_heads = config.num_attention_heads, config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // n_heads
    seen = {}

    def heads(x, count):
        """[B, T, count * dh] -> [B, count, T, dh], as LlamaAttention splits them."""
        batch, tokens, _ = x.shape
        return x.view(batch, tokens, count, head_dim).transpose(1, 2)

    def keep(name, transform=lambda x: x):
        def hook(module, inputs, output):
            seen[name] = transform(first_tensor(output)).detach()
        return hook

    def keep_input(name, transform=lambda x: x):
        def hook(module, inputs):
            seen[name] = transform(inputs[0]).detach()
        return hook

    hooks = [model.model.embed_tokens.register_forward_hook(keep("embed")),
             model.model.norm.register_forward_hook(keep("final_norm"))]
    for l, layer in enumerate(model.model.layers):
        at = "layers.%d." % l
        attention = layer.self_attn
        hooks += [
            layer.input_layernorm.register_forward_hook(keep(at + "attn_norm")),
            attention.q_proj.register_forward_hook(keep(at + "q", lambda x: heads(x, n_heads))),
            attention.k_proj.register_forward_hook(keep(at + "k", lambda x: heads(x, n_kv_heads))),
            attention.v_proj.register_forward_hook(keep(at + "v", lambda x: heads(x, n_kv_heads))),
            attention.o_proj.register_forward_pre_hook(keep_input(at + "heads", lambda x: heads(x, n_heads))),
            attention.o_proj.register_forward_hook(keep(at + "attn_out")),
            layer.post_attention_layernorm.register_forward_pre_hook(keep_input(at + "resid_mid")),
            layer.post_attention_layernorm.register_forward_hook(keep(at + "ffn_norm")),
            layer.mlp.register_forward_hook(keep(at + "ffn_out")),
            layer.register_forward_hook(keep(at + "out")),
        ]
    try:
        with torch.no_grad():
            result = model(torch.tensor(rows, dtype=torch.long), output_attentions=True, use_cache=False)
    finally:
        for hook in hooks:
            hook.remove()

    dump = AnatomyDump()
    dump.save("embed", seen["embed"])
    for l in range(config.num_hidden_layers):
        at = "layers.%d." % l
        for name in ("attn_norm", "q", "k", "v"):
            dump.save(at + name, seen[at + name])
        dump.save(at + "probs", result.attentions[l])
        for name in ("heads", "attn_out", "resid_mid", "ffn_norm", "ffn_out", "out"):
            dump.save(at + name, seen[at + name])
    dump.save("final_norm", seen["final_norm"])
    dump.save("logits", result.logits)
    return dump


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="a Llama folder transformers reads")
    parser.add_argument("--tokens", required=True, help="comma-separated ids; sequences separated by ';'")
    parser.add_argument("--out", required=True, help="FILE.npz or FILE.safetensors")
    args = parser.parse_args()
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as error:
        raise SystemExit("this example needs torch and transformers (%s)" % error)
    dump_transformers(args.checkpoint, parse_tokens(args.tokens)).write(args.out)


if __name__ == "__main__":
    main()
