#!/usr/bin/env python3
"""glu-table.py KB1 PEERS KB2 [GATE_RESULTS_DIR]: issue 16's GLU table from glu-peers.sh's CSVs. Per benchmark and
shape: kbench eager, fused, tuned (the mean of the two tuned rounds, and each round), tuned %
of copy SOL and of its mix SOL, PyTorch eager, torch.compile and tuned / torch.compile. A shape
counts as ahead only if the worse tuned round beats torch.compile (printed as 'worst / compile').
kbench's eager and fused series come from GATE_RESULTS_DIR (ci/gate's results/, the same call)."""
import csv, glob, os, sys
def rows(p):
    return [r for r in csv.DictReader(open(p)) if r.get('gbps')]
kb1, peers, kb2 = (rows(p) for p in sys.argv[1:4])
gate = [r for f in (sorted(glob.glob(os.path.join(sys.argv[4], '*glu_*.csv'))) if len(sys.argv) > 4 else [])
        for r in rows(f) if r['backend'] in ('eager', 'fused') and r['dtype'] == 'bf16']
g = {}
for src, rs in (('1', kb1), ('p', peers), ('2', kb2), ('g', gate)):
    for r in rs:
        k = (r['benchmark'], int(r['M']), int(r['N']))
        be = r['backend'] + ('' if src in 'pg' or r['backend'] != 'tuned' else src)
        g.setdefault(k, {})[be] = r
def f(d, be, col='gbps'):
    try: return float(d[be][col])
    except (KeyError, ValueError): return None
print('| benchmark | shape | eager | fused | tuned (r1 / r2) | % copy SOL | % mix SOL | torch eager | torch.compile | tuned / compile | worst / compile |')
print('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
ahead = total = 0
for k in sorted(g, key=lambda k: (k[0], k[2], k[1])):
    d = g[k]; t1, t2 = f(d, 'tuned1'), f(d, 'tuned2')
    if t1 is None or t2 is None: continue
    t = (t1 + t2) / 2; c = f(d, 'torch_compile'); e = f(d, 'torch_eager')
    sol = f(d, 'tuned1', 'sol_gbps'); mix = f(d, 'tuned1', 'mix_sol_gbps')
    fm = lambda x: '-' if x is None else f'{x:.0f}'
    r = c and t / c; w = c and min(t1, t2) / c
    total += 1; ahead += bool(w and w >= 1.0)
    print(f"| {k[0]} | {k[1]}x{k[2]} | {fm(f(d,'eager'))} | {fm(f(d,'fused'))} | {t:.0f} ({t1:.0f} / {t2:.0f}) | "
          f"{100*t/sol:.1f} | {100*t/mix:.1f} | {fm(e)} | {fm(c)} | {'-' if not r else f'{r:.3f}'} | {'-' if not w else f'{w:.3f}'} |")
print(f'\nshapes: {total}; worse tuned round >= torch.compile on {ahead}')
