#!/usr/bin/env python3
# ===- check-sizes.py - Source files and functions within their limits -----===#
#
# Part of tfc, a compiler for efficient transformers.
#
# ===-----------------------------------------------------------------------===#
#
# usage: scripts/check-sizes.py [--max-file N] [--max-function N] [FILE...]
#
# Reports every C++ source file of the project over 1,000 lines and every
# function over 150 lines (its header to its closing brace), one line each
# as `path:line: what`, and exits 1 if there is any. Without FILE it checks
# the tracked *.cpp and *.h files outside test/ (tests are exempt, and the
# generated .inc files are not tracked). A function is a brace block whose
# header ends in a parameter list (with qualifiers, an initializer list or
# a trailing return type after it) at namespace or class scope; lambdas and
# nested blocks count towards the function that holds them.
import argparse
import pathlib
import re
import subprocess
import sys

CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else)\b")
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$")


def strip(text):
    """The text with comments, string and character literals blanked and
    line breaks kept, so that positions still give line numbers."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(first line, last line, header) of each function definition."""
    code = strip(text)
    stack = []  # per open brace: "scope" (namespace/class) or "block"
    found = []
    start = 0  # where the current declaration's text starts
    for i, c in enumerate(code):
        if c in ";}":
            if c == "}" and stack:
                kind, line, header = stack.pop()
                if kind == "function":
                    found.append((line, code.count("\n", 0, i) + 1, header))
            start = i + 1
        elif c == "{":
            header = " ".join(code[start:i].split())
            inside_scope = all(k == "scope" for k, _, _ in stack)
            if not inside_scope:
                stack.append(("block", 0, ""))
            elif SCOPE.search(header) or header.endswith("=") or not header:
                stack.append(("scope" if SCOPE.search(header) else "block", 0, ""))
            elif ")" in header and not CONTROL.match(header):
                first = start + len(code[start:i]) - len(code[start:i].lstrip())
                stack.append(("function", code.count("\n", 0, first) + 1, header))
            else:
                stack.append(("block", 0, ""))
            start = i + 1
    return found


def tracked(root):
    files = subprocess.run(
        ["git", "ls-files", "*.cpp", "*.h"], cwd=root, capture_output=True,
        text=True, check=True).stdout.split()
    return [root / f for f in files if not f.startswith("test/")]


def main():
    parser = argparse.ArgumentParser(description="Source files and functions within their limits")
    parser.add_argument("--max-file", type=int, default=1000)
    parser.add_argument("--max-function", type=int, default=150)
    parser.add_argument("files", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    problems = 0
    for path in args.files or tracked(root):
        text = path.read_text()
        name = path.relative_to(root) if path.is_absolute() else path
        lines = text.count("\n")
        if lines > args.max_file:
            print(f"{name}:1: {lines} lines (at most {args.max_file})")
            problems += 1
        for first, last, header in functions(text):
            if last - first + 1 > args.max_function:
                what = header.split("(")[0].split()[-1] if "(" in header else header
                print(f"{name}:{first}: function '{what}' is {last - first + 1}"
                      f" lines (at most {args.max_function})")
                problems += 1
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
