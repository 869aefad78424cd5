#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# Python threads that block in known places, for tests/e2e/services.sh: a
# "holder" thread takes a threading.Lock and sleeps while holding it, two
# "waiter" threads block on that lock, a "sleeper" thread sleeps, and the main
# thread joins them all. About 2 s * SCALE.
#
#   pylock.py [SCALE]
import sys
import threading
import time

ROUNDS = 40
scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
step = 0.025 * scale
lock = threading.Lock()
done = threading.Event()


def holder():
    for _ in range(ROUNDS):
        with lock:
            time.sleep(step)
        time.sleep(step / 10)
    done.set()


def waiter():
    while not done.is_set():
        with lock:
            pass
        time.sleep(step / 20)


def sleeper():
    while not done.is_set():
        time.sleep(step)


threads = [threading.Thread(target=f) for f in (holder, waiter, waiter, sleeper)]
for t in threads:
    t.start()
for t in threads:
    t.join()
