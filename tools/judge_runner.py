"""Calls a learner's Python function on the judge's cases: the child process that
tools/judge.py starts, so that a runaway solution can be killed without killing
the judge. The Python twin of web/src/exercises/runner.mjs and codec.mjs.

    python3 tools/judge_runner.py SOLUTION.py FUNCTION [FALLBACK]   (cases JSON on stdin)

It reads the judge's cases ({cases: [{name, args}]}) from stdin, compiles the
learner's file, and writes one JSON message per line to what was its stdout:

    {"kind": "started"}                     NumPy imported, the cases read
    {"kind": "loaded"}                      the file ran and defines the function
    {"kind": "failed", "error": TEXT}       it did not (syntax error, exception, no function)
    {"kind": "unprintable", "error": TEXT}  an exception whose message str() cannot give: the judge stops
    {"kind": "case", "index": I, "output": {"value": V} | {"error": TEXT}}
    {"kind": "done"}

Everything the learner prints goes to stderr, so it cannot break the messages.
Values cross as the judge spells them: JSON with NaN and the infinities as the
strings "NaN", "Infinity", "-Infinity".
"""
import json
import math
import os
import sys
import traceback
import types

import numpy as np

SPELLED = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
EXPECTED = "expected a NumPy array, nested lists of numbers or a number (or a dict of them)"


# ---------------------------------------------------------------- arguments

def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def decode(value):
    """The judge's JSON value -> Python: the spelled strings become floats, nested
    lists of numbers float64 arrays, objects dicts; numbers and booleans stay."""
    if isinstance(value, str):
        return SPELLED.get(value, value)
    if isinstance(value, dict):
        return {key: decode(item) for key, item in value.items()}
    if isinstance(value, list):
        items = [decode(item) for item in value]
        if all(is_number(i) for i in items) or (
                all(isinstance(i, np.ndarray) for i in items) and len({i.shape for i in items}) == 1):
            return np.array(items, dtype=np.float64)
        return items
    return value


# ---------------------------------------------------------------- results

class WrongType(Exception):
    """The function returned something the judge cannot read."""


def spell(x):
    """One number the judge's way: finite numbers as they are, the others as strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return x


def describe(value):
    """How a value that is not allowed is named: "None", "a str ('abc')", "a set"."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"a str ({value[:20] + '…' if len(value) > 20 else value!r})"
    if isinstance(value, np.ndarray):
        return f"a NumPy array of {value.dtype}"
    if isinstance(value, (bool, np.bool_)):
        return f"a bool ({value})"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def advice(value, where):
    """A hint for the usual wrong returns."""
    if value is None and where == "result":
        return " (a missing return statement?)"
    if isinstance(value, types.GeneratorType) or type(value).__name__ in ("map", "filter", "zip"):
        return ": wrap it in np.array(list(...))"
    return ""


def torch_to_numpy(value, where):
    """A torch tensor -> a float64 NumPy array, or None when value is not one (torch
    is never imported here: a solution that returns a tensor has imported it)."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(value, torch.Tensor):
        return None
    tensor = value.detach().cpu()
    if tensor.is_complex() or tensor.dtype == torch.bool:
        raise WrongType(f"{where} is a torch tensor of {tensor.dtype}, expected numbers")
    return tensor.to(torch.float64).numpy()


def encode_array(array, where):
    """A NumPy array -> (nested lists, shape)."""
    if array.ndim == 0:
        return encode_item(array.item(), where)
    if array.dtype.kind in "iuf":
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            return encode_list(array.tolist(), where)
        return array.tolist(), array.shape
    if array.dtype.kind == "O":
        return encode_list(array.tolist(), where)
    convert = " (convert it with .astype(float))" if array.dtype.kind == "b" else ""
    raise WrongType(f"{where} is a NumPy array of {array.dtype}{convert}, expected numbers")


def encode_list(items, where):
    """Nested lists or tuples of numbers -> (nested lists, shape); refuses ragged ones."""
    out, shapes = [], []
    for i, item in enumerate(items):
        value, shape = encode_item(item, f"{where}[{i}]")
        out.append(value)
        shapes.append(shape)
    for i, shape in enumerate(shapes[1:], 1):
        if shape != shapes[0]:
            shown = [f"[{', '.join(map(str, s))}]" if s else "a number" for s in (shapes[0], shape)]
            several = " (several arrays go in a dict)" if isinstance(items, tuple) and where == "result" else ""
            raise WrongType(f"{where} is a ragged {type(items).__name__}: {where}[0] is {shown[0]}, "
                            f"{where}[{i}] is {shown[1]}; expected a rectangular array{several}")
    return out, (len(items), *shapes[0]) if shapes else (0,)


def encode_item(item, where):
    """One entry of an array or a list: a number, or an array-like of numbers."""
    if is_number(item):
        return spell(item), ()
    if isinstance(item, np.generic) and item.dtype.kind in "iuf":
        return spell(item.item()), ()
    array = torch_to_numpy(item, where)
    if array is not None or isinstance(item, np.ndarray):
        return encode_array(item if array is None else array, where)
    if isinstance(item, (list, tuple)):
        return encode_list(item, where)
    raise WrongType(f"{where} is {describe(item)}{advice(item, where)}, expected numbers")


def encode(result):
    """A learner's result -> the judge's JSON value. A dict's keys may be snake_case
    (k_cache): the judge's names are camelCase (kCache)."""
    try:
        if isinstance(result, dict):
            out = {}
            for key, value in result.items():
                name = camel_case(key) if isinstance(key, str) else key
                if not isinstance(name, str):
                    raise WrongType(f"the result has the key {key!r}; expected names such as 'out'")
                out[name] = encode_item(value, f"result[{key!r}]")[0]
            return out
        return encode_item(result, "result")[0]
    except WrongType as error:
        message = str(error)
        if message.startswith("result is "):  # the top level: say what was returned
            message = "returned " + message[len("result is "):].replace("expected numbers", EXPECTED)
        raise WrongType(message) from None


def camel_case(name):
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# ---------------------------------------------------------------- errors

class Unprintable(Exception):
    """The learner's exception has a message that str() cannot produce: the judge
    cannot say what went wrong, and stops (judge.py exits 2 with this text)."""


def message_of(error):
    """str(error), which runs the learner's __str__."""
    try:
        return str(error)
    except BaseException as inner:
        raise Unprintable(f"the solution raised {type(error).__name__}, whose message cannot be printed "
                          f"(its __str__ raised {type(inner).__name__}): give it a message str() can print") from None


def error_text(error, file):
    """"ValueError: ... (line 4)": what the report shows for an exception, with the
    innermost line of the learner's file that it passed through."""
    if isinstance(error, SyntaxError) and error.filename == file:
        where = f" (line {error.lineno}{f', column {error.offset}' if error.offset else ''})" if error.lineno else ""
        return f"{type(error).__name__}: {error.msg}{where}"
    message = message_of(error)
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    if isinstance(error, RecursionError):
        text += " (endless recursion?)"
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == file]
    return f"{text} (line {lines[-1]})" if lines else text


# ---------------------------------------------------------------- the run

def main(argv):
    file, *names = argv
    # The messages keep the real stdout; the learner's prints (Python's and C
    # extensions' alike) go to stderr.
    messages = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)

    def post(**message):
        messages.write(json.dumps(message, allow_nan=False) + "\n")

    cases = json.load(sys.stdin)["cases"]
    post(kind="started")

    # The learner's file runs as a module called "solution" (its __main__ block
    # does not run), from its own folder, so that it can import files beside it.
    sys.path[0] = os.path.dirname(file)
    module = types.ModuleType("solution")
    module.__file__ = file
    sys.modules["solution"] = module
    try:
        with open(file, "rb") as source:
            code = compile(source.read(), file, "exec")
        exec(code, module.__dict__)
    except BaseException as error:  # SystemExit and the like are the learner's too
        try:
            post(kind="failed", error=error_text(error, file))
        except Unprintable as unprintable:
            post(kind="unprintable", error=str(unprintable))
        return
    name = next((name for name in names if name in module.__dict__), None)
    if name is None:
        also = f" (or {names[1]})" if len(names) > 1 else ""
        post(kind="failed", error=f"the file defines no function called {names[0]}{also}")
        return
    fn = module.__dict__[name]
    if not callable(fn):
        post(kind="failed", error=f"{name} is {describe(fn)}, not a function")
        return
    post(kind="loaded")

    for index, case in enumerate(cases):
        args = [decode(arg) for arg in case["args"]]  # afresh: a solution may change its inputs
        try:
            output = {"value": encode(fn(*args))}
        except WrongType as error:
            output = {"error": f"wrong type: {error}"}
        except BaseException as error:
            try:
                output = {"error": error_text(error, file)}
            except Unprintable as unprintable:
                post(kind="unprintable", error=str(unprintable))
                return
        post(kind="case", index=index, output=output)
    post(kind="done")


if __name__ == "__main__":
    main(sys.argv[1:])
