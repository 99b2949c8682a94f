#!/usr/bin/env python3
"""The closing gate's rows judged again with a sane time floor.

The closing run's SOL cache had been written by a kbench under
compute-sanitizer (device-check's memcheck ran first on a fresh build): time
floor 9.15 us instead of ~1 us. This applies the verdict rule of
harness/gate.c (tolerance 5 %, band 2*noise, floor per kernel, the
fastest-sample condition; NOISY above 5 % noise) with floor 1.02 us, the
H200's measured value in the other runs of the session, to gate-results.csv
against baselines/NVIDIA_H200.csv, and prints every row whose verdict changes.
(A throttle-NOISY verdict cannot be recomputed from the CSV: such rows print
as the rule alone would decide them.)
  rejudge.py gate-results.csv ../../../baselines/NVIDIA_H200.csv"""
import csv, math, sys
base = {}
for r in csv.DictReader(open(sys.argv[2])):
    base[(r['benchmark'], r['backend'], r['dtype'], r['M'], r['N'], r.get('K', ''))] = r
tol, floor, changed = 0.05, 0.00102, 0
for r in csv.DictReader(open(sys.argv[1])):
    k = (r['benchmark'], r['backend'], r['dtype'], r['M'], r['N'], r.get('K', ''))
    b = base.get(k)
    if not b or not r['verdict'] or r['verdict'] == 'NO_BASELINE':
        continue
    bg, bn, bm = float(b['gbps']), float(b['noise'] or 0), float(b['median_ms'])
    g, n, m, mn = float(r['gbps']), float(r['noise'] or 0), float(r['median_ms']), float(r['min_ms'])
    kern = int(b['kernels'] or 0) or 1
    ch, band = g / bg - 1, tol + 2 * math.sqrt(n * n + bn * bn)
    if abs(m - bm) <= floor * kern: v = 'SAME'
    elif n > 0.05: v = 'NOISY'
    elif ch < -band: v = 'NOISY' if (1 + ch) * m / mn - 1 >= -tol else 'SLOWER'
    elif ch > band: v = 'FASTER'
    else: v = 'SAME'
    if v != r['verdict']:
        changed += 1
        print(f"{'.'.join(k[:3])}.{k[3]}x{k[4]}{'x' + k[5] if k[5] else ''}: {r['verdict']} -> {v} "
              f"({100 * ch:+.1f} %, {1e3 * m:.2f} us vs {1e3 * bm:.2f} us, {kern} kernel(s))")
print(f"{changed} verdicts change")
