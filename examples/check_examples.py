#!/usr/bin/env python3
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

"""Checks that the code examples of README.md and the public headers are
real code: every one is in a file of examples/, which the test command
builds and runs.

- README.md: each ```cpp block is in one of examples/*.cc, and each ```ini
  block in one of examples/*.ini.
- include/**/*.h: a code example in a comment is introduced by a comment
  line ending in "(examples/<file>):" and is the indented comment lines
  ("//   ...") after it; it must be in that file. An indented comment block
  that looks like code (a line ending in ";") without such a line is an
  error.

"In a file" means: its lines, stripped of surrounding white space, with
runs of white space folded and blank lines left out, appear in that order
in the file (which may have more lines in between, e.g. checks of the
results).

Usage: check_examples.py <repository root>
"""
import glob
import os
import re
import sys

MARKER = re.compile(r"^//.*\((examples/[\w./-]+)\):\s*$")


def lines_of(text):
    """The non-blank lines, stripped, runs of white space folded to one."""
    return [" ".join(line.split()) for line in text.splitlines()
            if line.strip()]


def contains_in_order(haystack, needle):
    it = iter(haystack)
    return all(any(line == h for h in it) for line in needle)


def readme_blocks(text):
    """(language, first line number, code) of each fenced block."""
    blocks, lang, start, body = [], None, 0, []
    for number, line in enumerate(text.splitlines(), 1):
        fence = re.match(r"^```(\w*)\s*$", line)
        if fence and lang is None:
            lang, start, body = fence.group(1) or "text", number, []
        elif line.startswith("```") and lang is not None:
            blocks.append((lang, start, "\n".join(body)))
            lang = None
        elif lang is not None:
            body.append(line)
    return blocks


def header_blocks(path):
    """(marker file or None, first line number, code) of each indented
    comment block."""
    blocks, current = [], None
    pending_marker = None
    lines = open(path, encoding="utf-8").read().splitlines()
    for number, line in enumerate(lines, 1):
        marker = MARKER.match(line)
        indented = line.startswith("//   ")
        blank = line.strip() == "//"
        if indented:
            if current is None:
                current = [pending_marker, number, []]
            current[2].append(line[2:])
            continue
        if blank and current is not None:
            current[2].append("")
            continue
        if current is not None:
            blocks.append((current[0], current[1], "\n".join(current[2])))
            current = None
        pending_marker = marker.group(1) if marker else (
            pending_marker if blank else None)
    if current is not None:
        blocks.append((current[0], current[1], "\n".join(current[2])))
    return blocks


def looks_like_code(code):
    """A line ending in ";" once a trailing // comment is removed."""
    return any(re.sub(r"\s*//.*$", "", line).rstrip().endswith(";")
               for line in code.splitlines())


def main(root):
    errors = []
    examples = {}
    for path in sorted(glob.glob(os.path.join(root, "examples", "*"))):
        if path.endswith((".cc", ".ini")):
            examples[os.path.relpath(path, root)] = lines_of(
                open(path, encoding="utf-8").read())

    readme = os.path.join(root, "README.md")
    checked = 0
    for lang, start, code in readme_blocks(open(readme, encoding="utf-8").read()):
        suffix = {"cpp": ".cc", "ini": ".ini"}.get(lang)
        if suffix is None:
            continue
        needle = lines_of(code)
        if not any(name.endswith(suffix) and contains_in_order(lines, needle)
                   for name, lines in examples.items()):
            errors.append(f"README.md:{start}: this ```{lang} block is in no "
                          f"examples/*{suffix} file")
        checked += 1

    for header in sorted(glob.glob(os.path.join(root, "include", "**", "*.h"),
                                   recursive=True)):
        name = os.path.relpath(header, root)
        for marker, start, code in header_blocks(header):
            if marker is None:
                if looks_like_code(code):
                    errors.append(f"{name}:{start}: a code example without a "
                                  "line naming its examples/ file")
                continue
            if marker not in examples:
                errors.append(f"{name}:{start}: {marker} does not exist")
            elif not contains_in_order(examples[marker], lines_of(code)):
                errors.append(f"{name}:{start}: this example is not in {marker}")
            checked += 1

    for error in errors:
        print(error)
    print(f"check_examples: {checked} examples checked, {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
