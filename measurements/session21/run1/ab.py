#!/usr/bin/env python3
"""ab.py DIR: new/old per case from DIR/ab-{old,new}{1,2}.csv (the cache entries' series,
backend `tuned`, accuracy PASS). Per case: each side's best round, the ratio of new's worst
round to old's best (a conservative gain) and of best to best; then per benchmark and dtype
the geomean of best/best, and the cases that moved by 2 % or more either way."""
import csv, math, sys, collections
d = sys.argv[1]
g = collections.defaultdict(lambda: collections.defaultdict(list))  # case -> side -> [gbps]
for side in ('old', 'new'):
    for r in (1, 2):
        try: rows = list(csv.DictReader(open(f'{d}/ab-{side}{r}.csv')))
        except FileNotFoundError: continue
        for x in rows:
            if x['backend'] != 'tuned' or x.get('accuracy') != 'PASS': continue
            try: v = float(x['gbps'])
            except ValueError: continue
            g[(x['benchmark'], x['dtype'], int(x['M']), int(x['N']))][side].append(v)
per = collections.defaultdict(list)
moved = []
for k in sorted(g):
    o, n = g[k]['old'], g[k]['new']
    if not o or not n: continue
    bb = max(n) / max(o)
    per[k[:2]].append(bb)
    if abs(bb - 1) >= 0.02:
        moved.append(f"{k[0]} {k[1]} {k[2]}x{k[3]}: old {max(o):.0f} new {max(n):.0f} best/best {bb:.3f} worst-new/best-old {min(n)/max(o):.3f}")
for k, v in sorted(per.items()):
    print(f"{k[0]} {k[1]}: {len(v)} cases, geomean new/old {math.exp(sum(map(math.log, v)) / len(v)):.4f}, min {min(v):.3f}, max {max(v):.3f}")
print("moved >= 2 %:" if moved else "no case moved by 2 % or more")
for m in moved: print("  " + m)
