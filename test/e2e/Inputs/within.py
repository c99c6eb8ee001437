#!/usr/bin/env python3
"""usage: within.py A.log B.log RTOL

Exits 0 when the last "loss" of train log A is within RTOL (relative) of
the last "loss" of train log B (the final test loss), else prints both
and exits 1."""
import re
import sys


def last_loss(path):
    losses = re.findall(r'"loss":([-0-9.e+]+)', open(path).read())
    if not losses:
        sys.exit(f"within.py: {path}: no loss")
    return float(losses[-1])


a, b, tol = last_loss(sys.argv[1]), last_loss(sys.argv[2]), float(sys.argv[3])
if abs(a - b) > tol * abs(b):
    sys.exit(f"within.py: {a} is not within {tol} of {b} (relative {abs(a - b) / abs(b):.3g})")
print(f"{a} within {tol} of {b} (relative {abs(a - b) / abs(b):.3g})")
