#!/usr/bin/env python3
"""Retains and releases per object of one bench repetition, by call site.

Usage: per-object.py ONE_REP.txt THREE_REPS.txt OBJECTS BINARY
The two files are counter.c's output for runs of 1 and 3 repetitions: their difference
divided by 2 is one repetition's timed work without the set-up.
"""
import collections, subprocess, sys

one, three, objects, binary = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def load(path):
    counts = collections.Counter()
    for line in open(path):
        n, kind, module, offset = line.split()
        counts[(kind, module, offset)] += int(n)
    return counts

a, b = load(one), load(three)
rows = []
for key in set(a) | set(b):
    per = (b[key] - a[key]) / 2 / objects
    if per >= 0.2:
        rows.append((per, key))
totals = collections.Counter()
for per, (kind, module, offset) in sorted(rows, reverse=True):
    totals[kind] += per
    where = module.rsplit('/', 1)[-1] + '+' + offset
    if module == binary or module.endswith('/' + binary.rsplit('/', 1)[-1]):
        out = subprocess.run(['addr2line', '-f', '-i', '-e', binary, hex(int(offset, 16) - 1)],
                             capture_output=True, text=True).stdout.split('\n')
        where = ' | '.join(line.split('/Sources/', 1)[-1] for line in out if line)[:200]
    print(f"{per:5.2f} {kind} {where}")
print(f"per object: {totals['RET']:.1f} retains, {totals['REL']:.1f} releases")
