#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Fetch the project's pinned sources from Debian's archive.

The only registry we may use is Debian's archive, and we must not touch
/etc/apt: apt runs with a private configuration (sources file, lists and
cache directories of our own) built at run time from the mirror URIs that
the machine's apt configuration already names.  Every artefact is pinned in
lab/build/sources.lock by version and sha256; the archive's own index must agree
with the pin and the downloaded bytes must match it.

    sources.py fetch NAME... [--dest DIR]   print the verified file path(s)
"""

import argparse
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
LOCK = os.path.join(HERE, "sources.lock")
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


class SourceError(Exception):
    """A pinned artefact could not be fetched or verified."""


class Pin:
    def __init__(self, name, suite, kind, spec, filename, sha256):
        if kind not in ("orig", "deb"):
            raise SourceError(f"{name}: unknown kind '{kind}'")
        if not re.fullmatch(r"[0-9a-f]{64}", sha256):
            raise SourceError(f"{name}: malformed sha256 '{sha256}'")
        self.name, self.suite, self.kind = name, suite, kind
        self.spec, self.filename, self.sha256 = spec, filename, sha256

    @property
    def security(self):
        return self.suite.endswith("-security")


def parse_lock(text):
    pins = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 6:
            raise SourceError(f"sources.lock:{lineno}: expected 6 fields, got {len(fields)}")
        pin = Pin(*fields)
        if pin.name in pins:
            raise SourceError(f"sources.lock:{lineno}: '{pin.name}' pinned twice")
        pins[pin.name] = pin
    return pins


def load_pins(path=LOCK):
    with open(path) as f:
        return parse_lock(f.read())


def _apt_entries(etc):
    """Yield (uri, [suites]) for every deb/deb-src entry in an apt config."""
    one_line = [os.path.join(etc, "sources.list")]
    one_line += sorted(glob.glob(os.path.join(etc, "sources.list.d", "*.list")))
    for path in one_line:
        if not os.path.isfile(path):
            continue
        for line in open(path):
            line = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
            if len(line) >= 3 and line[0] in ("deb", "deb-src"):
                yield line[1], [line[2]]
    for path in sorted(glob.glob(os.path.join(etc, "sources.list.d", "*.sources"))):
        for stanza in re.split(r"\n\s*\n", open(path).read()):
            fields = {}
            for line in stanza.splitlines():
                m = re.match(r"([A-Za-z-]+):\s*(.*)", line)
                if m and not line.startswith("#"):
                    fields[m.group(1).lower()] = m.group(2).split()
            if fields.get("enabled", ["yes"])[0] == "no":
                continue
            for uri in fields.get("uris", []):
                yield uri, fields.get("suites", [])


def mirror_for(pin, etc="/etc/apt"):
    """The machine's own mirror URI that serves the pin's archive."""
    env = "CRIU_CET_SECURITY_MIRROR" if pin.security else "CRIU_CET_MIRROR"
    if os.environ.get(env):
        return os.environ[env].rstrip("/")
    for uri, suites in _apt_entries(etc):
        if "debian" not in uri:
            continue
        if any(s.endswith("-security") == pin.security for s in suites):
            return uri.rstrip("/")
    kind = "security" if pin.security else "main"
    raise SourceError(f"{pin.name}: no Debian {kind} mirror named in {etc} (set {env})")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def parse_print_uris(output, filename):
    """Find (uri, sha256) for filename in apt's --print-uris output."""
    for line in output.splitlines():
        m = re.match(r"'([^']+)'\s+(\S+)\s+\d+\s+(?:SHA256:)?([0-9a-f]{64})", line)
        if m and m.group(2) == filename:
            return m.group(1), m.group(3)
    raise SourceError(f"the archive index does not list {filename}")


def _private_apt(pin, workdir):
    mirror = mirror_for(pin)
    line = "deb-src" if pin.kind == "orig" else "deb"
    listfile = os.path.join(workdir, "sources.list")
    with open(listfile, "w") as f:
        f.write(f"{line} [signed-by={KEYRING}] {mirror} {pin.suite} main\n")
    for d in ("lists/partial", "cache/archives/partial"):
        os.makedirs(os.path.join(workdir, d), exist_ok=True)
    return ["-o", f"Dir::Etc::SourceList={listfile}",
            "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={workdir}/lists",
            "-o", f"Dir::Cache={workdir}/cache",
            "-o", "APT::Sandbox::User=root", "-q"]


def _run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        raise SourceError(f"{what} failed: " + " / ".join(tail))
    return p.stdout


def locate(pin, workdir):
    """Ask the archive (through private apt) where the pinned file is."""
    opts = _private_apt(pin, workdir)
    _run(["apt-get"] + opts + ["update"], f"{pin.name}: apt-get update ({pin.suite})")
    verb = ["source", "--print-uris"] if pin.kind == "orig" else ["download", "--print-uris"]
    out = _run(["apt-get"] + opts + verb + [pin.spec], f"{pin.name}: locating {pin.spec}")
    uri, indexed = parse_print_uris(out, pin.filename)
    if indexed != pin.sha256:
        raise SourceError(f"{pin.name}: archive lists {pin.filename} with sha256 {indexed}, "
                          f"the pin says {pin.sha256}")
    return uri


def verify(pin, path):
    got = sha256_file(path)
    if got != pin.sha256:
        raise SourceError(f"{pin.name}: checksum mismatch for {pin.filename}: "
                          f"got {got}, expected {pin.sha256}")


def fetch(pin, dest):
    """Return a verified copy of pin's file in dest, downloading if needed."""
    os.makedirs(dest, exist_ok=True)
    path = os.path.join(dest, pin.filename)
    if os.path.exists(path):
        try:
            verify(pin, path)
            return path
        except SourceError:
            os.unlink(path)
    with tempfile.TemporaryDirectory(prefix="criu-cet-apt.") as work:
        uri = locate(pin, work)
        tmp = os.path.join(work, pin.filename)
        try:
            with urllib.request.urlopen(uri, timeout=60) as r, open(tmp, "wb") as f:
                shutil.copyfileobj(r, f, 1 << 20)
        except OSError as e:
            raise SourceError(f"{pin.name}: download of {uri} failed: {e}")
        verify(pin, tmp)
        shutil.move(tmp, path)
    return path


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch")
    f.add_argument("names", nargs="+")
    f.add_argument("--dest", default=os.environ.get("CRIU_CET_CACHE", "/var/cache/criu-cet")
                   + "/downloads")
    args = ap.parse_args(argv)
    try:
        pins = load_pins()
        for name in args.names:
            if name not in pins:
                raise SourceError(f"'{name}' is not pinned in {LOCK}")
            print(fetch(pins[name], args.dest))
    except SourceError as e:
        print(f"sources: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
