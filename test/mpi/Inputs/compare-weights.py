#!/usr/bin/env python3
# Compares two safetensors files tensor by tensor (parameters, and Adam's m
# and v in training checkpoints): prints the largest absolute difference and
# exits 1 when it exceeds TOL or when the files hold different tensors.
#
#   compare-weights.py A.safetensors B.safetensors TOL
import json
import struct
import sys
from array import array


def load(path):
    with open(path, "rb") as f:
        blob = f.read()
    (size,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + size])
    header.pop("__metadata__", None)
    base = 8 + size
    tensors = {}
    for name, info in header.items():
        if info["dtype"] != "F32":
            sys.exit(f"{path}: {name}: dtype {info['dtype']}, expected F32")
        begin, end = info["data_offsets"]
        values = array("f")
        values.frombytes(blob[base + begin:base + end])
        tensors[name] = values
    return tensors


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: compare-weights.py A.safetensors B.safetensors TOL")
    a, b, tol = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3])
    if sorted(a) != sorted(b):
        print(f"different tensors: {sorted(set(a) ^ set(b))}")
        return 1
    worst, where, count = 0.0, "", 0
    for name in sorted(a):
        for x, y in zip(a[name], b[name]):
            d = abs(x - y)
            if d > worst or d != d:
                worst, where = d, name
        count += len(a[name])
    ok = worst <= tol
    print(f"{len(a)} tensors, {count} values: max |difference| {worst:.3g} "
          f"({where or '-'}), tolerance {tol:g}: {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
