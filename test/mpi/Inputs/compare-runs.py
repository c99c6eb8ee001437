#!/usr/bin/env python3
# Compares two training runs: the losses and gradient norms of every step,
# the losses of every validation
# and of the final test in DIR/metrics.jsonl (relative difference at most
# LOSS_TOL), and the parameters and Adam moments in DIR/last.safetensors
# (absolute difference at most WEIGHT_TOL, see compare-weights.py). Prints
# the largest differences; exits 1 when a tolerance is exceeded or the runs
# logged different steps.
#
#   compare-runs.py DIR1 DIR2 LOSS_TOL WEIGHT_TOL
import json
import os
import subprocess
import sys


def losses(path):
    out = {}
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if "event" in record:
                continue
            step = record["step"]
            if "loss" in record:
                out[("loss", step)] = record["loss"]
                out[("grad_norm", step)] = record["grad_norm"]
            for kind in ("val", "test"):
                if kind in record:
                    out[(kind, step)] = record[kind]["loss"]
    return out


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: compare-runs.py DIR1 DIR2 LOSS_TOL WEIGHT_TOL")
    one, two = sys.argv[1], sys.argv[2]
    loss_tol = float(sys.argv[3])
    a = losses(os.path.join(one, "metrics.jsonl"))
    b = losses(os.path.join(two, "metrics.jsonl"))
    if sorted(a) != sorted(b):
        print(f"the runs logged different losses: {sorted(set(a) ^ set(b))}")
        return 1
    worst, where = 0.0, None
    for key in a:
        d = abs(a[key] - b[key]) / max(abs(a[key]), 1e-30)
        if d > worst or d != d:
            worst, where = d, key
    kinds = {k for k, _ in a}
    ok = worst <= loss_tol
    print(f"{len(a)} values ({', '.join(sorted(kinds))}): max relative "
          f"difference {worst:.3g} at {where}, tolerance {loss_tol:g}: "
          f"{'ok' if ok else 'FAILED'}", flush=True)
    here = os.path.dirname(os.path.abspath(__file__))
    weights = subprocess.call([sys.executable,
                               os.path.join(here, "compare-weights.py"),
                               os.path.join(one, "last.safetensors"),
                               os.path.join(two, "last.safetensors"),
                               sys.argv[4]])
    return 0 if ok and weights == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
