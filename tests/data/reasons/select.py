#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Keeps the 4 heaviest records of each rsn_* thread of a bpftrace dump made by
# capture.bt (2 of the short-lived rsn_child processes), in the dump's own
# format, or with --folded as BCC's `offcputime -f -d` prints them
# (comm;user outer..inner;-;kernel outer..inner microseconds, offsets dropped);
# BCC itself needs kernel headers, which the capture machine lacked.
import collections
import re
import sys

folded = sys.argv[1] == "--folded"
text = open(sys.argv[-1]).read()
recs = re.findall(r"(@offcpu_ns\[(.*?)\]: (\d+)\n)", text, re.S)
by_comm = collections.defaultdict(list)
for whole, body, value in recs:
    comm = body.rsplit(",", 2)[-2].strip()
    by_comm[comm].append((int(value), whole, body))
keep = set()
for comm, lst in by_comm.items():
    lst.sort(key=lambda r: -r[0])
    for r in lst[: 2 if comm == "rsn_child" else 4]:
        keep.add(r[1])
if not folded:
    print("Attaching 3 probes...")
for whole, body, value in recs:
    if whole not in keep:
        continue
    if not folded:
        sys.stdout.write("\n" + whole)
        continue
    parts = body.split("\n,")
    kern = [l.strip() for l in parts[0].splitlines() if l.strip()]
    user = [l.strip() for l in parts[1].splitlines() if l.startswith("    ")] if len(parts) > 1 else []
    comm = body.rsplit(",", 2)[-2].strip()
    strip = lambda f: re.sub(r"\+\d+$", "", f)
    # BCC names what it cannot resolve "[unknown]" and writes no "-" when a
    # stack is missing.
    ufr = ["[unknown]" if f.startswith("0x") else strip(f) for f in reversed(user)]
    frames = (ufr + ["-"]) if ufr else ["[Missed User Stack]"]
    frames += [strip(f) for f in reversed(kern)]
    print("%s;%s %d" % (comm, ";".join(frames), int(value) // 1000))
