#!/usr/bin/env python3
"""usage: within.py [--val] A.log B.log RTOL

Exits 0 when the last "loss" of train log A is within RTOL (relative) of
the last "loss" of train log B (the final test loss), else prints both
and exits 1. With --val, the last validation loss of each (a train log or
a metrics.jsonl)."""
import re
import sys


VAL = len(sys.argv) > 1 and sys.argv[1] == "--val"
PATTERN = r'"split":"val","loss":([-0-9.e+]+)' if VAL else r'"loss":([-0-9.e+]+)'


def last_loss(path):
    losses = re.findall(PATTERN, open(path).read())
    if not losses:
        sys.exit(f"within.py: {path}: no loss")
    return float(losses[-1])


args = sys.argv[2:] if VAL else sys.argv[1:]
if len(args) != 3:
    sys.exit("usage: within.py [--val] A.log B.log RTOL")
a, b, tol = last_loss(args[0]), last_loss(args[1]), float(args[2])
if abs(a - b) > tol * abs(b):
    sys.exit(f"within.py: {a} is not within {tol} of {b} (relative {abs(a - b) / abs(b):.3g})")
print(f"{a} within {tol} of {b} (relative {abs(a - b) / abs(b):.3g})")
