#!/usr/bin/env python3
"""Judges a Python solution to one of the page's exercises, with the same judge,
tolerance and named mistakes as the page (core/judge, through `attn judge`).

    python3 tools/judge.py EXERCISE SOLUTION.py [--json] [--timeout SECONDS]
    python3 tools/judge.py --list

SOLUTION.py defines the exercise's function in snake_case (decodeStep -> decode_step;
the camelCase name is accepted too), with NumPy or PyTorch:

    import numpy as np
    def softmax(x):              # x: float64 array [R, C]
        ...

Arrays arrive as float64 NumPy arrays, integers and flags as Python numbers; the
function may return a NumPy array, nested lists, a number, a torch tensor, or a
dict of them (decode_step's keys: out, k_cache, v_cache). The file runs in a child
process of this same interpreter (tools/judge_runner.py), never in this one: each
case has --timeout seconds (3 by default) before the child is killed and the case
reported as timed out. Loading the file, its imports included, has 30 s of its own,
so that `import torch` is not counted against the first case.

Prints the report tools/judge.mjs prints, or with --json the judge's own report.
Exit status: 0 when every test passes, 1 when any fails, 2 for a usage error, an
unknown exercise, an unreadable file, a missing attn or one that answers with
something other than JSON, or an exception whose message str() cannot give (the
judge cannot report it): one line on stderr.
attn is $ATTN, else build/native/native/attn in this repository. The solution runs
as you, with your files and network: no sandbox, unlike the page's Web Worker.
"""
import importlib.util
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUNNER = Path(__file__).resolve().parent / "judge_runner.py"
USAGE = "usage: python3 tools/judge.py EXERCISE SOLUTION.py [--json] [--timeout SECONDS]  (or --list)"
LOAD_SECONDS = 30   # loading the file: `import torch` alone takes 2-3 s on a cold start
START_SECONDS = 60  # starting Python and NumPy on a busy machine is not the solution's time


class UsageError(Exception):
    pass


def parse_args(argv):
    options = {"json": False, "list": False, "timeout": 3.0, "positional": []}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--json":
            options["json"] = True
        elif arg == "--list":
            options["list"] = True
        elif arg in ("--help", "-h"):
            raise UsageError(USAGE)
        elif arg == "--timeout" or arg.startswith("--timeout="):
            if "=" in arg:
                text = arg.split("=", 1)[1]
            else:
                i += 1
                text = argv[i] if i < len(argv) else None
            try:
                seconds = float(text)
            except (TypeError, ValueError):
                seconds = float("nan")
            if not 0 < seconds <= 600:
                raise UsageError(f"--timeout takes a number of seconds between 0 and 600, got {text or 'nothing'}")
            options["timeout"] = seconds
        elif arg.startswith("-") and arg != "-":
            raise UsageError(f"unknown option {arg}; {USAGE}")
        else:
            options["positional"].append(arg)
        i += 1
    count = len(options["positional"])
    if options["list"]:
        if count:
            raise UsageError(f"--list takes no other arguments; {USAGE}")
    elif count != 2:
        raise UsageError(USAGE if count < 2 else f"too many arguments; {USAGE}")
    return options


def snake_case(name):
    """decodeStep -> decode_step: the function's name in Python."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


# ---------------------------------------------------------------- the core

def attn_path():
    attn = os.environ.get("ATTN") or str(REPO / "build" / "native" / "native" / "attn")
    if not os.access(attn, os.X_OK):
        raise UsageError(f"no attn at {attn}: build it with `cmake --preset native && cmake --build --preset native` "
                         "in the repository, or point $ATTN at one")
    return attn


def call_attn(attn, *args, stdin=None):
    """Runs `attn judge ...`; returns (exit status, parsed stdout). Exit 2 is bad input."""
    try:
        done = subprocess.run([attn, "judge", *args], input=stdin, capture_output=True, text=True, errors="replace")
    except OSError as error:
        raise UsageError(f"cannot run {attn}: {error.strerror or error}") from None
    if done.returncode not in (0, 1) or not done.stdout.strip():
        lines = done.stderr.strip().splitlines() or [f"attn judge exited with status {done.returncode}"]
        raise UsageError(lines[-1].removeprefix("attn: "))
    try:
        return done.returncode, json.loads(done.stdout)
    except ValueError:
        first = done.stdout.strip().splitlines()[0][:60]
        raise UsageError(f"{attn} printed something that is not JSON ({first!r}): is it this project's attn? "
                         "Build it, or point $ATTN at build/native/native/attn") from None


# ---------------------------------------------------------------- the solution's process

def run_solution(file, names, cases_json, count, timeout):
    """Runs the solution on every case in a child process; returns one output per case
    ({"value": ...} or {"error": ...})."""
    outputs = [None] * count
    child = subprocess.Popen(
        [sys.executable, str(RUNNER), file, *names],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,  # the learner's prints go to our stderr
        start_new_session=True,  # its own process group, killed whole on a timeout
    )
    messages = queue.Queue()

    def read():
        for line in child.stdout:
            messages.put(json.loads(line))
        messages.put(None)  # the child's end

    threading.Thread(target=read, daemon=True).start()

    def fill(text):
        for i in range(count):
            if outputs[i] is None:
                outputs[i] = {"error": text(i)}

    try:
        try:
            child.stdin.write(cases_json.encode())
            child.stdin.close()
        except BrokenPipeError:
            pass
        seconds, phase = START_SECONDS, "start"
        while True:
            try:
                message = messages.get(timeout=seconds)
            except queue.Empty:
                shown = f"{seconds:g}"
                if phase == "start":
                    fill(lambda i: f"the solution's process did not start within {shown} s")
                elif phase == "load":
                    fill(lambda i: f"timed out after {shown} s while loading the file (an endless loop at its top level?)")
                else:
                    running = outputs.index(None)
                    fill(lambda i: f"timed out after {shown} s" if i == running else "not run: an earlier case timed out")
                break
            if message is None:
                status = child.wait()
                how = f"exit status {status}" if status >= 0 else f"signal {-status}"
                fill(lambda i: f"the solution's process stopped before this case ({how})")
                break
            kind = message["kind"]
            if kind == "started":
                seconds, phase = max(LOAD_SECONDS, timeout), "load"
            elif kind == "loaded":
                seconds, phase = timeout, "case"
            elif kind == "case":
                outputs[message["index"]] = message["output"]
            elif kind == "failed":
                fill(lambda i: message["error"])
                break
            elif kind == "unprintable":
                raise UsageError(message["error"])
            elif kind == "done":
                fill(lambda i: "no result")
                break
    finally:
        if child.poll() is None:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        child.wait()
    return outputs


# ---------------------------------------------------------------- the readable report

def js_exponential(x, digits=None):
    """JavaScript's x.toExponential(digits): 1.50e-7, 1.50e+10; without digits, the
    fewest that read back as x (1e-9)."""
    if digits is None:
        sign, mantissa, exponent = Decimal(repr(float(x))).normalize().as_tuple()
        first, rest = str(mantissa[0]), "".join(map(str, mantissa[1:]))
        exponent += len(mantissa) - 1
        return f"{'-' if sign else ''}{first}{'.' + rest if rest else ''}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    return f"{mantissa}e{exponent[0]}{int(exponent[1:])}"  # e-07 -> e-7


def fmt(x):
    """A number as judge.mjs shows it: six significant digits, or x.xxe-n."""
    if isinstance(x, str):
        return x  # "NaN", "Infinity", "-Infinity"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e6:
        value = float(f"{x:.6g}")
        return str(int(value)) if value.is_integer() else repr(value)
    return js_exponential(x, 2)


def case_lines(c, titles):
    d = c.get("details") or {}
    if c["passed"]:
        if "fields" in d:
            errors = max([f.get("max_abs_error", 0) for f in d["fields"].values()], default=0)
        else:
            errors = d.get("max_abs_error")
        return [f"  pass  {c['name']}" + (f"  (max abs error {fmt(errors)})" if errors is not None else "")]
    # A field by its Python name (k_cache for the judge's kCache): the name the learner wrote.
    field = f"field '{snake_case(d['field'])}': " if d.get("field") else ""
    lines = [f"  FAIL  {c['name']}"]
    problem = c.get("problem")
    if problem == "error":
        lines.append(f"        {c['error']}")
    elif problem == "shape":
        lines.append(f"        {field}shape [{', '.join(map(str, d['got_shape']))}], "
                     f"expected [{', '.join(map(str, d['expected_shape']))}]")
    elif problem in ("type", "missing"):
        message = d["message"].replace(f"'{d.get('field')}'", f"'{snake_case(d.get('field') or '')}'")
        lines.append(f"        {field}{message}")
    else:
        if d.get("nonfinite"):
            where = ", ".join(f"{n['value']} at {n['index']}" for n in d["nonfinite"])
            extra = d.get("nonfinite_count", 0) - len(d["nonfinite"])
            more = f" and {extra} more" if extra > 0 else ""
            lines.append(f"        {field}non-finite values where numbers are expected: {where}{more}")
        lines.append(f"        {field}max abs error {fmt(d['max_abs_error'])}, max rel error {fmt(d['max_rel_error'])}"
                     " (over finite entries)")
        if d.get("first_mismatch"):
            m = d["first_mismatch"]
            lines.append(f"        first mismatch at {m['index']}: expected {fmt(m['expected'])}, got {fmt(m['got'])}")
    if c.get("matches"):
        lines.append(f"        looks like: {'; '.join(titles.get(i, i) for i in c['matches'])}")
    return lines


def readable_report(report, titles):
    lines = [f"{report['exercise']}: {report['passed_count']} of {report['total']} tests passed"]
    for c in report["cases"]:
        lines += case_lines(c, titles)
    if report.get("diagnosis"):
        diagnosis = report["diagnosis"]
        lines += ["", f"diagnosis: {diagnosis['title']} [{diagnosis['id']}]"]
        if diagnosis.get("summary"):
            lines.append(f"  {diagnosis['summary']}")
        lines.append(f"  {diagnosis['explanation']}")
    tolerance = report["tolerance"]
    lines += ["", f"tolerance: |got - expected| <= {js_exponential(tolerance['atol'])} + "
                  f"{js_exponential(tolerance['rtol'])} * |expected| (see core/judge/compare.hpp for why)"]
    return "\n".join(lines)


# ---------------------------------------------------------------- entry

def main(argv):
    try:
        options = parse_args(argv)
        attn = attn_path()
        catalogue = call_attn(attn, "--list")[1]
        if options["list"]:
            for e in catalogue:
                print(f"{e['id']}  (def {snake_case(e['id'])}; {e['cases']} tests, {len(e['mistakes'])} named mistakes)")
            return 0
        name, solution = options["positional"]
        exercise = next((e for e in catalogue if name in (e["id"], snake_case(e["id"]))), None)
        if exercise is None:
            raise UsageError(f"unknown exercise '{name}' (known: {', '.join(e['id'] for e in catalogue)})")
        file = os.path.abspath(solution)
        try:
            with open(file, "rb"):
                pass
        except OSError as error:
            raise UsageError(f"cannot read {solution}: "
                             f"{'no such file' if isinstance(error, FileNotFoundError) else error.strerror}") from None
        if importlib.util.find_spec("numpy") is None:
            raise UsageError(f"NumPy is not installed for {sys.executable} (`{sys.executable} -m pip install numpy`)")
        exercise_id = exercise["id"]
        cases_json = json.dumps(call_attn(attn, exercise_id, "--cases")[1])
        names = [snake_case(exercise_id)] + ([exercise_id] if snake_case(exercise_id) != exercise_id else [])
        outputs = run_solution(file, names, cases_json, exercise["cases"], options["timeout"])
        report = call_attn(attn, exercise_id, "--outputs", "-", stdin=json.dumps(outputs))[1]
    except UsageError as error:
        print(f"judge: {error}", file=sys.stderr)
        return 2
    titles = {m["id"]: m["title"] for m in exercise["mistakes"]}
    try:
        print(json.dumps(report, indent=2) if options["json"] else readable_report(report, titles), flush=True)
    except BrokenPipeError:  # `... | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:  # Ctrl+C: the solution's process is gone already (run_solution's finally)
        sys.exit(130)
