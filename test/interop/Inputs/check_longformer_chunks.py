#!/usr/bin/python3
"""bench/tfc_torch.py's sliding-chunk Longformer against its dense form.

For each case -- causal and non-causal windows, dilation 1 and 2, with and
without global tokens (non-causal only: the specs refuse global tokens in
causal attention, and the PyTorch model computes that case densely), with
and without a padding mask -- two models with the same weights are built,
one with ``longformer_impl="chunks"`` (with ``--flex DEVICE``,
``"flex"``: FlexAttention, bench/gpu's compiled PyTorch side, run eagerly
on DEVICE in float32, where torch has it) and one with ``"dense"`` (an S x S
mask, the literal definition of docs/spec.md). Both run the same batch
(forward, loss, backward); the loss, the logits and every parameter's
gradient must agree to float32 rounding (float32) or to 1e-10 (float64),
relative to the largest magnitude of each tensor.

The sequence (150) spans several chunks and is not a multiple of the chunk
length or of the dilation, and one case has a window longer than the
sequence. Prints one line per case and dtype:
    NAME DTYPE: logits ERR grads ERR ok|MISMATCH
and exits 1 on any mismatch.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "bench"))
import tfc_torch  # noqa: E402
import torch  # noqa: E402

SEQ = 150
# name: (causal, window per layer, dilation per layer, global tokens, masked)
CASES = {
    "causal_d1": (True, [7, 40], [1, 1], [], False),
    "causal_d2": (True, [7, 24], [2, 2], [], False),
    "causal_mixed_long": (True, [5, 200], [2, 1], [], False),
    "noncausal_d1": (False, [8, 41], [1, 1], [], True),
    "noncausal_d2": (False, [8, 30], [2, 2], [], True),
    "noncausal_d1_global": (False, [8, 41], [1, 1], [0, 77], True),
    "noncausal_d2_global": (False, [9, 30], [2, 2], [0, 5, 149], True),
    "noncausal_d2_global_nomask": (False, [6, 30], [1, 2], [3], False),
}


def config(causal, window, dilation, global_tokens, d_model=24):
    cfg = tfc_torch.ModelConfig(
        task="lm" if causal else "classify", vocab=61, d_model=d_model, heads=3, d_ff=32,
        layers=len(window), positions="learned", batch=3, seq_len=SEQ)
    cfg.attention, cfg.causal = "longformer", causal
    cfg.window, cfg.dilation, cfg.global_tokens = list(window), list(dilation), list(global_tokens)
    return cfg


def relative(a, b):
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-30))


def run(model, tokens, targets, mask):
    model.zero_grad(set_to_none=True)
    logits = model(tokens, mask)
    model.loss(logits, targets).backward()
    return logits.detach(), {n: p.grad for n, p in model.named_parameters()}


def main():
    impl, device, dtypes = "chunks", "cpu", ((torch.float64, 1e-10), (torch.float32, 2e-5))
    d_model = 24
    if sys.argv[1:2] == ["--flex"] and len(sys.argv) == 3:
        # Heads of 16 channels, the fewest FlexAttention's kernels take.
        impl, device, dtypes, d_model = "flex", sys.argv[2], ((torch.float32, 2e-5),), 48
        try:
            from torch.nn.attention.flex_attention import flex_attention  # noqa: F401
        except ImportError:
            sys.exit(f"check_longformer_chunks.py: --flex: torch {torch.__version__} "
                     "has no flex_attention")
    elif sys.argv[1:]:
        sys.exit("usage: check_longformer_chunks.py [--flex DEVICE]")
    failed = False
    for name, (causal, window, dilation, globals_, masked) in CASES.items():
        cfg = config(causal, window, dilation, globals_, d_model)
        for dtype, tol in dtypes:
            torch.manual_seed(0)
            chunks = tfc_torch.TfcModel(cfg, dropout=0.0, longformer_impl=impl).to(device, dtype)
            dense = tfc_torch.TfcModel(cfg, dropout=0.0, longformer_impl="dense").to(device, dtype)
            # Larger weights than initialisation, so that attention is sharp.
            state = {k: torch.randn_like(v) * (0.5 if v.dim() > 1 else 0.2)
                     for k, v in chunks.state_dict().items()}
            chunks.load_state_dict(state, strict=True)
            dense.load_state_dict(state, strict=True)
            g = torch.Generator().manual_seed(1)
            tokens = torch.randint(0, cfg.vocab, (cfg.batch, SEQ), generator=g)
            mask = None
            if cfg.task == "lm":
                targets = torch.randint(0, cfg.vocab, (cfg.batch, SEQ), generator=g)
            else:
                targets = torch.randint(0, cfg.classes, (cfg.batch,), generator=g)
                if masked:  # padding from 101 in row 1, from 20 in row 2
                    mask = torch.ones(cfg.batch, SEQ)
                    mask[1, 101:] = 0
                    mask[2, 20:] = 0
            tokens, targets = tokens.to(device), targets.to(device)
            mask = None if mask is None else mask.to(device)
            out_c, grad_c = run(chunks, tokens, targets, mask)
            out_d, grad_d = run(dense, tokens, targets, mask)
            out_err = relative(out_c, out_d)
            grad_err = max(relative(grad_c[n], grad_d[n]) for n in grad_d)
            ok = out_err <= tol and grad_err <= tol and set(grad_c) == set(grad_d)
            failed |= not ok
            print(f"{name} {str(dtype).replace('torch.', '')}: logits {out_err:.1e} "
                  f"grads {grad_err:.1e} {'ok' if ok else 'MISMATCH'}")
    if impl == "flex":
        return 1 if failed else 0
    # The check must be able to fail: a window one wider must differ.
    cfg = config(True, [7, 40], [1, 1], [])
    wider = config(True, [8, 40], [1, 1], [])
    torch.manual_seed(0)
    a = tfc_torch.TfcModel(cfg, dropout=0.0, longformer_impl="chunks").double()
    b = tfc_torch.TfcModel(wider, dropout=0.0, longformer_impl="dense").double()
    b.load_state_dict(a.state_dict(), strict=True)
    tokens = torch.randint(0, cfg.vocab, (cfg.batch, SEQ), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        diff = relative(a(tokens), b(tokens))
    sensitive = diff > 1e-6
    failed |= not sensitive
    print(f"control (window 7 against 8): logits {diff:.1e} "
          f"{'differ' if sensitive else 'EQUAL (the check cannot see a wrong band)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
