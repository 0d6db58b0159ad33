#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Cache keys for expensive artefacts (Bochs, kernels).

A key is the sha256 of every input that can change the artefact: the files
(by path relative to the repository and by content) and free-form strings
such as pinned checksums or configure lines.  Order of the files does not
matter; a missing input file is an error, never silently skipped.

    cachekey.py [-s STRING]... FILE...   print the key (first 16 hex digits)
"""

import argparse
import hashlib
import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cache_key(files, strings=(), top=TOP):
    h = hashlib.sha256()
    for s in strings:
        h.update(b"s\0" + s.encode() + b"\0")
    for path in sorted(os.path.relpath(os.path.abspath(p), top) for p in files):
        with open(os.path.join(top, path), "rb") as f:
            data = f.read()
        h.update(b"f\0" + path.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()[:16]


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("-s", "--string", action="append", default=[])
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    try:
        print(cache_key(args.files, args.string))
    except OSError as e:
        print(f"cachekey: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
