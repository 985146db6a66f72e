"""tools/sink_experiment.py, the sink experiment docs/sinks.md reports: the table in
docs/sinks.md is the tool's rendering of docs/sinks-experiment.json (the measurements it
wrote with --json), so the document cannot drift from the numbers the page and its
tests read; every measurement is finite; and a run name the tool does not know is
refused with one line naming the ones it does.
"""

import json
import math
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_cli import REPO  # noqa: E402

TOOL = os.path.join(REPO, "tools", "sink_experiment.py")
MEASUREMENTS = os.path.join(REPO, "docs", "sinks-experiment.json")


class SinkExperiment(unittest.TestCase):
    def test_the_document_holds_the_tools_table_of_the_measurements(self):
        result = subprocess.run([sys.executable, TOOL, "--from-json", MEASUREMENTS], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        table = result.stdout.strip()
        self.assertGreater(len(table.splitlines()), 10)
        with open(os.path.join(REPO, "docs", "sinks.md")) as f:
            self.assertIn(table, f.read())

    def test_every_measurement_is_finite_and_every_model_is_measured_alike(self):
        with open(MEASUREMENTS) as f:
            runs = json.load(f)
        policies = {"keep_all", "sliding_window", "sinks_and_window_K1", "sinks_and_window_K4", "recompute_window"}
        for run in runs:
            with self.subTest(run=run["name"]):
                self.assertEqual(set(run["stream"]), policies)
                numbers = [run["heldout_loss"], run["seconds"], run["previous_token"], run["induction"]]
                numbers += list(run["stream"].values()) + [score for score, _ in run["first_token"]]
                self.assertTrue(all(math.isfinite(x) for x in numbers), numbers)
                self.assertTrue(all(0 <= score <= 1 for score, _ in run["first_token"]))

    def test_an_unknown_run_is_refused(self):
        result = subprocess.run([sys.executable, TOOL, "--table", "--only", "base,no-such-run"], capture_output=True, text=True)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("names a run that is not one of: base, ", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


if __name__ == "__main__":
    unittest.main()
