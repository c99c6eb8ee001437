#!/usr/bin/python3
"""Checks that a compiled tfc model and its PyTorch twin give the same loss.

For one executable built by `tfc compile SPEC [--batch B --seq-len S]`:

1. `EXE init --seed 1` writes a checkpoint (and, for classifiers, the word
   vocabulary beside it, built from DATA);
2. `bench/tfc_torch.py`'s perturb step writes a second checkpoint with
   random weights of a larger scale, so that every part of the model
   moves the loss (the initial weights leave the output nearly uniform);
3. for both checkpoints, `EXE eval` prints tfc's loss, and the PyTorch model
   built from SPEC alone (docs/weights.md) loads the checkpoint by name
   (`load_state_dict(strict=True)`) and evaluates the same data the same
   way, in float64 and in float32.

Prints one line per checkpoint and dtype:
    NAME WEIGHTS DTYPE: tfc LOSS torch LOSS rel ERR ok|MISMATCH
and exits 1 if any relative difference exceeds --rtol (default 1e-4).
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "bench"))
import tfc_torch  # noqa: E402
import torch  # noqa: E402


def run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"check_loss: {' '.join(cmd)} failed ({result.returncode}):\n{result.stderr}")
    return result.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--exe", required=True, help="the executable tfc compiled from --spec")
    p.add_argument("--spec", required=True)
    p.add_argument("--batch", type=int, help="the --batch given to tfc compile")
    p.add_argument("--seq-len", type=int, help="the --seq-len given to tfc compile")
    p.add_argument("--data", required=True, help="bytes (lm) or JSONL (classify)")
    p.add_argument("--split", default="val", help="lm: train, val or test")
    p.add_argument("--batches", type=int, help="evaluate at most this many batches")
    p.add_argument("--longformer", default="chunks", choices=["chunks", "dense"])
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--out", required=True, help="folder for the checkpoints")
    args = p.parse_args()

    cfg = tfc_torch.load_config(args.spec, args.batch, args.seq_len)
    name = os.path.basename(args.exe)
    os.makedirs(args.out, exist_ok=True)
    init = os.path.join(args.out, name + ".init.safetensors")
    perturbed = os.path.join(args.out, name + ".perturbed.safetensors")
    init_cmd = [args.exe, "init", "--seed", "1", "-o", init]
    eval_extra = []
    if cfg.task == "classify":
        init_cmd += ["--data", args.data]
    else:
        eval_extra += ["--split", args.split]
    if args.batches:
        eval_extra += ["--batches", str(args.batches)]
    run(init_cmd)
    tfc_torch.perturb_checkpoint(init, perturbed, seed=7)

    failed = False
    for label, weights in (("init", init), ("perturbed", perturbed)):
        ours = json.loads(run([args.exe, "eval", "--weights", weights, "--data", args.data]
                              + eval_extra))["loss"]
        for dtype in (torch.float64, torch.float32):
            model = tfc_torch.TfcModel(cfg, dropout=0.0, longformer_impl=args.longformer)
            model.to(dtype)
            tfc_torch.load_checkpoint(model, weights, strict=True)
            theirs = tfc_torch.evaluate(model, args.data, cfg.batch, args.split, args.batches,
                                        vocab_path=weights + ".vocab")["loss"]
            rel = abs(theirs - ours) / max(abs(ours), 1e-30)
            ok = rel <= args.rtol
            failed |= not ok
            print(f"{name} {label} {str(dtype).replace('torch.', '')}: tfc {ours:.9f} "
                  f"torch {theirs:.9f} rel {rel:.2e} {'ok' if ok else 'MISMATCH'}")
    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
