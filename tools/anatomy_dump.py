"""Save the intermediate tensors of your own Llama forward pass so that
`attn diff` can compare them with the core's, operation by operation.

Run your model on the same checkpoint and token ids you give `attn diff`, save
whichever tensors of the table you have (any subset), and write one file:

    import numpy as np
    from anatomy_dump import AnatomyDump

    dump = AnatomyDump()
    dump.save("embed", x)                    # x: [B, T, D]
    dump.save(f"layers.{l}.q", q)            # q: [B, Hq, T, dh], split into heads, before RoPE
    ...
    dump.write("mine.npz")                   # or "mine.safetensors"

    attn diff --checkpoint DIR --tokens 1,5,9 --theirs mine.npz

From PyTorch, pass the tensors as they are: anything with .detach() is detached,
moved to the CPU and converted (bfloat16 and float16 become float32). Arrays are
copied when saved, so later in-place changes to them do not reach the file.
Values must be float32 or float64; other float types become float32 (long double
becomes float64), integer and complex arrays are refused. Each name may be saved
once. A single sequence still needs its batch axis: save x[None], not x.

For a quick script there is also a module-level dump:

    import anatomy_dump
    anatomy_dump.save("logits", logits)
    anatomy_dump.write("mine.npz")           # writes, then starts a new empty dump

    python3 tools/anatomy_dump.py --names    # prints the table of names and layouts
"""

import json
import re
import struct
import sys

import numpy as np


# --- the table of names ------------------------------------------------------
# (name, layout, what it holds). `{l}` is the layer index, from 0. B sequences,
# T tokens, S keys (= T: the whole sequence in one pass, no cache), D model width,
# Hq query heads, Hkv key/value heads, dh head size, V vocabulary.

TABLE = [
    ("embed", ("B", "T", "D"), "token embeddings"),
    ("layers.{l}.attn_norm", ("B", "T", "D"), "RMSNorm before attention"),
    ("layers.{l}.q", ("B", "Hq", "T", "dh"), "queries, split into heads, before RoPE"),
    ("layers.{l}.k", ("B", "Hkv", "T", "dh"), "keys, split into heads, before RoPE"),
    ("layers.{l}.v", ("B", "Hkv", "T", "dh"), "values, split into heads"),
    ("layers.{l}.q_rope", ("B", "Hq", "T", "dh"), "queries after RoPE"),
    ("layers.{l}.k_rope", ("B", "Hkv", "T", "dh"), "keys after RoPE"),
    ("layers.{l}.scores", ("B", "Hq", "T", "S"), "q.k / sqrt(dh), before the causal mask"),
    ("layers.{l}.probs", ("B", "Hq", "T", "S"), "softmax over keys, masked (future cells 0)"),
    ("layers.{l}.heads", ("B", "Hq", "T", "dh"), "probs @ v, per head"),
    ("layers.{l}.attn_out", ("B", "T", "D"), "heads merged, after W_O, before the residual add"),
    ("layers.{l}.resid_mid", ("B", "T", "D"), "x + attn_out"),
    ("layers.{l}.ffn_norm", ("B", "T", "D"), "RMSNorm before the SwiGLU block"),
    ("layers.{l}.ffn_out", ("B", "T", "D"), "SwiGLU output, before the residual add"),
    ("layers.{l}.out", ("B", "T", "D"), "resid_mid + ffn_out: the layer's output"),
    ("final_norm", ("B", "T", "D"), "the last RMSNorm"),
    ("logits", ("B", "T", "V"), "final_norm @ the output matrix"),
]

LAYOUT = {name: layout for name, layout, _ in TABLE}  # "layers.{l}.q" -> ("B", "Hq", "T", "dh")

_LAYER_NAME = re.compile(r"^layers\.([^.]+)\.([a-z_]+)$")


def _patterns():
    return ", ".join(name for name, _, _ in TABLE)


def layout_of(name):
    """'layers.3.q' -> ('B', 'Hq', 'T', 'dh'); ValueError for a name not in the table."""
    if not isinstance(name, str):
        raise ValueError("a tensor name must be a string, got %r" % (name,))
    match = _LAYER_NAME.match(name)
    if match is None:
        if name in LAYOUT and "{l}" not in name:
            return LAYOUT[name]
        raise ValueError("unknown tensor name %r; valid names: %s" % (name, _patterns()))
    index, part = match.groups()
    pattern = "layers.{l}." + part
    if pattern not in LAYOUT:
        raise ValueError("unknown tensor name %r; valid names: %s" % (name, _patterns()))
    # Only the canonical spelling (0, 1, 12; not 01 or -1), so each tensor has one name.
    if not (index.isascii() and index.isdigit() and str(int(index)) == index):
        raise ValueError("the layer index in %r must be an integer from 0, as in %r"
                         % (name, "layers.0." + part))
    return LAYOUT[pattern]


# --- converting what the learner passes --------------------------------------

def _to_numpy(value):
    """A NumPy array, a PyTorch tensor, or anything with __array__ -> ndarray."""
    if hasattr(value, "detach"):  # a torch.Tensor (maybe on a GPU, maybe needing grad)
        tensor = value.detach().cpu()
        if str(tensor.dtype) == "torch.bfloat16":  # NumPy has no bfloat16
            tensor = tensor.float()
        return tensor.numpy()
    return np.asarray(value)


def _as_float(name, array):
    """float32 and float64 stay; other floats widen or narrow to one of them; the
    rest is refused. Result: a little-endian, C-ordered copy (what the C++ reader reads)."""
    if array.dtype.kind != "f":
        raise ValueError("%s has dtype %s; save float32 or float64 values "
                         "(x.float() in PyTorch, x.astype(np.float32) in NumPy)" % (name, array.dtype))
    # By size, not by equality: a big-endian float64 is not == np.float64.
    target = "<f8" if array.dtype.itemsize >= 8 else "<f4"
    return np.array(array, dtype=target, order="C", copy=True)


# --- the dump ------------------------------------------------------------------

class AnatomyDump:
    """Named tensors of one forward pass, checked as they are saved."""

    def __init__(self):
        self.tensors = {}  # name -> ndarray, in the order saved

    def save(self, name, array):
        layout = layout_of(name)
        if name in self.tensors:
            raise ValueError("%s was already saved; each name is saved once per dump" % name)
        values = _as_float(name, _to_numpy(array))
        if values.ndim != len(layout):
            hint = " (one sequence? add the batch axis: x[None])" if values.ndim == len(layout) - 1 else ""
            raise ValueError("%s must have %d axes [%s], got shape %s%s"
                             % (name, len(layout), ", ".join(layout), tuple(values.shape), hint))
        self.tensors[name] = values

    def write(self, path):
        """path ending .npz: NumPy's uncompressed archive; .safetensors: safetensors."""
        path = str(path)
        if not self.tensors:
            raise ValueError("nothing to write: save at least one tensor first")
        if path.endswith(".npz"):
            self._write_npz(path)
        elif path.endswith(".safetensors"):
            self._write_safetensors(path)
        else:
            raise ValueError("cannot tell the format of %r: the file name must end in .npz or .safetensors" % path)

    def _write_npz(self, path):
        # savez stores the members uncompressed, which is what attn's reader expects
        # (savez_compressed would not be readable by it).
        with open(path, "wb") as f:
            np.savez(f, **self.tensors)

    def _write_safetensors(self, path):
        write_safetensors(path, self.tensors)


def write_safetensors(path, tensors):
    """{name: float32 or float64 array} -> a safetensors file: [u64 little-endian: header
    length N][N bytes of JSON, padded with spaces to a multiple of 8][the tensors' bytes,
    back to back, at the header's data_offsets]."""
    header, at = {}, 0
    for name, values in tensors.items():
        dtype = "F32" if values.dtype == np.float32 else "F64"
        header[name] = {"dtype": dtype, "shape": list(values.shape), "data_offsets": [at, at + values.nbytes]}
        at += values.nbytes
    header["__metadata__"] = {"producer": "tools/anatomy_dump.py"}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for values in tensors.values():
            f.write(np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("<")).tobytes())


# --- module-level convenience --------------------------------------------------

_dump = AnatomyDump()


def save(name, array):
    """AnatomyDump.save on the module's dump."""
    _dump.save(name, array)


def write(path):
    """Writes the module's dump, then empties it for the next run."""
    global _dump
    _dump.write(path)
    _dump = AnatomyDump()


def print_names():
    width = max(len(name) for name, _, _ in TABLE)
    layout_width = max(len(", ".join(layout)) + 2 for _, layout, _ in TABLE)
    for name, layout, meaning in TABLE:
        print("%-*s  %-*s  %s" % (width, name, layout_width, "[" + ", ".join(layout) + "]", meaning))
    print()
    print("{l}: layer index from 0. B sequences, T tokens, S keys (= T), D width, Hq query heads,")
    print("Hkv key/value heads, dh head size, V vocabulary. float32 or float64; any subset.")


if __name__ == "__main__":
    if sys.argv[1:] == ["--names"]:
        print_names()
    else:
        print("usage: python3 tools/anatomy_dump.py --names   (prints the tensor names attn diff reads)\n"
              "Import it to save tensors; see the docstring at the top of this file.", file=sys.stderr)
        sys.exit(2)
