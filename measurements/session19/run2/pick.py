#!/usr/bin/env python3
"""pick.py CACHE OUT_CACHE VAR_CSV...: per (benchmark, shape), the cache entry's series (backend
`tuned`) against every named variant (`tuned:NAME`), in every round (var<r>-<i>.csv; a round's
cache-entry figure is the best of its calls). A variant replaces the bucket's entry in OUT_CACHE
only if its worst round beats the entry's best round by 3 % or more. Prints one line per shape."""
import csv, re, sys, collections
cache, out, files = sys.argv[1], sys.argv[2], sys.argv[3:]
ent = collections.defaultdict(lambda: collections.defaultdict(list))  # (b,M,N) -> round -> [gbps]
var = collections.defaultdict(lambda: collections.defaultdict(dict))  # (b,M,N) -> name -> {round: (gbps,cfg)}
for f in files:
    rnd = re.search(r'var(\d+)-', f).group(1)
    for r in csv.DictReader(open(f)):
        try: g = float(r['gbps'])
        except ValueError: continue
        if r.get('accuracy') != 'PASS': continue
        k = (r['benchmark'], int(r['M']), int(r['N']))
        if r['backend'] == 'tuned': ent[k][rnd].append(g)
        elif r['backend'].startswith('tuned:'):
            var[k][r['backend'][6:]][rnd] = (g, r['config'].split(' (')[0])
def p2(x):
    n = 1
    while n < x: n *= 2
    return n
lines = open(cache).read().splitlines(True)
moved = 0
for k in sorted(ent):
    b, M, N = k
    rounds = sorted(ent[k])
    e_best = max(max(ent[k][r]) for r in rounds)
    best = None
    for name, by in var[k].items():
        if set(by) != set(rounds): continue
        worst = min(by[r][0] for r in rounds)
        if best is None or worst > best[1]: best = (name, worst, by[rounds[0]][1])
    msg = f"{b} bf16 {M}x{N}: entry best {e_best:.0f}"
    if best:
        msg += f"; best variant {best[0]} worst round {best[1]:.0f} ({best[1] / e_best - 1:+.1%})"
        if best[1] >= 1.03 * e_best:
            bucket = f"N<={p2(N)}" + (",unaligned" if N % 8 else "") + f",M<={p2(M)}"
            pre = f"NVIDIA H200|{b}|bf16|{bucket}|"
            hit = [i for i, l in enumerate(lines) if l.startswith(pre)]
            if len(hit) == 1 and lines[hit[0]].split('|')[4] == best[2]:
                msg += " (already the entry)"
            elif len(hit) == 1:
                lines[hit[0]] = f"{pre}{best[2]}|{best[1]:.1f}\n"
                moved += 1
                msg += f" -> MOVED {bucket}"
            else:
                msg += f" (bucket {bucket}: {len(hit)} entries, not moved)"
    print(msg)
open(out, 'w').writelines(lines)
print(f"moved {moved}")
sys.exit(0)
