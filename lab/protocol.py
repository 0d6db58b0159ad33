# SPDX-License-Identifier: GPL-2.0
"""The lab's line protocol, as the guest prints it on the serial console.

    @@LAB BOOT <detail>             init is running
    @@LAB SUITE <name>              a suite starts
    @@LAB PASS|FAIL|SKIP <name> <detail>
    @@LAB INFO <key> <value>        a figure (times, sizes) for the host
    @@LAB DONE <detail>             every suite ran; the guest powers off

Kernel messages can share the console with the guest, so a marker is looked
for anywhere in a line, not only at its start.
"""

import re
from collections import namedtuple

MARK = "@@LAB "
RESULT_KINDS = ("PASS", "FAIL", "SKIP")
CONTROL_KINDS = ("BOOT", "SUITE", "INFO", "DONE")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+/-]*$")

Result = namedtuple("Result", "status name detail")


def parse_fields(text, tail):
    """An INFO detail 'k=v k=v <tail>=free text' -> dict; the tail key takes
    the rest of the line, spaces and all."""
    fields, rest = {}, text.strip()
    while rest:
        if rest.startswith(tail + "="):
            fields[tail] = rest[len(tail) + 1:].strip()
            break
        token, _, rest = rest.partition(" ")
        rest = rest.lstrip()
        key, eq, value = token.partition("=")
        if eq and key:
            fields[key] = value
    return fields


class Report:
    def __init__(self):
        self.boot = None        # detail of the BOOT line, once seen
        self.done = False
        self.suites = []
        self.results = []       # Result, in the order the guest printed them
        self.info = {}
        self.malformed = []     # marker lines we could not understand
        self.panic = None       # first "Kernel panic" line, if any

    def by_name(self):
        return {r.name: r for r in self.results}

    def count(self, status):
        return sum(1 for r in self.results if r.status == status)

    @property
    def ok(self):
        return self.done and not self.panic and not self.malformed and self.count("FAIL") == 0

    def summary(self):
        return (f"{self.count('PASS')} passed, {self.count('FAIL')} failed, "
                f"{self.count('SKIP')} skipped")


def parse_line(line):
    """Return (kind, name, detail) for a protocol line, None for other text.

    Raises ValueError for a marker line that breaks the protocol."""
    at = line.find(MARK)
    if at < 0:
        return None
    fields = line[at + len(MARK):].rstrip("\r\n").split(None, 2)
    if not fields:
        raise ValueError("empty marker line")
    kind = fields[0]
    if kind in RESULT_KINDS or kind in ("SUITE", "INFO"):
        if len(fields) < 2 or not NAME_RE.match(fields[1]):
            raise ValueError(f"{kind} line without a valid name")
        return kind, fields[1], fields[2] if len(fields) > 2 else ""
    if kind in ("BOOT", "DONE"):
        return kind, "", " ".join(fields[1:])
    raise ValueError(f"unknown kind '{kind}'")


def feed(report, line):
    """Add one serial-log line to report."""
    if "Kernel panic" in line and report.panic is None:
        report.panic = line.strip()
    try:
        parsed = parse_line(line)
    except ValueError as e:
        report.malformed.append(f"{e}: {line.strip()}")
        return
    if parsed is None:
        return
    kind, name, detail = parsed
    if kind in RESULT_KINDS:
        if name in report.by_name():
            report.malformed.append(f"duplicate result for {name}")
        report.results.append(Result(kind, name, detail))
    elif kind == "BOOT":
        report.boot = detail
    elif kind == "SUITE":
        report.suites.append(name)
    elif kind == "INFO":
        report.info[name] = detail
    elif kind == "DONE":
        report.done = True


def parse(text):
    report = Report()
    for line in text.splitlines():
        feed(report, line)
    return report
