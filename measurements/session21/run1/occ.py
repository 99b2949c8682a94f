#!/usr/bin/env python3
"""occ.py DIR: per (benchmark, dtype, shape) in DIR/var<r>-<i>.csv, the cache entry's best round
(series `tuned`) against each named layout's worst round; the best layout, and the ratio."""
import csv, glob, re, sys, collections
ent = collections.defaultdict(list)
var = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + '/var*-*.csv')):
    for r in csv.DictReader(open(f)):
        if r.get('accuracy') != 'PASS': continue
        try: v = float(r['gbps'])
        except ValueError: continue
        k = (r['benchmark'], r['dtype'], int(r['M']), int(r['N']))
        if r['backend'] == 'tuned': ent[k].append(v)
        elif r['backend'].startswith('tuned:'): var[k][r['backend'][6:]].append(v)
for k in sorted(ent):
    e = max(ent[k])
    vs = sorted(((min(v), n, len(v)) for n, v in var[k].items()), reverse=True)
    top = ', '.join(f"{n} {w:.0f} ({w / e:.3f})" for w, n, c in vs[:3])
    print(f"{k[0]} {k[1]} {k[2]}x{k[3]}: entry {e:.0f}; best worst-rounds: {top}")
