#!/usr/bin/env python3
"""Writes the kernel image of the first `gpu.binary` in an MLIR file.

usage: scripts/ptx-of.py IN.mlir [OUT]   (IN may be '-' for stdin; OUT
                                           defaults to stdout)

`gpu-module-to-binary` stores the image as a string attribute, `assembly
= "..."` for PTX (format=isa) or `bin = "..."` for a cubin or fatbin,
with every byte that is not printable escaped as \\XX (hex), and `\\\\`,
`\\"`. The PTX string carries a trailing NUL, which ptxas rejects; it is
dropped.
"""

import re
import sys


def kernel_image(text):
    """The bytes of the first gpu.binary object in `text`, or None."""
    m = re.search(r'(bin|assembly) = "((?:[^"\\]|\\.)*)"', text, re.S)
    if not m:
        return None
    kind, s = m.group(1), m.group(2)
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == "\\":
            if s[i + 1] in '\\"':
                out += s[i + 1].encode()
                i += 2
            else:
                out.append(int(s[i + 1:i + 3], 16))
                i += 3
        else:
            out += s[i].encode("utf-8", "surrogateescape")
            i += 1
    return bytes(out.rstrip(b"\0") if kind == "assembly" else out)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: ptx-of.py IN.mlir [OUT]")
    src = sys.stdin if sys.argv[1] == "-" else open(sys.argv[1], encoding="utf-8",
                                                    errors="surrogateescape")
    image = kernel_image(src.read())
    if image is None:
        sys.exit(f"ptx-of.py: {sys.argv[1]}: no gpu.binary with an image")
    if len(sys.argv) == 3:
        with open(sys.argv[2], "wb") as f:
            f.write(image)
    else:
        sys.stdout.buffer.write(image)


if __name__ == "__main__":
    main()
