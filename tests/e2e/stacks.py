#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# User stacks of an offcpu capture, checked against ground truth. compare,
# check and diff print the tests/run.sh protocol lines (ok / FAIL / skip)
# themselves and exit 0 unless an input cannot be read; has says nothing and
# exits 0 when it finds the path, 1 when not.
#
#   stacks.py compare PREFIX PROFILE_TXT PERF_NOINLINE PERF_INLINE PID COMM...
#       offcpu's user stacks of process PID's threads named COMM against the
#       stacks `perf script` printed for the same switches (perf ran under
#       offcpu record, so both saw every switch): PERF_NOINLINE from
#       `perf script --no-inline`, PERF_INLINE from `perf script`, both with
#       -F comm,pid,tid,event,trace,ip,sym,dso.
#   stacks.py check PREFIX DIR [PID...]
#       capture DIR: no raw address among the user frames of its profile.txt,
#       folded time.txt, offcpu.pb.gz and offcpu.speedscope.json (those two
#       when exported there), and at least 95% of the off-CPU time of rows
#       with a user stack in complete stacks (of PIDs' threads when given;
#       else the summary's user_stacks.complete_share too, when it has one).
#   stacks.py diff PREFIX DIFF_JSON
#       `offcpu diff --json` of two runs of one workload: no blocked stack is
#       both "gone" and "new".
#   stacks.py has PREFIX PROFILE_TXT COMM_REGEX NAME...
#       some stack of threads whose comm matches holds all of NAME (user
#       frames), in this order from leaf to root, not necessarily adjacent.
#
# profile.txt is described in src/parse/profile_text.h: frame kinds u user,
# i inlined (user), k kernel, m missing; stacks root first. By the marker
# contract, a user stack that the unwinder could not finish starts (root end)
# with one `[unwind: REASON]` frame; one without is complete: it reaches
# _start, clone/clone3 or start_thread.
import gzip
import json
import os
import re
import sys
from collections import defaultdict

USER_KINDS = ("u", "i")
HEX_FRAME = re.compile(r"^0x[0-9a-fA-F]+$")
# Where a complete stack may start; a stripped executable's _start has no name,
# so the frame below __libc_start_main counts as its _start.
ROOTS = {"_start", "clone", "clone3", "start_thread"}


def unescape(s):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "x" and i + 3 < len(s):
                out.append(chr(int(s[i + 2:i + 4], 16)))
                i += 4
                continue
            out.append({"s": " ", "t": "\t", "r": "\r", "n": "\n"}.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


class Profile:
    """frames {id: (kind, name)}, stacks {id: [frame ids root first]},
    threads {id: (pid, tid, comm)}, rows [(thread, stack, state, count, off_ns)]"""

    def __init__(self, path):
        self.frames, self.stacks, self.threads, self.rows = {}, {}, {}, []
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                w = line.rstrip("\n").split(" ")
                if w[0] == "frame":
                    self.frames[int(w[1])] = (w[2], unescape(" ".join(w[3:])))
                elif w[0] == "stack":
                    self.stacks[int(w[1])] = [int(x) for x in w[2:] if x]
                elif w[0] == "thread":
                    comm = unescape(" ".join(w[4:])) if len(w) > 4 else ""
                    self.threads[int(w[1])] = (int(w[2]), int(w[3]), comm)
                elif w[0] == "row":
                    self.rows.append((int(w[1]), int(w[2]), w[3], int(w[4]), int(w[5])))

    def user(self, stack, inline=True):
        """(markers, user frame names) of a stack, both root first."""
        marks, names = [], []
        for fid in self.stacks[stack]:
            kind, name = self.frames[fid]
            if kind == "m":
                marks.append(name)
            elif kind == "u" or (inline and kind == "i"):
                names.append(name)
        return marks, names


def norm(name):
    """One name for the aliases glibc gives one address: the debug file's
    __GI___foo, the versioned foo@@GLIBC_2.17 and foo@GLIBC_2.2.5, __foo,
    and the 64-bit file calls' foo64."""
    name = re.sub(r"@.*$", "", name)
    name = re.sub(r"\.(isra|constprop|part|cold)\.\d+$", "", name)
    name = re.sub(r"^__GI_", "", name)
    name = re.sub(r"_impl$", "", name)
    name = re.sub(r"(mmap|open|lseek|pread|pwrite)64$", r"\1", name)
    return name.lstrip("_") or name


ROOTS = {norm(r) for r in ROOTS}


def trim_root(path):
    """perf prints glibc's clone3 end as clone3 or [unknown]; an unwinder may
    stop at start_thread: compare from start_thread on."""
    path = list(path)
    while path and path[0] in ("[unknown]", "clone", "clone3"):
        path.pop(0)
    return tuple(path)


def perf_samples(path):
    """[(comm, pid, tid, prev_state, [(name, dso, inlined, address)] leaf first)]"""
    head = re.compile(r"^(\S.*?)\s+(\d+)/(\d+)\s+.*sched:sched_switch:.*prev_state=(\S+)")
    frame = re.compile(r"^\s+([0-9a-f]+)\s+(.*)\s+\((.*)\)\s*$")
    out, cur = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = head.match(line)
            if m:
                cur = (m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), [])
                out.append(cur)
                continue
            m = frame.match(line)
            if m and cur is not None:
                dso = m.group(3)
                cur[4].append((m.group(2), dso, dso == "inlined", int(m.group(1), 16)))
    return out


def is_kernel(fr):
    return fr[1] == "[kernel.kallsyms]" or fr[3] >= 0xFFFF800000000000


def say(ok, name, why=""):
    print(f"ok {name}" if ok else f"FAIL {name}: {why}")


def compare(prefix, profile, noinl, inl, pid, comms):
    prof = Profile(profile)
    perf = perf_samples(noinl)
    perf_inl = perf_samples(inl)
    blocked = lambda st: st[:1] in ("S", "D")

    # perf's paths per thread, root first, names normalised. perf enables its
    # event at exec; offcpu also sees the child of perf before it, waiting in
    # perf's code: the workload's own functions (but main and _start, which
    # perf has too) tell the stacks to compare.
    want = defaultdict(lambda: defaultdict(int))
    inlined = defaultdict(set)  # path -> inlined names perf shows along it
    exe = {f[1] for p in perf if p[1] == pid for f in p[4] if f[0] == "main"}
    own = set()
    for i, (comm, ppid, tid, st, frames) in enumerate(perf):
        if ppid != pid or comm not in comms or not blocked(st):
            continue
        user = [f for f in frames if not is_kernel(f)]
        own |= {norm(f[0]) for f in user if f[1] in exe and f[0] not in ("main", "_start")}
        path = trim_root(norm(f[0]) for f in reversed(user))
        if not path:
            # No user frame: the thread blocked where it had no user
            # registers to give (exec, exit); offcpu's rows without user
            # frames are not compared either.
            continue
        want[tid][path] += 1
        if i < len(perf_inl) and perf_inl[i][2] == tid:
            for f in perf_inl[i][4]:
                if f[2]:
                    inlined[path].add(norm(f[0]))
    tids = {p[2]: p[0] for p in perf if p[1] == pid and p[0] in comms}

    # The oracle: each thread's own three levels, down to its root.
    bad = []
    for comm in comms:
        paths = [p for t, c in tids.items() if c == comm for p in want[t]]
        own_paths = [p for p in paths if any(re.match(r".*_(leaf|mid|top)$", n) for n in p)]
        if not paths:
            bad.append(f"{comm}: no blocked switch")
        elif not own_paths:
            bad.append(f"{comm}: no path through its own functions: {paths[:2]}")
        elif not any(p and p[0] in ROOTS for p in own_paths):
            bad.append(f"{comm}: perf's stacks end at {sorted({p[0] for p in own_paths})}")
    say(not bad, f"{prefix}_perf_oracle", "; ".join(bad))
    if bad:
        return

    got = defaultdict(lambda: defaultdict(int))  # tid -> path -> count
    every = defaultdict(list)  # tid -> [(comm, state, markers, path)], to explain a miss
    marks, hexes, wrong, inl_wrong = [], [], [], []
    total = wrong_ns = 0
    seen_inline = False
    for th, stack, st, count, off in prof.rows:
        tpid, tid, comm = prof.threads[th]
        m, names = prof.user(stack, inline=False)
        path = trim_root(norm(n) for n in names)
        if tpid == pid:
            every[tid].append((comm, st, m, path))
        if tpid != pid or comm not in comms:
            continue
        _, withinl = prof.user(stack, inline=True)
        hexes += [n for n in names if HEX_FRAME.match(n)]
        if not blocked(st) or not (names or m):
            continue
        # Only the workload's own stacks: perf's child before its exec is
        # recorded too (see unwind.sh), with the stack of perf's image. A
        # path perf printed for the thread is its own too (ld.so's before
        # main, say).
        if not own & set(path) and path not in want[tid]:
            continue
        marks += [x for x in m if x.startswith("[unwind:")]
        got[tid][path] += count
        total += off
        if path not in want[tid]:
            wrong.append(f"{comm}: {';'.join(path)} {m}")
            wrong_ns += off
        extra = {norm(n) for n in withinl} - {norm(n) for n in names}
        if extra:
            seen_inline = True
            if not extra <= inlined.get(path, set()):
                inl_wrong.append(f"{comm}: inlined {sorted(extra - inlined.get(path, set()))}"
                                 f" not shown by perf on {';'.join(path)}")

    if not got:
        say(False, f"{prefix}_offcpu_stacks_equal_perf",
            f"no blocked user stack of the workload's threads names its functions ({sorted(own)[:4]}...)")
    else:
        say(not wrong, f"{prefix}_offcpu_stacks_equal_perf",
            f"{len(wrong)} stacks ({100.0 * wrong_ns / max(total, 1):.0f}% of their blocked time)"
            f" that perf did not print, e.g. {wrong[0] if wrong else ''}")
    missing = [(t, p) for t in want for p in want[t] if p not in got[t]]
    why = ""
    if missing:
        t, p = missing[0]
        # offcpu's stacks of that thread with the same leaf, if any.
        near = [f"{c} {st} {m} {';'.join(q)}" for c, st, m, q in every[t] if q[-1:] == p[-1:]]
        why = (f"{len(missing)} of {sum(len(w) for w in want.values())} perf paths not in"
               f" offcpu, e.g. {tids[t]}: {';'.join(p)}; offcpu has"
               f" {near[:2] if near else 'no stack of that thread with its leaf'}")
    say(not missing, f"{prefix}_offcpu_has_every_perf_path", why)
    # Same switches on both sides: as many intervals on each path (a stack
    # cache that hands one path's stack to another shows here).
    off = [f"{tids[t]}: {';'.join(p)} perf {n} offcpu {got[t][p]}" for t in want
           for p, n in want[t].items() if abs(got[t][p] - n) > max(2, n // 5)]
    say(not off, f"{prefix}_same_count_per_path_as_perf", "; ".join(off[:3]))
    say(not marks and not hexes, f"{prefix}_no_marker_no_raw_address",
        f"markers {sorted(set(marks))[:3]}, raw frames {sorted(set(hexes))[:5]}")
    if not seen_inline:
        print(f"skip {prefix}_inlined_frames_as_perf: offcpu shows no inlined frame here")
    else:
        say(not inl_wrong, f"{prefix}_inlined_frames_as_perf", inl_wrong[0] if inl_wrong else "")


def complete(names):
    """Root first user frame names without a marker: do they reach a root?"""
    if not names:
        return False
    r = norm(names[0])
    if r in ROOTS:
        return True
    return len(names) > 1 and norm(names[1]).startswith("libc_start_main")


def pprof_strings(path):
    """The string table (field 6) of a gzipped profile.proto."""
    buf = gzip.open(path).read()
    out, i = [], 0

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v

    while i < len(buf):
        key = varint()
        wire = key & 7
        if wire == 0:
            varint()
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n = varint()
            if key >> 3 == 6:
                out.append(buf[i:i + n].decode("utf-8", "replace"))
            i += n
        else:
            raise ValueError(f"{path}: wire type {wire} at {i}")
    return out


def raw_frames(d):
    """Raw addresses among the user frames of every output in capture DIR d:
    {file name: set of frames}."""
    bad = defaultdict(set)
    prof = Profile(os.path.join(d, "offcpu.profile.txt"))
    for kind, name in prof.frames.values():
        if kind in USER_KINDS and HEX_FRAME.match(name):
            bad["offcpu.profile.txt"].add(name)
    folded = os.path.join(d, "offcpu.time.txt")
    if os.path.exists(folded):
        with open(folded, encoding="utf-8", errors="replace") as f:
            for line in f:
                stack = line.rsplit(" ", 1)[0].split(";")[1:]
                bad["offcpu.time.txt"] |= {n for n in stack if HEX_FRAME.match(n)}
    pb = os.path.join(d, "offcpu.pb.gz")
    if os.path.exists(pb):
        bad["offcpu.pb.gz"] |= {n for n in pprof_strings(pb) if HEX_FRAME.match(n)}
    ss = os.path.join(d, "offcpu.speedscope.json")
    if os.path.exists(ss):
        with open(ss) as f:
            frames = json.load(f).get("shared", {}).get("frames", [])
        bad["offcpu.speedscope.json"] |= {f.get("name", "") for f in frames
                                          if HEX_FRAME.match(f.get("name", ""))}
    return {k: v for k, v in bad.items() if v}


def check(prefix, d, pids=()):
    prof = Profile(os.path.join(d, "offcpu.profile.txt"))
    bad = raw_frames(d)
    say(not bad, f"{prefix}_no_raw_address_frames",
        "; ".join(f"{k}: {len(v)} raw frames, e.g. {sorted(v)[:3]}" for k, v in bad.items()))
    total = done = marked = 0
    unrooted = defaultdict(int)
    for th, stack, st, count, off in prof.rows:
        if pids and prof.threads[th][0] not in pids:
            continue
        m, names = prof.user(stack)
        unwind = any(x.startswith("[unwind:") for x in m)
        if not names and not unwind:
            continue
        total += off
        if unwind:
            marked += off
        elif complete(names):
            done += off
        else:
            unrooted[";".join(names[:3])] += off
    share = done / total if total else 0.0
    why = (f"{100 * share:.1f}% of {total / 1e9:.2f} s with a user stack is complete;"
           f" {100.0 * marked / max(total, 1):.1f}% marked")
    if unrooted:
        top = max(unrooted, key=unrooted.get)
        why += (f", {100.0 * sum(unrooted.values()) / total:.1f}% unmarked but not at a root,"
                f" e.g. {top}")
    try:
        with open(os.path.join(d, "offcpu.summary.json")) as f:
            s = (json.load(f).get("user_stacks") or {}).get("complete_share")
    except (OSError, ValueError):
        s = None
    if isinstance(s, (int, float)) and not pids:
        why += f"; summary complete_share {s}"
        share = min(share, s / 100.0 if s > 1 else s)
    print(f"# {prefix}: {why}")
    say(total > 0 and share >= 0.95, f"{prefix}_complete_stacks_95pct", why)


def has(prefix, profile, comm_re, names):
    prof = Profile(profile)
    pat = re.compile(comm_re)
    for th, stack, st, count, off in prof.rows:
        if not pat.search(prof.threads[th][2]):
            continue
        _, user = prof.user(stack)
        leaf_first = [norm(n) for n in reversed(user)]
        i = 0
        for n in leaf_first:
            if i < len(names) and n == norm(names[i]):
                i += 1
        if i == len(names):
            return 0
    return 1


def diffcheck(prefix, path):
    """The same workload twice: no blocked stack both gone and new (compared
    without raw addresses), and no main path (>= 20 ms) gone while another is
    new (a stack named two ways). A main path on one side only is the
    workload's own doing (fpless's condition-variable waiter, woken while the
    holder keeps the mutex, sometimes waits for it: 32 ms once in CI)."""
    with open(path) as f:
        d = json.load(f)
    keys = {"gone": {}, "new": {}}
    big = {"gone": [], "new": []}
    for s in d.get("stacks", []):
        if s.get("reason") == "runqueue" or not (s.get("only_base") or s.get("only_new")):
            continue
        side = "gone" if s.get("only_base") else "new"
        key = ";".join(norm(f["name"]) for f in s["frames"] if not HEX_FRAME.match(f["name"]))
        keys[side][key] = s
        off = max(s["off"]["base"], s["off"]["new"])
        if off >= 20000000:
            big[side].append(f"{side} {off / 1e6:.0f} ms: "
                             + ";".join(f["name"] for f in s["frames"] if f["kind"] == "user"))
    both = sorted(set(keys["gone"]) & set(keys["new"]))
    moved = big["gone"] + big["new"] if big["gone"] and big["new"] else []
    say(not both and not moved, f"{prefix}_diff_no_stack_gone_and_new",
        f"{len(both)} stacks both gone and new, e.g. {both[0][:200] if both else ''}; "
        f"main paths both gone and new: {'; '.join(m[:160] for m in moved[:2])}")


def main(argv):
    if len(argv) >= 7 and argv[1] == "compare":
        compare(argv[2], argv[3], argv[4], argv[5], int(argv[6]), argv[7:])
    elif len(argv) >= 4 and argv[1] == "check":
        check(argv[2], argv[3], {int(p) for p in argv[4:]})
    elif len(argv) == 4 and argv[1] == "diff":
        diffcheck(argv[2], argv[3])
    elif len(argv) >= 6 and argv[1] == "has":
        return has(argv[2], argv[3], argv[4], argv[5:])
    else:
        print("usage: see the comment at the top of " + argv[0], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
