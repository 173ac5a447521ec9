#!/usr/bin/env python3
"""The README's results table, from the comparison runs in bench/results/.

A comparison run is a file that bench/compare_zoo.sh (or bench/heldout.sh,
which calls it) wrote: it opens with "# Collage vs. baselines" and holds the
table of bench/summarize_compare.py. This script takes the run that covers
the most models and, among those, the latest (by the date and run letter
its name begins with: 2026-11-28g-zoo.md is the seventh run of that day),
and prints its table and geometric means, then the command that made it,
the commit, the machine and the date, as the file records them ("not
recorded" where it does not).

  python3 bench/results_table.py [RESULT.md] [--write README.md]

RESULT.md picks a file instead. With --write, the printed text replaces
what lies between the lines "<!-- results:begin -->" and
"<!-- results:end -->" of that file, and links are made relative to it.
Standard library only.
"""
import argparse
import os
import re
import sys

BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
NOT_RECORDED = "not recorded"


class Run:
    """One comparison file, as far as the table needs it."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        self.lines = self.text.splitlines()
        self.table = self._first_table()
        self.models = max(len(self.table) - 2, 0)

    def is_comparison(self):
        return bool(self.lines) and self.lines[0].startswith("# Collage vs. baselines") and self.models > 0

    def _first_table(self):
        table = []
        for line in self.lines:
            if line.startswith("| model |") and not table:
                table.append(line)
            elif table and line.startswith("|"):
                table.append(line)
            elif table:
                break
        return table

    def order(self):
        """Sorts runs by how many models they cover, then by date and run letter."""
        dated = re.match(r"(\d{4}-\d{2}-\d{2})([a-z]?)", self.name)
        when = (dated.group(1), dated.group(2)) if dated else ("", "")
        return (self.models, when, self.name)

    def summary(self):
        """The geometric means and estimate errors under the table (ONNX Runtime's
        speedup left out: its latency ratio says the same)."""
        return [line for line in self.lines
                if (line.startswith("- geometric-mean") and "onnxruntime" not in line)
                or line.startswith("- collage latency") or line.startswith("- the kept plan")
                or line.startswith("- additive error")
                or line.startswith("- the search's estimate")]

    def protocol(self):
        """'4 rounds of 20 runs at 2 threads', from the header paragraph."""
        rounds = re.search(r"(\d+) rounds x (\d+) interleaved runs", self.text)
        threads = re.search(r"Threads: (\d+)\.", self.text)
        if not rounds or not threads:
            return None
        return f"{rounds.group(1)} rounds of {rounds.group(2)} runs at {threads.group(1)} threads"

    def command(self):
        found = re.search(r"`([^`]*bench/(?:compare_zoo|heldout|broad_set)\.sh[^`]*)`", self.text)
        return f"`{found.group(1)}`" if found else NOT_RECORDED

    def commit(self):
        found = re.search(r"\b[Cc]ommit:? ([0-9a-f]{7,40})\b", self.text)
        return f"`{found.group(1)}`" if found else NOT_RECORDED

    def machine(self):
        found = re.search(r"^Machine: (.*?)\.(?: |$)", self.text, re.M)
        return found.group(1) if found else NOT_RECORDED

    def date(self):
        found = re.search(r"^-? ?Date: (\S+)", self.text, re.M)
        if found:
            return found.group(1)
        dated = re.match(r"(\d{4}-\d{2}-\d{2})", self.name)
        return f"{dated.group(1)} (the file's name)" if dated else NOT_RECORDED


def comparison_runs(directory):
    runs = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".md"):
            run = Run(os.path.join(directory, name))
            if run.is_comparison():
                runs.append(run)
    return runs


def render(run, link_base):
    link = os.path.relpath(run.path, link_base)
    shown = os.path.relpath(run.path, ROOT)
    protocol = run.protocol()
    how = f"; latencies in ms, the median over {protocol}" if protocol else "; latencies in ms"
    out = [f"From [`{shown}`]({link}), {run.models} models{how}:", ""]
    out += run.table
    summary = run.summary()
    if summary:
        out += [""] + summary
    out += ["", f"Command: {run.command()}. Commit: {run.commit()}. Machine: {run.machine()}. "
            f"Date: {run.date()}."]
    return "\n".join(out) + "\n"


def write_between_markers(path, text):
    with open(path, encoding="utf-8") as f:
        document = f.read()
    start = document.find(BEGIN)
    end = document.find(END)
    if start < 0 or end < start:
        sys.exit(f"results_table.py: {path} has no '{BEGIN}' ... '{END}' lines")
    start += len(BEGIN)
    updated = document[:start] + "\n" + text + document[end:]
    with open(path, "w", encoding="utf-8") as f:
        f.write(updated)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("result", nargs="?", help="a comparison file (default: chosen as above)")
    parser.add_argument("--write", metavar="FILE", help="replace the text between the markers of FILE")
    args = parser.parse_args()

    if args.result:
        run = Run(args.result)
        if not run.is_comparison():
            sys.exit(f"results_table.py: {args.result} is not a comparison run of bench/compare_zoo.sh")
    else:
        runs = comparison_runs(RESULTS)
        if not runs:
            sys.exit(f"results_table.py: no comparison run in {RESULTS}")
        run = max(runs, key=Run.order)

    link_base = os.path.dirname(os.path.abspath(args.write)) if args.write else ROOT
    text = render(run, link_base)
    if args.write:
        write_between_markers(args.write, text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
