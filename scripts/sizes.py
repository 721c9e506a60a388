#!/usr/bin/env python3
"""Files in Sources over 500 lines and functions over 80 (issue 23's limits).

A file may stay longer with a comment in it that starts "Over 500 lines on purpose"; a
function with one that starts "Over 80 lines on purpose" on the lines just above it.
Prints what is over and exits 1 when something is over without a reason.
Usage: scripts/sizes.py [--file-limit N] [--function-limit N]
"""
import os
import re
import sys

FILE_LIMIT, FUNCTION_LIMIT = 500, 80
args = sys.argv[1:]
if "--file-limit" in args:
    FILE_LIMIT = int(args[args.index("--file-limit") + 1])
if "--function-limit" in args:
    FUNCTION_LIMIT = int(args[args.index("--function-limit") + 1])

DECLARATION = re.compile(
    r"\s*(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|private|fileprivate|internal|package|static|class|override|final|mutating|"
    r"nonisolated|convenience|required)(?:\(set\))?\s+)*(func|init|deinit)\b")


def code(line):
    """The line without string literals and comments, for counting braces."""
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', line).split("//")[0]


def functions(lines):
    for i, line in enumerate(lines):
        if not DECLARATION.match(line) or line.strip().startswith("//"):
            continue
        depth, started = 0, False
        for j in range(i, min(len(lines), i + 2000)):
            for ch in code(lines[j]):
                if ch == "{":
                    depth, started = depth + 1, True
                elif ch == "}":
                    depth -= 1
            if started and depth <= 0:
                yield i, j - i + 1
                break
            if not started and j > i + 15:
                break


over = unexplained = 0
for root, _, names in sorted(os.walk("Sources")):
    for name in sorted(names):
        if not name.endswith(".swift"):
            continue
        path = os.path.join(root, name)
        lines = open(path, encoding="utf-8").read().split("\n")
        if len(lines) - 1 > FILE_LIMIT:
            reason = any("Over 500 lines on purpose" in line for line in lines)
            over += 1
            unexplained += not reason
            print(f"{path}: {len(lines) - 1} lines{' (explained)' if reason else ''}")
        for start, length in functions(lines):
            if length > FUNCTION_LIMIT:
                above = " ".join(lines[max(0, start - 6):start])
                reason = "Over 80 lines on purpose" in above
                over += 1
                unexplained += not reason
                print(f"{path}:{start + 1}: a function of {length} lines{' (explained)' if reason else ''}: "
                      f"{lines[start].strip()[:70]}")
print(f"{over} over the limits, {unexplained} without a reason")
sys.exit(1 if unexplained else 0)
