#!/usr/bin/env python3
"""Lists the functions in src/ longer than a limit (default 80 lines), and the
files longer than a file limit (default 600 lines), longest first.

A function is a definition that starts at column 0 (or after one level of
namespace indentation) and ends at the matching closing brace at the same
indentation; lambdas and inline members count toward their enclosing
function.
    long_functions.py [--max-lines N] [--max-file-lines N] [PATH...]
"""
import argparse
import os
import re
import sys

NOT_FUNCTIONS = re.compile(r"^\s*(namespace|struct|class|enum|union|extern|template\s*<[^>]*>\s*(struct|class))\b")


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    found = []
    start = None
    for number, line in enumerate(lines, 1):
        if start is None:
            if line.endswith("{") and not line.startswith((" ", "\t", "#", "//")) \
                    and not NOT_FUNCTIONS.match(line) and "=" not in line.split("(")[0]:
                # The signature may span lines: walk back to its first line.
                first = number
                while first > 1 and lines[first - 2].strip() and not lines[first - 2].rstrip().endswith((";", "}", "{")) \
                        and not lines[first - 2].startswith(("//", "#")):
                    first -= 1
                start = (first, lines[first - 1].strip())
        elif line == "}" or line.startswith("};"):
            found.append((number - start[0] + 1, start[0], start[1]))
            start = None
    return found, len(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-lines", type=int, default=80)
    parser.add_argument("--max-file-lines", type=int, default=600)
    parser.add_argument("paths", nargs="*", default=["src"])
    args = parser.parse_args()
    long_functions = []
    long_files = []
    for root in args.paths:
        for folder, _, names in os.walk(root):
            for name in names:
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(folder, name)
                found, length = functions(path)
                if length > args.max_file_lines:
                    long_files.append((length, path))
                for lines, line, signature in found:
                    if lines > args.max_lines:
                        long_functions.append((lines, f"{path}:{line}", signature))
    for lines, where, signature in sorted(long_functions, reverse=True):
        print(f"{lines:5d} lines  {where}  {signature[:90]}")
    for length, path in sorted(long_files, reverse=True):
        print(f"{length:5d} lines  {path} (file)")
    print(f"{len(long_functions)} functions over {args.max_lines} lines, "
          f"{len(long_files)} files over {args.max_file_lines} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
