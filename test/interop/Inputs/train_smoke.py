#!/usr/bin/python3
"""One short PyTorch training run per spec, as a benchmark would do it.

For each spec given: the model of bench/tfc_torch.py at a reduced width
(d_model 32, 4 heads, d_ff 64; the layer structure, attention kind and
every other setting from the spec), dropout as the spec says, the spec's
optimizer at a learning rate of 3e-3, six steps on one fixed batch of the
test data. Prints `NAME: first LOSS last LOSS ok` when the loss of that
batch (without dropout) went down and every parameter and gradient stayed
finite, `... FAILED` otherwise (and exits 1).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "bench"))
import tfc_torch  # noqa: E402
import torch  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
text = tfc_torch.load_bytes(os.path.join(here, "..", "..", "e2e", "Inputs", "tiny.txt"))
reviews = tfc_torch.load_jsonl(os.path.join(here, "..", "..", "e2e", "Inputs", "tiny_reviews.jsonl"))

failed = False
tfc_torch.tune_torch(threads=1)
for path in sys.argv[1:]:
    torch.manual_seed(0)
    cfg = tfc_torch.load_config(path, batch=4, seq_len=48)
    cfg.d_model, cfg.heads, cfg.d_ff, cfg.lr, cfg.warmup = 32, 4, 64, 3e-3, 0
    if cfg.attention == "performer":
        cfg.features = 16
    model = tfc_torch.TfcModel(cfg)
    model.train()
    optimizer = tfc_torch.make_optimizer(model)
    if cfg.task == "lm":
        tokens, targets = tfc_torch.sample_lm_batch(text, cfg.batch, cfg.seq_len,
                                                    torch.Generator().manual_seed(1))
        mask = None
    else:
        vocab = {t: i for i, t in enumerate(tfc_torch.build_vocab(reviews, cfg.vocab, cfg.min_freq))}
        tokens, mask, targets, _ = next(tfc_torch.classify_batches(reviews, vocab, cfg.batch, cfg.seq_len))
    def loss_without_dropout():
        model.eval()
        with torch.no_grad():
            value = float(model.loss(model(tokens, mask), targets))
        model.train()
        return value

    first = loss_without_dropout()
    finite = True
    for step in range(1, 7):
        tfc_torch.train_step(model, optimizer, tokens, targets, mask, step)
        finite &= all(torch.isfinite(p).all() and (p.grad is None or torch.isfinite(p.grad).all())
                      for p in model.parameters())
    last = loss_without_dropout()
    ok = finite and last < first
    failed |= not ok
    name = os.path.splitext(os.path.basename(path))[0]
    print(f"{name}: first {first:.4f} last {last:.4f} {'ok' if ok else 'FAILED'}")
sys.exit(1 if failed else 0)
