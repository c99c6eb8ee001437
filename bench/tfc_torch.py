#!/usr/bin/python3
"""PyTorch implementations of the tfc model families.

Every model that a tfc spec describes -- the vanilla transformer (causal
language model and CLS classifier), Hourglass, Primer EZ, Performer (FAVOR+)
and Longformer -- is built here as an ``nn.Module`` from the spec file alone,
following the parameter names and semantics of ``docs/weights.md``. The
``state_dict`` names are the checkpoint names, so a checkpoint written by a
compiled model (``./model init``) loads by name::

    import tfc_torch as tt
    model = tt.build_model("specs/vanilla_lm.toml", seq_len=48)
    model.load_state_dict(tt.load_safetensors("w.safetensors"), strict=True)

The module also reads data exactly as a compiled model's ``eval`` does
(byte splits and evaluation windows, the JSONL reader, the word tokenizer
and its ``.vocab`` file), and has what a benchmark needs: ``tune_torch()``
for the settings that make PyTorch fast on these machines, an optimizer and
learning-rate schedule built from ``[training]``, and a training step.
A spec's ``training.precision = "bf16"`` makes that step run the forward
pass and the loss under ``torch.autocast(dtype=torch.bfloat16)``, the
optimizer and the master weights staying float32, as PyTorch's users train
in bf16 (``"f32"``, the default, autocasts nothing).

Command line (``/usr/bin/python3 bench/tfc_torch.py --help``)::

    tfc_torch.py eval SPEC --weights W --data PATH [--batch B] [--seq-len S]
                 [--split val] [--batches N] [--dtype float64]
    tfc_torch.py perturb IN OUT [--seed S]     # random, larger weights
    tfc_torch.py names SPEC [--seq-len S]      # state-dict names and shapes

``eval`` prints the same JSON metrics as ``./model eval`` (the loss
computed by PyTorch). Requires Python >= 3.11 (``tomllib``), numpy and
torch >= 1.13.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import struct
import sys
import tomllib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Iterator, Optional, Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = [
    "ModelConfig", "load_config", "build_model", "TfcModel",
    "load_safetensors", "save_safetensors", "safetensors_metadata",
    "load_checkpoint", "tune_torch", "TUNED_ENV",
    "load_bytes", "split_span", "eval_lm_batches", "sample_lm_batch",
    "load_jsonl", "split_words", "build_vocab", "load_vocab", "save_vocab",
    "encode", "classify_batches", "evaluate",
    "make_optimizer", "learning_rate", "train_step", "autocast", "PRECISIONS",
    "redraw_features", "orthogonal_features",
]

PAD_ID, UNK_ID, CLS_ID = 0, 1, 2
SPECIAL_TOKENS = (b"<pad>", b"<unk>", b"<cls>")
# A Performer row whose stabilised denominator is at most this gives zero
# (docs/weights.md).
PERFORMER_MIN_DENOMINATOR = 1e-20


# ---------------------------------------------------------------------------
# Running PyTorch at its best on these machines
# ---------------------------------------------------------------------------

#: Environment that tuned PyTorch runs with on these machines (2 cores, AVX-512
#: EPYC, Debian's PyTorch 1.13 with OpenBLAS 0.3.21). All of it is read when
#: the process starts or when torch is imported, so it must be in the
#: environment before that; ``tune_torch(reexec=True)`` restarts the
#: interpreter with it. If memory runs short with huge pages, use
#: ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1`` alone.
TUNED_ENV = {
    # OpenBLAS does not know this CPU and picks Haswell kernels (half speed).
    "OPENBLAS_CORETYPE": "SkylakeX",
    # OpenBLAS's and PyTorch's thread pools otherwise spin against each other.
    "OMP_WAIT_POLICY": "PASSIVE",
    "OPENBLAS_THREAD_TIMEOUT": "4",
    # Keep freed activations mapped (a fresh page costs ~10 us to touch).
    "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:"
                      "glibc.malloc.trim_threshold=100000000000",
}


def tune_torch(threads: int = 2, reexec: bool = False) -> dict:
    """Applies the settings under which PyTorch is measured here.

    Sets ``torch.set_num_threads(threads)`` (PyTorch starts with one thread
    on these machines). The environment of ``TUNED_ENV`` only acts when it is
    present at process start: with ``reexec=True`` a process that lacks it
    replaces itself (``os.execve`` of the same command line) with it added;
    otherwise the missing variables are only reported. Returns a dict of what
    is in effect: ``threads`` and ``missing_env`` (names not set as tuned).
    """
    missing = [k for k, v in TUNED_ENV.items() if os.environ.get(k) != v]
    if missing and reexec and not os.environ.get("TFC_TORCH_REEXEC"):
        env = dict(os.environ)
        env.update(TUNED_ENV)
        env["TFC_TORCH_REEXEC"] = "1"  # Never loop.
        sys.stdout.flush()
        sys.stderr.flush()
        argv = list(getattr(sys, "orig_argv", [sys.executable] + sys.argv))
        os.execve(sys.executable, [sys.executable] + argv[1:], env)
    torch.set_num_threads(threads)
    return {"threads": torch.get_num_threads(), "missing_env": missing}


# ---------------------------------------------------------------------------
# Safetensors
# ---------------------------------------------------------------------------

_DTYPES = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"),
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"), "U8": np.dtype("u1"), "BOOL": np.dtype("?"),
    "BF16": np.dtype("<u2"),  # Widened to float32 below.
}


def _read_header(path: str) -> tuple[dict, int, bytes]:
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: not a safetensors file (shorter than 8 bytes)")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise ValueError(f"{path}: header length {n} runs past the end of the file")
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: corrupt safetensors header: {e}") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the safetensors header is not a JSON object")
    return header, 8 + n, blob


def safetensors_metadata(path: str) -> dict:
    """The ``__metadata__`` strings of a safetensors file."""
    header, _, _ = _read_header(path)
    return dict(header.get("__metadata__", {}))


def load_safetensors(path: str) -> "OrderedDict[str, torch.Tensor]":
    """Reads every tensor of a safetensors file, by name, in file order.

    The format: 8 bytes little-endian header length N, N bytes of JSON
    (``{"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...}`` and
    an optional ``__metadata__``), then the data; offsets are relative to
    the end of the header. BF16 is widened to float32.
    """
    header, start, blob = _read_header(path)
    tensors: "OrderedDict[str, torch.Tensor]" = OrderedDict()
    entries = [(k, v) for k, v in header.items() if k != "__metadata__"]
    entries.sort(key=lambda kv: kv[1]["data_offsets"][0])
    for name, info in entries:
        dtype = info.get("dtype")
        if dtype not in _DTYPES:
            raise ValueError(f"{path}: tensor {name!r} has unsupported dtype {dtype!r}")
        shape = [int(d) for d in info["shape"]]
        begin, end = (int(o) for o in info["data_offsets"])
        count = int(np.prod(shape)) if shape else 1
        np_dtype = _DTYPES[dtype]
        if end - begin != count * np_dtype.itemsize or start + end > len(blob):
            raise ValueError(f"{path}: tensor {name!r}: data_offsets {begin}..{end} "
                             f"do not fit shape {shape} of {dtype}")
        array = np.frombuffer(blob, dtype=np_dtype, count=count,
                              offset=start + begin).reshape(shape)
        if dtype == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = torch.from_numpy(array.copy())
    return tensors


def save_safetensors(path: str, tensors: dict, metadata: Optional[dict] = None) -> None:
    """Writes float32 tensors (in the given order) as safetensors, atomically.

    The header is padded with spaces so that the data starts at a multiple
    of 8, as the compiled models write it.
    """
    header: dict = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    chunks, offset = [], 0
    for name, t in tensors.items():
        data = t.detach().to("cpu", torch.float32).contiguous().numpy().astype("<f4")
        raw = data.tobytes()
        header[name] = {"dtype": "F32", "shape": list(data.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in chunks:
            f.write(raw)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


# ---------------------------------------------------------------------------
# The spec
# ---------------------------------------------------------------------------

_SECTIONS = {
    "model": {"name", "task", "vocab", "d_model", "heads", "d_ff", "layers",
              "dropout", "norm_eps", "positions", "classes", "loss",
              "tie_embeddings"},
    "attention": {"kind", "causal", "features", "redraw", "orthogonal", "window",
                  "dilation", "global_tokens", "dconv", "dconv_kernel"},
    "ffn": {"activation"},
    "hourglass": {"layout", "shortening_factors", "layers_per_level",
                  "shortening", "upsampling"},
    "training": {"optimizer", "lr", "beta1", "beta2", "eps", "weight_decay",
                 "schedule", "warmup", "clip", "batch", "seq_len", "steps",
                 "eval_every", "eval_batches", "checkpoint_every", "patience",
                 "seed", "precision"},
    "data": {"format", "train", "val", "test", "train_fraction", "val_fraction",
             "min_freq"},
}


@dataclass
class ModelConfig:
    """The values of a spec (docs/spec.md), defaults filled in.

    ``batch`` and ``seq_len`` are those the model is built for (the spec's,
    or the ``--batch``/``--seq-len`` given to ``tfc compile``). ``levels``
    is the hourglass layout as ``[(layers, absolute factor), ...]`` (a
    palindrome), empty without ``[hourglass]``. ``window`` and ``dilation``
    hold one entry per layer in execution order (Longformer only).
    """
    path: str = ""
    name: str = "model"
    task: str = "lm"
    vocab: int = 256           # bytes (lm) or words with PAD, UNK, CLS
    d_model: int = 256         # model width
    heads: int = 8             # attention heads
    d_ff: int = 1024           # feed-forward hidden width
    layers: int = 6            # with [hourglass], the layout's total
    dropout: float = 0.0
    norm_eps: float = 1e-5     # LayerNorm epsilon
    positions: str = "sinusoidal"  # none, sinusoidal, learned or rotary
    classes: int = 2           # classify only
    loss: str = "ce"           # classify: ce or bce (one logit)
    tie_embeddings: bool = False
    # [attention]
    attention: str = "softmax"
    causal: bool = True
    features: int = 256
    redraw: int = 1000
    orthogonal: bool = True
    window: list = field(default_factory=list)
    dilation: list = field(default_factory=list)
    global_tokens: list = field(default_factory=list)
    dconv: bool = False
    dconv_kernel: int = 3
    # [ffn]
    activation: str = "gelu"
    # [hourglass]
    levels: list = field(default_factory=list)
    shortening: str = "avg"
    upsampling: str = "naive"
    # [training]
    optimizer: str = "adam"
    lr: float = 1e-4
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0
    schedule: str = "constant"
    warmup: int = 0
    clip: float = 0.0
    batch: int = 16
    seq_len: int = 256
    steps: int = 1000
    eval_every: int = 100
    eval_batches: int = 20
    checkpoint_every: int = 500
    patience: int = 0
    seed: int = 0
    precision: str = "f32"     # f32, or bf16: train_step autocasts to bfloat16
    # [data]
    data_format: str = "bytes"
    train: str = ""
    val: str = ""
    test: str = ""
    train_fraction: float = 0.9
    val_fraction: float = 0.05
    min_freq: int = 1

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    @property
    def outputs(self) -> int:
        """Logits per position (lm) or per sequence (classify)."""
        if self.task == "lm":
            return self.vocab
        return 1 if self.loss == "bce" else self.classes

    def layer_factors(self) -> list:
        """The hourglass factor of every layer, in execution order."""
        if not self.levels:
            return [1] * self.layers
        return [k for n, k in self.levels for _ in range(n)]


#: The values of ``training.precision`` (docs/precision.md).
PRECISIONS = ("f32", "bf16")


def autocast(cfg: ModelConfig, device_type: str = "cpu"):
    """The context of a forward pass at ``cfg.precision``: bf16 autocast
    (matrix products in bfloat16, float32 weights) for ``"bf16"``, nothing
    for ``"f32"``."""
    if cfg.precision == "bf16":
        return torch.autocast(device_type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def parse_layout(text: str) -> list:
    """``"2@1 4@3 2@1"`` -> ``[(2, 1), (4, 3), (2, 1)]`` (checked as tfc does)."""
    levels = []
    for item in text.split():
        n, sep, k = item.partition("@")
        if not sep or not n.isdigit() or not k.isdigit() or int(k) < 1:
            raise ValueError(f"hourglass.layout: bad item {item!r}")
        levels.append((int(n), int(k)))
    if not levels or len(levels) % 2 == 0 or levels != levels[::-1]:
        raise ValueError(f"hourglass.layout: {text!r} is not an odd-length palindrome")
    centre = len(levels) // 2
    if levels[0][1] != 1 or centre == 0 or levels[centre][0] == 0:
        raise ValueError(f"hourglass.layout: {text!r}: needs factor 1 first, a "
                         "shortened level and layers in the centre")
    for (_, a), (_, b) in zip(levels[:centre], levels[1:centre + 1]):
        if b <= a or b % a:
            raise ValueError(f"hourglass.layout: {b} is not a larger multiple of {a}")
    return levels


def load_config(path: str, batch: Optional[int] = None,
                seq_len: Optional[int] = None) -> ModelConfig:
    """Reads a spec file; ``batch``/``seq_len`` override ``[training]`` as
    ``tfc compile --batch/--seq-len`` do. Unknown sections or keys are
    errors; the full validation is tfc's (``tfc compile`` rejects what this
    reader might accept)."""
    with open(path, "rb") as f:
        raw = tomllib.load(f)
    for section, table in raw.items():
        if section not in _SECTIONS or not isinstance(table, dict):
            raise ValueError(f"{path}: unknown section or top-level key {section!r}")
        for key in table:
            if key not in _SECTIONS[section]:
                raise ValueError(f"{path}: unknown key {section}.{key}")
    m = raw.get("model", {})
    a = raw.get("attention", {})
    h = raw.get("hourglass")
    t = raw.get("training", {})
    d = raw.get("data", {})
    c = ModelConfig(path=path)
    stem = os.path.splitext(os.path.basename(path))[0]
    c.name = m.get("name", "".join(ch if ch.isalnum() or ch in "_.-" else "_" for ch in stem))
    c.task = m.get("task", "lm")
    lm = c.task == "lm"
    c.vocab = m.get("vocab", 256)
    c.d_model, c.heads, c.d_ff = m["d_model"], m["heads"], m["d_ff"]
    c.dropout = float(m.get("dropout", 0.0))
    c.norm_eps = float(m.get("norm_eps", 1e-5))
    c.positions = m.get("positions", "sinusoidal")
    c.classes = m.get("classes", 2)
    c.loss = m.get("loss", "ce")
    c.tie_embeddings = m.get("tie_embeddings", False)
    c.activation = raw.get("ffn", {}).get("activation", "gelu")
    if h is not None:
        if "layout" in h:
            c.levels = parse_layout(h["layout"])
        else:
            per = h.get("layers_per_level", 1)
            down, absolute = [(per, 1)], 1
            for r in h["shortening_factors"]:
                absolute *= r
                down.append((per, absolute))
            c.levels = down + down[-2::-1]
        c.shortening = h.get("shortening", "avg")
        c.upsampling = h.get("upsampling", "naive")
        c.layers = sum(n for n, _ in c.levels)
    else:
        c.layers = m["layers"]
    for key in ("optimizer", "lr", "beta1", "beta2", "eps", "weight_decay",
                "schedule", "warmup", "clip", "batch", "seq_len", "steps",
                "eval_every", "eval_batches", "checkpoint_every", "patience", "seed"):
        if key in t:
            setattr(c, key, t[key])
    c.lr, c.beta1, c.beta2, c.eps = float(c.lr), float(c.beta1), float(c.beta2), float(c.eps)
    c.weight_decay, c.clip = float(c.weight_decay), float(c.clip)
    if "precision" in t:
        if t["precision"] not in PRECISIONS:
            raise ValueError(f"{path}: training.precision = {t['precision']!r}: "
                             f"expected one of {', '.join(map(repr, PRECISIONS))}")
        c.precision = t["precision"]
    spec_seq_len = c.seq_len
    if batch:
        c.batch = batch
    if seq_len:
        c.seq_len = seq_len
    c.data_format = d.get("format", "bytes" if lm else "jsonl")
    for key in ("train", "val", "test"):
        if key in d:
            p = d[key]
            setattr(c, key, p if os.path.isabs(p) else os.path.join(os.path.dirname(path), p))
    c.train_fraction = float(d.get("train_fraction", 0.9))
    c.val_fraction = float(d.get("val_fraction", 0.05))
    c.min_freq = d.get("min_freq", 1)
    # [attention]
    c.attention = a.get("kind", "softmax")
    c.causal = a.get("causal", lm)
    c.features = a.get("features", 256)
    c.redraw = a.get("redraw", 1000)
    c.orthogonal = a.get("orthogonal", True)
    c.dconv = a.get("dconv", False)
    c.dconv_kernel = a.get("dconv_kernel", 3)
    if c.attention == "longformer":
        def per_layer(value, default):
            if value is None:
                value = default
            if isinstance(value, list):
                if len(value) != c.layers:
                    raise ValueError(f"{path}: expected one entry per layer ({c.layers})")
                return list(value)
            return [value] * c.layers
        if "window" not in a:
            raise ValueError(f"{path}: attention.window is required for longformer")
        c.window = per_layer(a["window"], None)
        c.dilation = per_layer(a.get("dilation"), 1)
        default_globals = [0] if (not lm and not c.causal) else []
        c.global_tokens = list(a.get("global_tokens", default_globals))
        if any(g >= spec_seq_len for g in c.global_tokens):
            raise ValueError(f"{path}: attention.global_tokens beyond training.seq_len")
    if c.d_model % c.heads:
        raise ValueError(f"{path}: model.heads must divide model.d_model")
    if c.seq_len % max(k for _, k in c.levels or [(0, 1)]):
        raise ValueError(f"{path}: seq_len {c.seq_len} is not a multiple of the "
                         "largest hourglass factor")
    return c


# ---------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------

def _activation(kind: str):
    if kind == "relu":
        return F.relu
    if kind == "gelu":
        return lambda x: F.gelu(x, approximate="tanh")
    if kind == "squared_relu":
        return lambda x: torch.square(F.relu(x))
    raise ValueError(f"unknown activation {kind!r}")


def sinusoidal_positions(seq: int, width: int, dtype=torch.float32) -> torch.Tensor:
    """``[seq, width]``: ``sin(p / 10000^(2i/width))`` at channel ``2i`` and
    the cosine at ``2i + 1``."""
    position = torch.arange(seq, dtype=torch.float64)[:, None]
    even = torch.arange(0, width, 2, dtype=torch.float64)
    angle = position * torch.exp(-even * (math.log(10000.0) / width))
    table = torch.zeros(seq, width, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : width // 2])
    return table.to(dtype)


def rotary(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary positions on head-split ``x [B, H, S, Dh]`` in the GPT-NeoX
    half-split layout: channel ``e < Dh/2`` pairs with ``e + Dh/2`` and
    turns by ``p * base^(-2e/Dh)``."""
    seq, dh = x.shape[-2], x.shape[-1]
    half = dh // 2
    inv = base ** (-2.0 * torch.arange(half, dtype=torch.float64) / dh)
    angle = torch.arange(seq, dtype=torch.float64)[:, None] * inv
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    first, second = x[..., :half], x[..., half:]
    return torch.cat([first * cos - second * sin, second * cos + first * sin], -1)


def safe_softmax(scores: torch.Tensor, allowed: Optional[torch.Tensor]) -> torch.Tensor:
    """Softmax over the last dimension of the pairs that ``allowed`` (bool,
    broadcastable) keeps; a row with no allowed pair gives zeros, not NaN
    (as tfc's attention does)."""
    if allowed is None:
        return torch.softmax(scores, -1)
    probs = torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1)
    empty = ~allowed.any(-1, keepdim=True)
    return probs.masked_fill(empty, 0.0)


class DepthwiseConv(nn.Module):
    """Primer EZ's causal depth-wise convolution along the sequence, one
    kernel per head channel: ``y[s, h, e] = bias[h, e] + sum_{j<K} w[j, h, e]
    * x[s - j, h, e]`` with zeros before the first position.

    ``weight [K, H, Dh]``, ``bias [H, Dh]``; PyTorch's Conv1d default init
    ``uniform(+-1/sqrt(K))``.
    """

    def __init__(self, kernel: int, heads: int, head_dim: int):
        super().__init__()
        bound = 1.0 / math.sqrt(kernel)
        self.weight = nn.Parameter(torch.empty(kernel, heads, head_dim).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(heads, head_dim).uniform_(-bound, bound))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [B, S, D]
        kernel = self.weight.shape[0]
        width = x.shape[-1]
        # conv.weight[c, 0, K-1-j] = w[j, c // Dh, c % Dh].
        w = self.weight.reshape(kernel, width).flip(0).t().unsqueeze(1)
        y = F.conv1d(x.transpose(1, 2), w, self.bias.reshape(width),
                     padding=kernel - 1, groups=width)
        return y[..., : x.shape[1]].transpose(1, 2)


class FeedForward(nn.Module):
    """``fc2(drop(act(fc1(x))))``."""

    def __init__(self, cfg: ModelConfig, dropout: float):
        super().__init__()
        self.fc1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.fc2 = nn.Linear(cfg.d_ff, cfg.d_model)
        self.act = _activation(cfg.activation)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.drop(self.act(self.fc1(x))))


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------

def _split(x: torch.Tensor, heads: int) -> torch.Tensor:
    """``[B, S, H*Dh] -> [B, H, S, Dh]`` (channel ``h*Dh + e``)."""
    b, s, d = x.shape
    return x.view(b, s, heads, d // heads).transpose(1, 2)


def _merge(x: torch.Tensor) -> torch.Tensor:
    """``[B, H, S, Dh] -> [B, S, H*Dh]``."""
    b, h, s, e = x.shape
    return x.transpose(1, 2).reshape(b, s, h * e)


def dense_attention(q, k, v, allowed: Optional[torch.Tensor]) -> torch.Tensor:
    """Scaled dot-product attention of ``[B, H, Sq, Dh]`` queries over
    ``[B, H, Sk, Dh]`` keys/values, restricted to ``allowed`` (bool,
    broadcastable to ``[B, H, Sq, Sk]``; None = every pair). The literal
    form, kept as the reference that the faster paths are checked against."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    return torch.matmul(safe_softmax(scores, allowed), v)


_MASK_CACHE: dict = {}


def _future_mask(length: int, device) -> torch.Tensor:
    """``[S, S]`` bool, True where key ``j`` lies after query ``i`` (cached)."""
    key = ("future", length, str(device))
    mask = _MASK_CACHE.get(key)
    if mask is None:
        mask = torch.ones(length, length, dtype=torch.bool, device=device).triu(1)
        _MASK_CACHE[key] = mask
    return mask


#: Causal attention runs by blocks of query rows: at least this many rows,
#: at most ``CAUSAL_BLOCKS`` blocks.
CAUSAL_ROWS, CAUSAL_BLOCKS = 64, 8
#: Softmax attention without a key mask through
#: ``F.scaled_dot_product_attention`` (PyTorch 2's fused kernels), as
#: PyTorch's users run it on a GPU (bench/gpu's bf16 and sdpa sides);
#: off, ``fast_attention``'s matmuls and softmax.
USE_SDPA = False


def fast_attention(q, k, v, causal: bool, key_mask: Optional[torch.Tensor]) -> torch.Tensor:
    """``dense_attention`` of ``[B, H, S, Dh]`` queries, keys and values
    (self-attention) with the causal mask and/or the key mask (``[B, S]``
    bool, True = real key), computed with the fewest passes over the scores
    that PyTorch allows: one batched matmul over every head (the 1/sqrt(Dh)
    scale folded into the queries), the masks written in place as -inf,
    softmax, one batched matmul. Rows without any allowed key give zeros
    (read from the masks, not from the scores).

    Causal attention goes by blocks of query rows (``CAUSAL_ROWS`` or more,
    ``CAUSAL_BLOCKS`` at most): the block of rows ``a .. b-1`` multiplies
    keys ``0 .. b-1`` only, so the keys after a block, all masked, are never
    computed (about half of the scores for many blocks)."""
    s = q.shape[-2]
    qs = q * (1.0 / math.sqrt(q.shape[-1]))
    empty = None
    if key_mask is not None:
        if causal:  # row i is empty when no key j <= i is real
            empty = key_mask.cumsum(-1) == 0
        else:
            empty = (~key_mask.any(-1, keepdim=True)).expand(-1, s)
        if not bool(empty.any()):
            empty = None
    rows = s if not causal else max(CAUSAL_ROWS, -(-s // CAUSAL_BLOCKS))
    outs = []
    for start, qb in zip(range(0, s, rows), qs.split(rows, -2)):
        end = start + qb.shape[-2] if causal else s
        scores = torch.matmul(qb, k[:, :, :end].transpose(-1, -2))
        if causal:
            scores[..., start:].masked_fill_(_future_mask(end - start, q.device), float("-inf"))
        if key_mask is not None:
            scores.masked_fill_(~key_mask[:, None, None, :end], float("-inf"))
        probs = torch.softmax(scores, -1)
        if empty is not None:
            probs = probs.masked_fill(empty[:, None, start:start + qb.shape[-2], None], 0.0)
        outs.append(torch.matmul(probs, v[:, :, :end]))
    return outs[0] if len(outs) == 1 else torch.cat(outs, -2)


def longformer_band(length: int, window: int, dilation: int, causal: bool,
                    device=None) -> torch.Tensor:
    """``[S, S]`` bool: whether query ``i`` sees key ``j`` through the
    sliding window. Non-causal: ``|j - i| <= (window // 2) * dilation`` and
    ``(j - i) % dilation == 0``; causal: ``0 <= i - j < window * dilation``
    and ``(i - j) % dilation == 0``."""
    i = torch.arange(length, device=device)[:, None]
    j = torch.arange(length, device=device)[None, :]
    if causal:
        back = i - j
        return (back >= 0) & (back < window * dilation) & (back % dilation == 0)
    offset = j - i
    reach = (window // 2) * dilation
    return (offset.abs() <= reach) & (offset % dilation == 0)


#: Query rows per chunk of ``sliding_chunk_attention`` (at most).
SLIDING_CHUNK_ROWS = 64

#: The forms of a Longformer's attention (``Attention``'s
#: ``longformer_impl``).
LONGFORMER_IMPLS = ("chunks", "dense", "flex")


def _outside_compile(fn):
    """``fn`` run eagerly, outside any ``torch.compile`` graph
    (``torch.compiler.disable``; older torch, which has neither, runs it
    as it is)."""
    compiler = getattr(torch, "compiler", None)
    return compiler.disable(fn) if compiler is not None else fn


def _performer_quotient(num: torch.Tensor, den: torch.Tensor) -> torch.Tensor:
    """``num / den`` where ``den > PERFORMER_MIN_DENOMINATOR``, else 0 (with
    no infinity on the path of the gradient)."""
    ok = den > PERFORMER_MIN_DENOMINATOR
    safe = torch.where(ok, den, torch.ones_like(den))
    return torch.where(ok, num / safe, torch.zeros_like(num))


def sliding_chunk_attention(q, k, v, lo: int, hi: int, key_ok=None, gk=None, gv=None,
                            g_ok=None, block: Optional[int] = None) -> torch.Tensor:
    """Band attention by overlapping sliding chunks (the method of Hugging
    Face's ``LongformerSelfAttention._sliding_chunks_query_key_matmul`` and
    ``_sliding_chunks_matmul_attn_probs_value``, generalised to a band that
    need not be symmetric): query ``i`` of ``q [..., L, Dh]`` sees keys
    ``i - lo .. i + hi`` of ``k, v [..., L, Dh]`` where ``key_ok [..., L]``
    (bool, broadcastable; None = all) holds, plus the extra keys ``gk, gv
    [..., G, Dh]`` where ``g_ok [..., G]`` holds (Longformer's global
    columns). Rows without any allowed key give zeros. Returns ``[..., L, Dh]``.

    The rows go in chunks of ``W`` queries; chunk ``c`` multiplies its queries
    with the ``W + lo + hi`` keys its band can reach (overlapping views of
    the padded keys, stride ``W``: ``unfold``, which is ``as_strided``),
    which costs ``(W + lo + hi) / (lo + hi + 1)`` times the band's own
    products. The band's ``lo + hi + 1`` diagonals are read out of each
    chunk's ``[W, W + lo + hi]`` scores as a strided view (stride ``W + lo +
    hi + 1`` along rows), so that the mask and the softmax touch the band
    only; for the values the probabilities are skewed back (padding each row
    by ``W``, then a strided view) and multiplied with the same overlapping
    value chunks.
    """
    *batch, length, dh = q.shape
    lb = lo + hi + 1
    w = block or min(SLIDING_CHUNK_ROWS, max(16, lb))
    w = max(1, min(w, length))
    nb = -(-length // w)
    lq = nb * w
    span = w + lo + hi
    qs = q * (1.0 / math.sqrt(dh))
    if lq != length:
        qs = F.pad(qs, (0, 0, 0, lq - length))
    qb = qs.view(*batch, nb, w, dh)
    kspan = F.pad(k, (0, 0, lo, lq - length + hi)).unfold(-2, span, w)  # [..., nb, Dh, span]
    vspan = F.pad(v, (0, 0, lo, lq - length + hi)).unfold(-2, span, w).transpose(-1, -2)
    scores = torch.matmul(qb, kspan)                                      # [..., nb, W, span]
    band = scores.as_strided((*batch, nb, w, lb), (*scores.stride()[:-2], span + 1, 1),
                             scores.storage_offset())   # band[.., a, t] = key i - lo + t
    if key_ok is None:
        cache = ("band", length, lo, hi, w, str(q.device))
        valid = _MASK_CACHE.get(cache)
        if valid is None:
            i = torch.arange(lq, device=q.device)[:, None]
            j = i - lo + torch.arange(lb, device=q.device)[None, :]
            valid = ((j >= 0) & (j < length)).view(nb, w, lb)
            _MASK_CACHE[cache] = valid
    else:
        okp = F.pad(key_ok, (lo, lq - length + hi), value=False)
        valid = okp.unfold(-1, lb, 1).reshape(*okp.shape[:-1], nb, w, lb)
    band = band.masked_fill(~valid, float("-inf"))
    if gk is None:
        probs = torch.softmax(band, -1)
        seen = valid.any(-1) if key_ok is not None else None
    else:
        gscores = torch.matmul(qs, gk.transpose(-1, -2))                  # [..., Lq, G]
        gscores = gscores.masked_fill(~g_ok[..., None, :], float("-inf"))
        probs = torch.softmax(torch.cat([band, gscores.view(*batch, nb, w, -1)], -1), -1)
        gprobs, probs = probs[..., lb:], probs[..., :lb]
        seen = valid.any(-1) | g_ok.any(-1)[..., None, None]
    if seen is not None and not bool(seen.all()):
        probs = probs.masked_fill(~seen[..., None], 0.0)
        if gk is not None:
            gprobs = gprobs.masked_fill(~seen[..., None], 0.0)
    padded = F.pad(probs, (0, w))                                         # [..., nb, W, lb + W]
    skew = padded.as_strided((*batch, nb, w, span), (*padded.stride()[:-2], span, 1),
                             padded.storage_offset())   # skew[.., a, a + t] = probs[.., a, t]
    out = torch.matmul(skew, vspan).view(*batch, lq, dh)
    if gk is not None:
        out = out + torch.matmul(gprobs.reshape(*batch, lq, -1), gv)
    return out[..., :length, :]


class _FusedProjections(nn.Module):
    """A module whose projections that read the same input are the row
    blocks of one parameter ``{tag}_weight [n*D, D]`` (and ``{tag}_bias``),
    so that they run as one matmul, while ``state_dict()`` gives them under
    their own checkpoint names (``q_proj.weight``, ...: views of the fused
    parameter, in the order of the unfused module) and ``load_state_dict``
    takes them by those names."""

    def _fuse(self, tag: str, names: Sequence[str], width: int, bias: bool,
              order: Sequence[str]) -> None:
        self._tag, self.fused, self._width = tag, list(names), width
        self.register_parameter(f"{tag}_weight", nn.Parameter(
            torch.empty(len(names) * width, width).normal_(std=0.02)))
        self.register_parameter(f"{tag}_bias", nn.Parameter(
            torch.zeros(len(names) * width)) if bias else None)
        rank = {n: i for i, n in enumerate(order)}
        self._rank = lambda rest: rank.get(rest.split(".", 1)[0], len(rank))
        self._register_state_dict_hook(_FusedProjections._split_fused)
        self._register_load_state_dict_pre_hook(_FusedProjections._join_fused,
                                                with_module=True)

    def _leaves(self) -> list:
        return ["weight", "bias"] if getattr(self, f"{self._tag}_bias") is not None \
            else ["weight"]

    @staticmethod
    def _split_fused(module, destination, prefix, local_metadata):
        d = module._width
        # This module's entries are the last ones written: take them out,
        # replace the fused ones by per-name views, put them back in order.
        mine = [key for key in destination if key.startswith(prefix)]
        entries = {key[len(prefix):]: destination.pop(key) for key in mine}
        for leaf in module._leaves():
            fused = entries.pop(f"{module._tag}_{leaf}")
            for n, name in enumerate(module.fused):
                entries[f"{name}.{leaf}"] = fused[n * d:(n + 1) * d]
        for rest in sorted(entries, key=module._rank):
            destination[prefix + rest] = entries[rest]

    @staticmethod
    def _join_fused(module, state_dict, prefix, local_metadata, strict, missing_keys,
                    unexpected_keys, error_msgs):
        d = module._width
        for leaf in module._leaves():
            names = [f"{prefix}{name}.{leaf}" for name in module.fused]
            if all(n in state_dict for n in names):
                fused = torch.cat([state_dict.pop(n) for n in names])
            else:  # missing names are reported as such; the rest keep their values
                fused = getattr(module, f"{module._tag}_{leaf}").detach().clone()
                for i, n in enumerate(names):
                    if n in state_dict:
                        fused[i * d:(i + 1) * d] = state_dict.pop(n)
                    else:
                        missing_keys.append(n)
            state_dict[f"{prefix}{module._tag}_{leaf}"] = fused


class Attention(_FusedProjections):
    """One attention block's projections and attention (``P attn.``).

    Checkpoint names: ``q_proj``, ``k_proj``, ``v_proj``, ``out_proj``
    (``nn.Linear(D, D)``); Primer EZ: ``q_dconv``, ``k_dconv``, ``v_dconv``;
    Performer: the buffer ``features [M, Dh]``; Longformer with global
    tokens: ``q_global_proj``, ``k_global_proj``, ``v_global_proj``.

    The projections that read the same input run as one matmul: ``q_proj``,
    ``k_proj``, ``v_proj`` (and Longformer's ``k_global_proj`` and
    ``v_global_proj``) are the row blocks of one parameter ``qkv_weight
    [n*D, D]`` (``qkv_bias [n*D]``). ``state_dict()`` gives them under their
    own names (views of the fused parameter) and ``load_state_dict`` takes
    them by those names, so checkpoints look as if each were an
    ``nn.Linear``.

    ``layer`` is the layer's index in execution order (per-layer windows)
    and ``seq`` its sequence length (``seq_len`` / hourglass factor): a
    window longer than ``seq`` is cut to ``seq``, and global tokens at or
    beyond ``seq`` are dropped. ``longformer_impl``: ``"chunks"`` (sliding
    chunks, O(S * window)), ``"dense"`` (an S x S mask, the literal
    definition) or ``"flex"`` (FlexAttention with the band as a block
    mask: PyTorch's block-sparse flash kernel, for compiled models on a
    GPU).
    """

    def __init__(self, cfg: ModelConfig, layer: int, seq: int, longformer_impl: str = "chunks"):
        super().__init__()
        if longformer_impl not in LONGFORMER_IMPLS:
            raise ValueError(f"longformer_impl must be one of {', '.join(LONGFORMER_IMPLS)}, "
                             f"not {longformer_impl!r}")
        d = cfg.d_model
        self.heads, self.causal, self.kind = cfg.heads, cfg.causal, cfg.attention
        self.rotary = cfg.positions == "rotary"
        self.globals: list = []
        if self.kind == "longformer":
            self.window = min(cfg.window[layer], seq)
            self.dilation = cfg.dilation[layer]
            self.globals = sorted({g for g in cfg.global_tokens if g < seq})
            self.longformer_impl = longformer_impl
        fused = ["q_proj", "k_proj", "v_proj"]
        if self.globals:
            fused += ["k_global_proj", "v_global_proj"]
        self._fuse("qkv", fused, d, bias=True, order=[
            "features", "q_proj", "k_proj", "v_proj", "q_dconv", "k_dconv", "v_dconv",
            "q_global_proj", "k_global_proj", "v_global_proj", "out_proj"])
        if cfg.dconv:
            self.q_dconv = DepthwiseConv(cfg.dconv_kernel, cfg.heads, cfg.head_dim)
            self.k_dconv = DepthwiseConv(cfg.dconv_kernel, cfg.heads, cfg.head_dim)
            self.v_dconv = DepthwiseConv(cfg.dconv_kernel, cfg.heads, cfg.head_dim)
        else:
            self.q_dconv = self.k_dconv = self.v_dconv = None
        if self.kind == "performer":
            self.register_buffer("features", orthogonal_features(
                cfg.features, cfg.head_dim, cfg.orthogonal))
        if self.globals:
            self.q_global_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)

    # -- forward ---------------------------------------------------------------
    def forward(self, x: torch.Tensor, key_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """``x [B, S, D]``; ``key_mask [B, S]`` bool (True = real token) or
        None: keys where it is False are left out of every query's attention."""
        b, s, d = x.shape
        h = self.heads
        qkv = F.linear(x, self.qkv_weight, self.qkv_bias)        # [B, S, n*D]
        if self.q_dconv is not None:
            qkv = self._dconv(qkv)
        # [n, B, H, S, Dh] views: projection n, channel h*Dh + e.
        parts = qkv.view(b, s, len(self.fused), h, d // h).permute(2, 0, 3, 1, 4)
        q, k, v = parts[0], parts[1], parts[2]
        if self.rotary:
            q, k = rotary(q), rotary(k)
        if self.kind == "softmax" and USE_SDPA and key_mask is None:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        elif self.kind == "softmax":
            out = fast_attention(q, k, v, self.causal, key_mask)
        elif self.kind == "performer":
            out = self._performer(q, k, v, key_mask)
        else:
            out = self._longformer(x, q, k, v, parts, key_mask)
        return self.out_proj(_merge(out))

    def _dconv(self, qkv: torch.Tensor) -> torch.Tensor:
        """Primer's three convolutions (q, k, v) as one depth-wise causal
        convolution over the 3*D channels: ``y[s] = bias + sum_j w[j] *
        x[s - j]``, as multiply-adds of shifted slices."""
        convs = (self.q_dconv, self.k_dconv, self.v_dconv)
        kernel = convs[0].weight.shape[0]
        weight = torch.cat([c.weight.reshape(kernel, -1) for c in convs], 1)   # [K, 3D]
        bias = torch.cat([c.bias.reshape(-1) for c in convs])
        y = torch.addcmul(bias, qkv, weight[0])
        for j in range(1, min(kernel, qkv.shape[1])):
            y[:, j:].addcmul_(qkv[:, :-j], weight[j])
        return y

    # -- performer ----------------------------------------------------------
    def feature_exponent(self, x: torch.Tensor) -> torch.Tensor:
        """The FAVOR+ exponent of ``x [B, H, S, Dh]``: with ``x' = x /
        Dh^(1/4)``, ``W x' - |x'|^2/2``, ``[B, H, S, M]``."""
        w = self.features.to(x.dtype)
        xs = x * (x.shape[-1] ** -0.25)
        return torch.matmul(xs, w.t()) - 0.5 * (xs * xs).sum(-1, keepdim=True)

    def _performer(self, q, k, v, key_mask, chunk: int = 64):
        """FAVOR+ with the stabilisers of docs/weights.md: ``exp(E - c) /
        sqrt(M)`` with ``c`` the max over features for queries, and for keys
        the max over the unmasked sequence (non-causal) or the running max
        over the unmasked keys up to the position (causal). The stabilisers
        cancel in the output, so they are held constant (detached)."""
        scale = 1.0 / math.sqrt(self.features.shape[0])
        eq = self.feature_exponent(q)
        pq = torch.exp(eq - eq.amax(-1, keepdim=True).detach()) * scale
        ek = self.feature_exponent(k)
        lowest = torch.finfo(ek.dtype).min
        row = ek.amax(-1).detach()                               # [B, H, S]
        if key_mask is not None:
            row = row.masked_fill(~key_mask[:, None, :], lowest)
        if self.causal:
            c = torch.cummax(row, dim=-1).values
        else:
            c = row.amax(-1, keepdim=True).expand_as(row)
        exponent = ek - c.unsqueeze(-1)
        if key_mask is not None:
            # Masked keys are left out of c, so their exponent may be large.
            exponent = exponent.masked_fill(~key_mask[:, None, :, None], -math.inf)
        pk = torch.exp(exponent) * scale
        if not self.causal:
            kv = torch.matmul(pk.transpose(-1, -2), v)         # [B, H, M, Dh]
            z = pk.sum(2)                                        # [B, H, M]
            num = torch.matmul(pq, kv)
            den = torch.matmul(pq, z.unsqueeze(-1))
            return _performer_quotient(num, den)
        # Causal: prefix sums over keys j <= i, a chunk at a time (the exact
        # quadratic form inside a chunk, the carried state across chunks),
        # every key rescaled from its own stabiliser c_j to that of the row
        # or state that reads it (exponents <= 0, clamped for safety).
        def rescale(a, b):
            return torch.exp((a - b).clamp(max=0))
        b, h, s, m = pq.shape
        kv = pq.new_zeros(b, h, m, v.shape[-1])
        z = pq.new_zeros(b, h, m, 1)
        before = c.new_full((b, h, 1), lowest)   # the state's stabiliser
        outs = []
        for start in range(0, s, chunk):
            sl = slice(start, min(s, start + chunk))
            cq, ck, cv, cc = pq[:, :, sl], pk[:, :, sl], v[:, :, sl], c[:, :, sl]
            end = cc[..., -1:]
            local = torch.matmul(cq, ck.transpose(-1, -2))
            local = (local * rescale(cc[..., None, :], cc[..., :, None])).tril()
            rq = cq * rescale(before, cc).unsqueeze(-1)
            num = torch.matmul(local, cv) + torch.matmul(rq, kv)
            den = local.sum(-1, keepdim=True) + torch.matmul(rq, z)
            outs.append(_performer_quotient(num, den))
            rk = ck * rescale(cc, end).unsqueeze(-1)
            decay = rescale(before, end).unsqueeze(-1)
            kv = kv * decay + torch.matmul(rk.transpose(-1, -2), cv)
            z = z * decay + rk.sum(2).unsqueeze(-1)
            before = end
        return torch.cat(outs, 2)

    # -- longformer ---------------------------------------------------------
    def _longformer(self, x, q, k, v, parts, key_mask):
        s = q.shape[2]
        if self.longformer_impl == "flex":
            out = self._longformer_flex(q, k, v, key_mask)
        elif self.longformer_impl == "dense" or (self.globals and self.causal):
            # Causal rows see global columns only up to themselves; tfc's
            # specs refuse global tokens in causal attention, so this rare
            # case takes the literal form.
            out = self._longformer_dense(q, k, v, key_mask)
        else:
            out = self._longformer_chunks(q, k, v, key_mask)
        if not self.globals:
            return out
        # Global rows: full attention through the global projections.
        g = torch.tensor(self.globals, device=x.device)
        gq = _split(F.linear(x[:, g], self.q_global_proj.weight, self.q_global_proj.bias),
                    self.heads)
        gk, gv = parts[3], parts[4]
        allowed = None
        if self.causal:
            allowed = (torch.arange(s, device=x.device)[None, :] <= g[:, None])[None, None]
        if key_mask is not None:
            km = key_mask[:, None, None, :]
            allowed = km if allowed is None else allowed & km
        rows = dense_attention(gq, gk, gv, allowed)
        return out.index_copy(2, g, rows)

    def _longformer_dense(self, q, k, v, key_mask):
        s = q.shape[2]
        allowed = longformer_band(s, self.window, self.dilation, self.causal, q.device)
        if self.globals:
            column = torch.zeros(s, dtype=torch.bool, device=q.device)
            column[self.globals] = True
            allowed = allowed | column[None, :]
            if self.causal:
                allowed = allowed & torch.ones_like(allowed).tril()
        allowed = allowed[None, None]
        if key_mask is not None:
            allowed = allowed & key_mask[:, None, None, :]
        return dense_attention(q, k, v, allowed)

    def _longformer_flex(self, q, k, v, key_mask):
        """The local rows and global columns by FlexAttention, the mask of
        ``_longformer_dense`` as a block mask (its blocks outside the band
        skipped). Without a key mask the block mask is made once per length
        and device, outside any compiled graph."""
        from torch.nn.attention.flex_attention import flex_attention
        block_mask = self._flex_block_mask(q.shape[0], q.shape[2], q.device, key_mask)
        return flex_attention(q, k, v, block_mask=block_mask)

    @_outside_compile
    def _flex_block_mask(self, batch, s, device, key_mask):
        from torch.nn.attention.flex_attention import create_block_mask
        cache = self.__dict__.setdefault("_flex_masks", {})
        if key_mask is None and (s, device) in cache:
            return cache[(s, device)]
        window, dilation, causal = self.window, self.dilation, self.causal
        reach = (window // 2) * dilation
        is_global = None
        if self.globals:
            is_global = torch.zeros(s, dtype=torch.bool, device=device)
            is_global[self.globals] = True

        def allowed(b, h, query, key):
            if causal:
                back = query - key
                ok = (back >= 0) & (back < window * dilation) & (back % dilation == 0)
            else:
                offset = key - query
                ok = (offset.abs() <= reach) & (offset % dilation == 0)
            if is_global is not None:
                to_global = is_global[key]
                ok = ok | (to_global & (key <= query) if causal else to_global)
            if key_mask is not None:
                ok = ok & key_mask[b, key].bool()
            return ok

        mask = create_block_mask(allowed, batch if key_mask is not None else None, None, s, s,
                                 device=device)
        if key_mask is None:
            cache[(s, device)] = mask
        return mask

    def _longformer_chunks(self, q, k, v, key_mask):
        """The local rows by sliding chunks. With dilation r, the positions
        of one residue class modulo r form an undilated band problem (query
        ``i`` sees ``i - (w-1) r .. i`` causal, ``i +- (w//2) r`` otherwise,
        in steps of r): the r classes run as one batch. Global columns are
        taken out of the band and added as extra keys for every row."""
        b, h, s, dh = q.shape
        r = self.dilation
        lo, hi = (self.window - 1, 0) if self.causal else (self.window // 2, self.window // 2)
        key_ok = None if key_mask is None else key_mask[:, None, :]      # [B, 1, S]
        gk = gv = g_ok = None
        if self.globals:
            g = torch.tensor(self.globals, device=q.device)
            band_ok = torch.ones(s, dtype=torch.bool, device=q.device)
            band_ok[g] = False
            key_ok = band_ok if key_ok is None else key_ok & band_ok
            gk, gv = k[:, :, g], v[:, :, g]                               # [B, H, G, Dh]
            g_ok = torch.ones(1, 1, len(self.globals), dtype=torch.bool, device=q.device) \
                if key_mask is None else key_mask[:, None, g]
        if r == 1:
            if key_ok is not None:
                key_ok = key_ok.expand(b, 1, s) if key_ok.dim() == 1 else key_ok
            return sliding_chunk_attention(q, k, v, lo, hi, key_ok, gk, gv, g_ok)
        length = -(-s // r)
        pad = length * r - s

        def residues(t):  # [B, H, S, Dh] -> [B, H, r, L, Dh]
            return F.pad(t, (0, 0, 0, pad)).view(b, h, length, r, dh).transpose(2, 3)

        ok = torch.ones(b, s, dtype=torch.bool, device=q.device) if key_ok is None \
            else key_ok.expand(b, 1, s)[:, 0]
        ok = F.pad(ok, (0, pad), value=False).view(b, 1, length, r).transpose(2, 3)
        if gk is not None:
            gk, gv, g_ok = gk[:, :, None], gv[:, :, None], g_ok[:, :, None]
        out = sliding_chunk_attention(residues(q), residues(k), residues(v), lo, hi,
                                      ok, gk, gv, g_ok)                  # [B, H, r, L, Dh]
        return out.transpose(2, 3).reshape(b, h, length * r, dh)[:, :, :s]


class Block(nn.Module):
    """A pre-norm layer: ``x + drop(attn(attn_norm(x)))``, then
    ``x + drop(ffn(ffn_norm(x)))``."""

    def __init__(self, cfg: ModelConfig, layer: int, seq: int, dropout: float,
                 longformer_impl: str = "chunks"):
        super().__init__()
        self.attn_norm = nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps)
        self.attn = Attention(cfg, layer, seq, longformer_impl)
        self.ffn_norm = nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps)
        self.ffn = FeedForward(cfg, dropout)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, key_mask=None):
        x = x + self.drop(self.attn(self.attn_norm(x), key_mask))
        return x + self.drop(self.ffn(self.ffn_norm(x)))


# ---------------------------------------------------------------------------
# Hourglass resampling
# ---------------------------------------------------------------------------

def shift_right(x: torch.Tensor, amount: int) -> torch.Tensor:
    """``[B, S, D]`` shifted right by ``amount`` positions, zeros in front."""
    if amount == 0:
        return x
    return F.pad(x[:, : x.shape[1] - amount], (0, 0, amount, 0))


def average_groups(x: torch.Tensor, k: int) -> torch.Tensor:
    b, s, d = x.shape
    return x.view(b, s // k, k, d).mean(2)


def repeat_positions(x: torch.Tensor, k: int) -> torch.Tensor:
    return x.repeat_interleave(k, dim=1)


class ShortenAvg(nn.Module):
    """``shortening = "avg"``: the mean of each group of k positions."""

    def __init__(self, cfg: ModelConfig, k: int):
        super().__init__()
        self.k = k

    def forward(self, x):
        return average_groups(x, self.k)


class ShortenLinear(nn.Linear):
    """``shortening = "linear"``: each group of k positions, concatenated
    (position-major: channel ``j*D + d``), through ``nn.Linear(k*D, D)``
    (``shorten.weight [D, k*D]``, ``shorten.bias [D]``)."""

    def __init__(self, cfg: ModelConfig, k: int):
        super().__init__(k * cfg.d_model, cfg.d_model)
        self.k = k

    def forward(self, x):
        b, s, d = x.shape
        return super().forward(x.reshape(b, s // self.k, self.k * d))


class _Projections(_FusedProjections):
    """``q_proj``, ``k_proj``, ``v_proj``, ``out_proj``: ``nn.Linear(D, D,
    bias=False)`` each; ``k_proj`` and ``v_proj``, which read the same
    input, are one fused parameter ``kv_weight [2D, D]``."""

    def __init__(self, cfg: ModelConfig, k: int):
        super().__init__()
        d = cfg.d_model
        self.k, self.heads = k, cfg.heads
        self.q_proj = nn.Linear(d, d, bias=False)
        self._fuse("kv", ["k_proj", "v_proj"], d, bias=False,
                   order=["q_proj", "k_proj", "v_proj", "out_proj"])
        self.out_proj = nn.Linear(d, d, bias=False)

    def keys_values(self, x: torch.Tensor) -> tuple:
        """``k_proj(x)`` and ``v_proj(x)`` in one matmul, as views."""
        kv = F.linear(x, self.kv_weight)
        d = self._width
        return kv[..., :d], kv[..., d:]


class ShortenAttention(_Projections):
    """``shortening = "attention"``: ``pooled`` = the group means; the pooled
    query of group n attends (per head, scale 1/sqrt(Dh), no mask) to the k
    positions of its own group; the result is ``pooled +
    out_proj(attention)``."""

    def forward(self, x):
        b, s, d = x.shape
        n, k, h = s // self.k, self.k, self.heads
        pooled = average_groups(x, k)
        q = self.q_proj(pooled).view(b, n, 1, h, d // h).permute(0, 1, 3, 2, 4)  # [B,n,H,1,Dh]
        kx, vx = self.keys_values(x)
        kk = kx.reshape(b, n, k, h, d // h).permute(0, 1, 3, 2, 4)               # [B,n,H,k,Dh]
        vv = vx.reshape(b, n, k, h, d // h).permute(0, 1, 3, 2, 4)
        out = dense_attention(q, kk, vv, None)                                    # [B,n,H,1,Dh]
        return pooled + self.out_proj(out.reshape(b, n, d))


class UpsampleNaive(nn.Module):
    """``upsampling = "naive"``: each shortened position repeated k times."""

    def __init__(self, cfg: ModelConfig, k: int):
        super().__init__()
        self.k = k

    def forward(self, shortened, residual):
        return repeat_positions(shortened, self.k)


class UpsampleLinear(nn.Linear):
    """``upsampling = "linear"``: ``nn.Linear(D, k*D)`` per shortened position
    (``upsample.weight [k*D, D]``), output channels ``j*D .. (j+1)*D - 1``
    giving group position j."""

    def __init__(self, cfg: ModelConfig, k: int):
        super().__init__(cfg.d_model, k * cfg.d_model)
        self.k = k

    def forward(self, shortened, residual):
        b, n, d = shortened.shape
        return super().forward(shortened).reshape(b, n * self.k, d)


class UpsampleAttention(_Projections):
    """``upsampling = "attention"``: queries from the residual (the
    full-resolution input of shortening, before the shift), keys and values
    from the shortened sequence; position p sees the shortened positions i
    with ``i * k <= p`` (per head, scale 1/sqrt(Dh)); the result is the naive
    up-sampling ``+ out_proj(attention)``."""

    def forward(self, shortened, residual):
        h, k = self.heads, self.k
        s, n = residual.shape[1], shortened.shape[1]
        q = _split(self.q_proj(residual), h)
        ks, vs = self.keys_values(shortened)
        kk, vv = _split(ks, h), _split(vs, h)
        p = torch.arange(s, device=residual.device)[:, None]
        i = torch.arange(n, device=residual.device)[None, :]
        out = dense_attention(q, kk, vv, i * k <= p)
        return repeat_positions(shortened, k) + self.out_proj(_merge(out))


_SHORTEN = {"avg": ShortenAvg, "linear": ShortenLinear, "attention": ShortenAttention}
_UPSAMPLE = {"naive": UpsampleNaive, "linear": UpsampleLinear, "attention": UpsampleAttention}


class _Level(nn.Module):
    """One level of an hourglass and everything inside it.

    Attributes (state-dict prefixes): the centre level has ``layers``;
    any other level has ``pre``, ``shorten`` (parameters for linear and
    attention shortening only), ``inner`` (the next level), ``upsample``
    and ``post``. The level computes ``pre`` layers, then
    ``x = x + upsample(inner(shorten(shift(x))), x)`` and the ``post``
    layers; causal models shift right by ``k - 1`` before shortening.
    """

    def __init__(self, cfg: Optional[ModelConfig] = None, level: int = 0,
                 counter: Optional[list] = None, dropout: float = 0.0,
                 longformer_impl: str = "chunks"):
        super().__init__()
        if cfg is not None:
            self._build_level(cfg, level, counter, dropout, longformer_impl)

    def _build_level(self, cfg: ModelConfig, level: int, counter: list,
                     dropout: float, longformer_impl: str):
        """Creates this level's layers and, below the centre, its resampling
        and the next level; ``counter[0]`` is the running layer index."""
        levels = cfg.levels
        centre = len(levels) // 2
        factor = levels[level][1]
        seq = cfg.seq_len // factor

        def stack(count):
            blocks = []
            for _ in range(count):
                blocks.append(Block(cfg, counter[0], seq, dropout, longformer_impl))
                counter[0] += 1
            return nn.ModuleList(blocks)

        self.is_centre = level == centre
        self.full_resolution = factor == 1
        if self.is_centre:
            self.layers = stack(levels[level][0])
            return
        self.pre = stack(levels[level][0])
        self.k = levels[level + 1][1] // factor
        self.shift = self.k - 1 if cfg.causal else 0
        if self.k > 1:
            self.shorten = _SHORTEN[cfg.shortening](cfg, self.k)
        self.inner = _Level(cfg, level + 1, counter, dropout, longformer_impl)
        if self.k > 1:
            self.upsample = _UPSAMPLE[cfg.upsampling](cfg, self.k)
        self.post = stack(levels[len(levels) - 1 - level][0])

    def _run_level(self, x, key_mask):
        # The padding mask applies only at full resolution.
        mask = key_mask if self.full_resolution else None
        if self.is_centre:
            for block in self.layers:
                x = block(x, mask)
            return x
        for block in self.pre:
            x = block(x, mask)
        if self.k == 1:
            x = self.inner._run_level(x, key_mask)
        else:
            shortened = self.shorten(shift_right(x, self.shift))
            inner = self.inner._run_level(shortened, key_mask)
            x = x + self.upsample(inner, x)
        for block in self.post:
            x = block(x, mask)
        return x

    def forward(self, x, key_mask=None):
        return self._run_level(x, key_mask)


# ---------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------

class TfcModel(_Level):
    """A tfc model in PyTorch; ``state_dict()`` names are the checkpoint's.

    ``forward(tokens [B, S] int64, mask [B, S] or None)`` returns logits:
    ``[B, S, V]`` for ``task = "lm"`` (``x @ embed.weight^T`` when
    ``tie_embeddings``), ``[B, C]`` (``C`` = 1 for bce) for
    ``task = "classify"`` (the CLS position 0 after the final norm).
    ``loss(logits, targets)`` is the model's training loss. ``mask`` (1 for
    CLS and real tokens, 0 for padding) is used by classifiers only: padding
    keys are left out of attention in the full-resolution layers.
    """

    def __init__(self, cfg: ModelConfig, dropout: Optional[float] = None,
                 longformer_impl: str = "chunks"):
        super().__init__()
        self.cfg = cfg
        p = cfg.dropout if dropout is None else dropout
        d = cfg.d_model
        self.embed = nn.Embedding(cfg.vocab, d)
        nn.init.normal_(self.embed.weight, std=0.02)
        if cfg.positions == "learned":
            self.pos_embed = nn.Embedding(cfg.seq_len, d)
            nn.init.normal_(self.pos_embed.weight, std=0.02)
        elif cfg.positions == "sinusoidal":
            self.register_buffer("sinusoid", sinusoidal_positions(cfg.seq_len, d),
                                 persistent=False)
        self.drop = nn.Dropout(p)
        counter = [0]
        if cfg.levels:
            self._build_level(cfg, 0, counter, p, longformer_impl)
        else:
            self.is_centre, self.full_resolution = True, True
            self.layers = nn.ModuleList(
                [Block(cfg, i, cfg.seq_len, p, longformer_impl) for i in range(cfg.layers)])
        self.norm = nn.LayerNorm(d, eps=cfg.norm_eps)
        if cfg.task == "lm":
            # Tied: the logits use embed.weight; no lm_head.weight exists.
            self.lm_head = None if cfg.tie_embeddings else nn.Linear(d, cfg.vocab, bias=False)
        else:
            self.classifier = nn.Linear(d, cfg.outputs)
        for name, mod in self.named_modules():
            if isinstance(mod, nn.Linear):
                nn.init.normal_(mod.weight, std=0.02)
                if mod.bias is not None:
                    nn.init.zeros_(mod.bias)

    def forward(self, tokens: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        cfg = self.cfg
        tokens = tokens.long()
        tokens = torch.where((tokens < 0) | (tokens >= cfg.vocab), torch.zeros_like(tokens), tokens)
        x = self.embed(tokens)
        if cfg.positions == "learned":
            x = x + self.pos_embed.weight[: x.shape[1]]
        elif cfg.positions == "sinusoidal":
            x = x + self.sinusoid[: x.shape[1]].to(x.dtype)
        x = self.drop(x)
        key_mask = None
        if cfg.task == "classify" and mask is not None:
            key_mask = mask != 0
        x = self._run_level(x, key_mask)
        x = self.norm(x)
        if cfg.task == "lm":
            return F.linear(x, self.embed.weight) if self.lm_head is None else self.lm_head(x)
        return self.classifier(x[:, 0])

    def loss(self, logits: torch.Tensor, targets: torch.Tensor, reduction: str = "mean"):
        """lm: cross-entropy over all ``B*S`` positions; classify:
        ``cross_entropy`` of ``[B, C]`` logits, or for bce
        ``binary_cross_entropy_with_logits`` of the single logit."""
        if self.cfg.task == "lm":
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                   targets.reshape(-1).long(), reduction=reduction)
        if self.cfg.loss == "bce":
            return F.binary_cross_entropy_with_logits(
                logits[:, 0], targets.to(logits.dtype), reduction=reduction)
        return F.cross_entropy(logits, targets.long(), reduction=reduction)


def build_model(spec, batch: Optional[int] = None, seq_len: Optional[int] = None,
                dropout: Optional[float] = None, longformer_impl: str = "chunks") -> TfcModel:
    """The PyTorch model of a spec (a path or a ``ModelConfig``), built for
    ``seq_len`` (default: the spec's). ``dropout`` overrides the spec's rate
    (0 for benchmarks without dropout). ``longformer_impl`` is ``"chunks"``
    (sliding chunks, O(S * window)), ``"dense"`` (an S x S mask, the
    literal definition) or ``"flex"`` (FlexAttention, for compiled models
    on a GPU)."""
    cfg = spec if isinstance(spec, ModelConfig) else load_config(spec, batch, seq_len)
    return TfcModel(cfg, dropout, longformer_impl)


def load_checkpoint(model: nn.Module, path: str, strict: bool = True):
    """Loads a tfc checkpoint into ``model`` by name (``strict`` as in
    ``load_state_dict``); tensors are cast to the model's dtype."""
    state = load_safetensors(path)
    own = model.state_dict()
    for name, t in state.items():
        if name in own:
            state[name] = t.to(own[name].dtype)
    return model.load_state_dict(state, strict=strict)


# ---------------------------------------------------------------------------
# Performer features
# ---------------------------------------------------------------------------

def orthogonal_features(rows: int, cols: int, orthogonal: bool = True,
                        generator: Optional[torch.Generator] = None) -> torch.Tensor:
    """``[rows, cols]`` FAVOR+ random features: blocks of ``cols``
    orthonormal rows (QR of a Gaussian block), each row scaled to the norm
    of a fresh ``N(0, I)`` vector; i.i.d. Gaussian rows when not
    orthogonal. (The same distribution as tfc's initialiser, not the same
    numbers.)"""
    if not orthogonal:
        return torch.randn(rows, cols, generator=generator)
    blocks = []
    for _ in range(-(-rows // cols)):
        g = torch.randn(cols, cols, generator=generator, dtype=torch.float64)
        qm, _ = torch.linalg.qr(g)
        blocks.append(qm.t())
    q = torch.cat(blocks)[:rows]
    norms = torch.randn(rows, cols, generator=generator, dtype=torch.float64).norm(dim=1)
    return (q * norms[:, None]).to(torch.float32)


def redraw_features(model: nn.Module, generator: Optional[torch.Generator] = None) -> None:
    """Draws new random features for every Performer layer."""
    for mod in model.modules():
        if isinstance(mod, Attention) and mod.kind == "performer":
            m, dh = mod.features.shape
            mod.features.copy_(orthogonal_features(m, dh, model.cfg.orthogonal, generator))


# ---------------------------------------------------------------------------
# Data, as a compiled model's runtime reads it
# ---------------------------------------------------------------------------

def load_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise ValueError(f"{path}: file is empty")
    return data


def _llround(x: float) -> int:
    """C's llround: halves away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def split_span(data: bytes, train_fraction: float, val_fraction: float, split: str) -> bytes:
    """The bytes of one split: train = ``[0, round(n*train))``, val = up to
    ``round(n*(train+val))``, test = the rest."""
    n = len(data)
    train_end = min(_llround(n * train_fraction), n)
    val_end = max(min(_llround(n * (train_fraction + val_fraction)), n), train_end)
    return {"train": data[:train_end], "val": data[train_end:val_end],
            "test": data[val_end:]}[split]


def eval_lm_batches(span: bytes, batch: int, seq_len: int,
                    max_batches: Optional[int] = None) -> Iterator[tuple]:
    """Evaluation batches of a byte span: window w covers bytes
    ``[w*S, w*S + S + 1)``; batch i holds windows ``i*B .. i*B + B - 1``;
    only full batches. Yields ``(tokens, targets)`` int64 ``[B, S]``."""
    windows = (len(span) - 1) // seq_len if len(span) > seq_len else 0
    batches = windows // batch
    if max_batches:
        batches = min(batches, max_batches)
    arr = np.frombuffer(span, dtype=np.uint8)
    for i in range(batches):
        rows = [arr[(i * batch + b) * seq_len:(i * batch + b) * seq_len + seq_len + 1]
                for b in range(batch)]
        w = torch.from_numpy(np.stack(rows).astype(np.int64))
        yield w[:, :-1], w[:, 1:]


def sample_lm_batch(span: bytes, batch: int, seq_len: int,
                    generator: Optional[torch.Generator] = None) -> tuple:
    """A random training batch: B windows of S + 1 bytes at uniform starts."""
    starts = torch.randint(0, len(span) - seq_len, (batch,), generator=generator)
    arr = torch.frombuffer(bytearray(span), dtype=torch.uint8)
    w = torch.stack([arr[s:s + seq_len + 1] for s in starts.tolist()]).long()
    return w[:, :-1], w[:, 1:]


@dataclass
class Example:
    text: bytes
    label: int


def load_jsonl(path: str, classes: int = 0) -> list:
    """JSONL examples: ``{"text", "label"}`` or Amazon Reviews ``{"rating",
    "text"}`` (1-3 -> 0, 4-5 -> 1; "label" wins). Blank lines are skipped."""
    examples = []
    with open(path, "rb") as f:
        content = f.read()
    for line_no, line in enumerate(content.split(b"\n"), 1):
        if not line.strip(b" \t\r"):
            continue
        obj = json.loads(line)
        if "label" in obj:
            label = obj["label"]
        else:
            rating = obj["rating"]
            if rating != int(rating) or not 1 <= rating <= 5:
                raise ValueError(f"{path}:{line_no}: \"rating\" must be one of 1..5")
            label = 1 if rating >= 4 else 0
        label = int(label)
        if classes > 0 and label >= classes:
            raise ValueError(f"{path}:{line_no}: label {label} is out of range")
        examples.append(Example(obj["text"].encode("utf-8"), label))
    if not examples:
        raise ValueError(f"{path}: no records")
    return examples


def _is_word_byte(c: int) -> bool:
    return 97 <= c <= 122 or 65 <= c <= 90 or 48 <= c <= 57 or c >= 0x80


def split_words(text: bytes) -> list:
    """Word tokens of UTF-8 ``text``: maximal runs of ASCII letters, digits
    and bytes >= 0x80 (ASCII lowercased); every other printable ASCII byte
    is a token of its own; spaces and control bytes separate."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if _is_word_byte(c):
            j = i
            while j < n and _is_word_byte(text[j]):
                j += 1
            out.append(text[i:j].lower())  # bytes.lower() touches ASCII only.
            i = j
        else:
            if 0x20 < c < 0x7F:
                out.append(bytes([c]))
            i += 1
    return out


def build_vocab(examples: Sequence[Example], max_size: int, min_freq: int = 1) -> list:
    """Token list by id: PAD, UNK, CLS, then words seen >= min_freq times,
    most frequent first, ties in byte order, at most ``max_size`` in all."""
    counts: dict = {}
    for e in examples:
        for w in split_words(e.text):
            counts[w] = counts.get(w, 0) + 1
    words = sorted((w for w, c in counts.items() if c >= min_freq),
                   key=lambda w: (-counts[w], w))
    return list(SPECIAL_TOKENS) + words[: max(0, max_size - len(SPECIAL_TOKENS))]


def load_vocab(path: str) -> dict:
    """A ``.vocab`` file (``tfc-vocab 1 <size>`` then one token per line)
    as ``{token bytes: id}``."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if not lines or not lines[0].startswith(b"tfc-vocab 1 "):
        raise ValueError(f"{path}:1: expected 'tfc-vocab 1 <size>'")
    size = int(lines[0][len(b"tfc-vocab 1 "):])
    tokens = lines[1:1 + size]
    if len(tokens) != size or tuple(tokens[:3]) != SPECIAL_TOKENS:
        raise ValueError(f"{path}: malformed vocabulary")
    return {t: i for i, t in enumerate(tokens)}


def save_vocab(path: str, tokens: Sequence[bytes]) -> None:
    with open(path, "wb") as f:
        f.write(b"tfc-vocab 1 %d\n" % len(tokens))
        for t in tokens:
            f.write(t + b"\n")


def encode(vocab: dict, text: bytes, seq_len: int) -> tuple:
    """``(ids, mask)`` of length ``seq_len``: CLS, the token ids (UNK for
    unknown words), cut to ``seq_len``, then PAD; mask 1 for CLS and tokens."""
    ids = [CLS_ID] + [vocab.get(w, UNK_ID) for w in split_words(text)]
    ids = ids[:seq_len]
    mask = [1.0] * len(ids) + [0.0] * (seq_len - len(ids))
    ids = ids + [PAD_ID] * (seq_len - len(ids))
    return ids, mask


def classify_batches(examples: Sequence[Example], vocab: dict, batch: int, seq_len: int,
                     max_batches: Optional[int] = None) -> Iterator[tuple]:
    """Evaluation batches as ``./model eval`` builds them: ``batch`` lines at
    a time in file order, the last batch filled with empty texts (CLS then
    PAD, label 0). Yields ``(tokens, mask, labels, real)`` with ``real`` the
    number of genuine rows."""
    batches = -(-len(examples) // batch)
    if max_batches:
        batches = min(batches, max_batches)
    for i in range(batches):
        rows = list(examples[i * batch:(i + 1) * batch])
        real = len(rows)
        rows += [Example(b"", 0)] * (batch - real)
        enc = [encode(vocab, e.text, seq_len) for e in rows]
        tokens = torch.tensor([e[0] for e in enc], dtype=torch.int64)
        mask = torch.tensor([e[1] for e in enc], dtype=torch.float32)
        labels = torch.tensor([e.label for e in rows], dtype=torch.int64)
        yield tokens, mask, labels, real


@torch.no_grad()
def evaluate(model: TfcModel, data_path: str, batch: int, split: str = "val",
             max_batches: Optional[int] = None, vocab_path: Optional[str] = None) -> dict:
    """The loss that ``./model eval`` reports, computed by ``model``: lm, the
    mean over batches of the mean next-byte cross-entropy; classify, the mean
    per-line cross-entropy over the real lines (``vocab_path``: the
    ``<weights>.vocab`` file). Also accuracy for classifiers."""
    cfg = model.cfg
    was_training = model.training
    model.eval()
    try:
        if cfg.task == "lm":
            span = split_span(load_bytes(data_path), cfg.train_fraction, cfg.val_fraction, split)
            total, count = 0.0, 0
            for tokens, targets in eval_lm_batches(span, batch, cfg.seq_len, max_batches):
                total += float(model.loss(model(tokens), targets))
                count += 1
            if count == 0:
                raise ValueError(f"{data_path}: the {split} split is too short for one batch")
            loss = total / count
            return {"task": "lm", "split": split, "loss": loss,
                    "bits_per_char": loss / math.log(2), "perplexity": math.exp(loss),
                    "tokens": count * batch * cfg.seq_len, "batches": count}
        vocab = load_vocab(vocab_path)
        examples = load_jsonl(data_path, cfg.classes)
        losses, correct = [], 0
        for tokens, mask, labels, real in classify_batches(examples, vocab, batch,
                                                           cfg.seq_len, max_batches):
            logits = model(tokens, mask)[:real].double()
            y = labels[:real]
            if cfg.outputs == 1:
                losses += F.binary_cross_entropy_with_logits(
                    logits[:, 0], y.double(), reduction="none").tolist()
                pred = (logits[:, 0] > 0).long()
            else:
                losses += F.cross_entropy(logits, y, reduction="none").tolist()
                pred = logits.argmax(-1)
            correct += int((pred == y).sum())
        return {"task": "classify", "examples": len(losses),
                "loss": sum(losses) / len(losses), "accuracy": correct / len(losses)}
    finally:
        model.train(was_training)


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------

def make_optimizer(model: nn.Module, cfg: Optional[ModelConfig] = None,
                   fused: bool = False) -> torch.optim.Optimizer:
    """``torch.optim.Adam`` (weight decay added to the gradient) or ``AdamW``
    (decoupled), from ``[training]``, over every trainable parameter; with
    ``fused``, PyTorch's one-kernel implementation (CUDA parameters)."""
    cfg = cfg or model.cfg
    params = [p for p in model.parameters() if p.requires_grad]
    cls = torch.optim.AdamW if cfg.optimizer == "adamw" else torch.optim.Adam
    extra = {"fused": True} if fused else {}
    return cls(params, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.eps,
               weight_decay=cfg.weight_decay, **extra)


def learning_rate(step: int, cfg: ModelConfig) -> float:
    """The rate of 1-based ``step``: linear warm-up from 0 over ``warmup``
    steps, then constant, linear to 0 at ``steps``, a half cosine to 0 at
    ``steps``, or ``lr * sqrt(warmup / step)``."""
    if cfg.warmup and step <= cfg.warmup:
        return cfg.lr * step / cfg.warmup
    if cfg.schedule == "constant":
        return cfg.lr
    if cfg.schedule == "inverse_sqrt":
        return cfg.lr * math.sqrt(cfg.warmup / step)
    span = max(1, cfg.steps - cfg.warmup)
    progress = min(1.0, (step - cfg.warmup) / span)
    if cfg.schedule == "linear":
        return cfg.lr * (1.0 - progress)
    return cfg.lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def train_step(model: TfcModel, optimizer: torch.optim.Optimizer, tokens, targets,
               mask=None, step: Optional[int] = None) -> float:
    """One step: forward, loss, backward, optional global-norm clip
    (``training.clip``), learning rate of ``step`` (when given) and the
    optimizer update. Returns the loss. With ``training.precision = "bf16"``
    the forward and the loss run under bf16 autocast (``autocast``); the
    backward follows the forward's dtypes, the gradients of the float32
    weights, the clip and the optimizer stay float32."""
    cfg = model.cfg
    if step is not None:
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, cfg)
    optimizer.zero_grad(set_to_none=True)
    with autocast(cfg, tokens.device.type):
        loss = model.loss(model(tokens, mask), targets)
    loss.backward()
    if cfg.clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
    optimizer.step()
    return float(loss)


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

_SHARPENED = {"q_proj": 2.0, "k_proj": 2.0, "q_global_proj": 2.0, "k_global_proj": 2.0,
              "lm_head": 3.0, "classifier": 3.0}


def perturb_checkpoint(src: str, dst: str, seed: int = 0) -> None:
    """Writes a copy of checkpoint ``src`` with random weights of a larger
    scale than initialisation (so that every part of the model moves the
    loss): matrices ``N(0, 1/fan_in)``, embeddings ``N(0, 1)``, norm gains
    ``1 + N(0, 0.2)``, biases and norm shifts ``N(0, 0.2)``, convolution
    weights ``N(0, 0.5)``; query/key projections twice and output heads three
    times the matrix scale. Performer features are kept. A ``.vocab`` file
    beside ``src`` is copied beside ``dst``."""
    g = torch.Generator().manual_seed(seed)
    out = OrderedDict()
    for name, t in load_safetensors(src).items():
        t = t.float()
        if name.endswith(".features"):
            out[name] = t
            continue
        r = torch.randn(t.shape, generator=g)
        leaf = name.rsplit(".", 1)[-1]
        if "dconv" in name:
            r = r * 0.5
        elif leaf == "bias":
            r = r * 0.2
        elif "norm" in name:
            r = 1.0 + 0.2 * r
        elif "embed" in name:
            pass
        else:
            r = r / math.sqrt(t.shape[-1])
            # Sharper attention and outputs make every detail show in the loss.
            if leaf == "weight" and name.rsplit(".", 2)[-2] in _SHARPENED:
                r = r * _SHARPENED[name.rsplit(".", 2)[-2]]
        out[name] = r
    save_safetensors(dst, out, safetensors_metadata(src))
    if os.path.exists(src + ".vocab"):
        shutil.copyfile(src + ".vocab", dst + ".vocab")


def _json_number(x) -> str:
    if isinstance(x, float):
        return repr(x)
    return json.dumps(x)


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="evaluate tfc weights with the PyTorch model")
    ev.add_argument("spec")
    ev.add_argument("--weights", required=True)
    ev.add_argument("--data", required=True)
    ev.add_argument("--batch", type=int)
    ev.add_argument("--seq-len", type=int)
    ev.add_argument("--split", default="val", choices=["train", "val", "test"])
    ev.add_argument("--batches", type=int)
    ev.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    ev.add_argument("--longformer", default="chunks", choices=["chunks", "dense"])
    pe = sub.add_parser("perturb", help="write a checkpoint with random, larger weights")
    pe.add_argument("src")
    pe.add_argument("dst")
    pe.add_argument("--seed", type=int, default=0)
    na = sub.add_parser("names", help="print the state-dict names and shapes of a spec")
    na.add_argument("spec")
    na.add_argument("--seq-len", type=int)
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except ValueError as e:  # a spec error: one line, not a traceback
        print(f"tfc_torch.py: error: {e}", file=sys.stderr)
        return 1


def _run(args) -> int:
    if args.command == "perturb":
        perturb_checkpoint(args.src, args.dst, args.seed)
        return 0
    if args.command == "names":
        model = build_model(args.spec, seq_len=args.seq_len)
        for name, t in model.state_dict().items():
            print(name, list(t.shape))
        return 0
    cfg = load_config(args.spec, args.batch, args.seq_len)
    model = TfcModel(cfg, dropout=0.0, longformer_impl=args.longformer)
    model.to(getattr(torch, args.dtype))
    load_checkpoint(model, args.weights, strict=True)
    metrics = evaluate(model, args.data, cfg.batch, args.split, args.batches,
                       vocab_path=args.weights + ".vocab")
    print("{" + ",".join(f"{json.dumps(k)}:{_json_number(v)}" for k, v in metrics.items()) + "}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
