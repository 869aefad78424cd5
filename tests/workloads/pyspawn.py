#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# What python's subprocess does for each command, 20 times from the main
# thread: _posixsubprocess forks the child with vfork, and the parent waits
# in __vfork until the child has exec'd /bin/true. glibc's __vfork keeps its
# return address in rdi across that system call (its CFI says so), which an
# unwinder must read from the saved registers to go past it.
#
#   pyspawn.py [COUNT]
import subprocess
import sys

count = int(sys.argv[1]) if len(sys.argv) > 1 else 20
for _ in range(count):
    subprocess.run(["/bin/true"], check=True)
