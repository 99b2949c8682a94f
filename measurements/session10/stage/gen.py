#!/usr/bin/env python3
"""Session 10, run 1: kbench command lines for the staged norm forward (reload=2):
accuracy on forced configurations, sanitizers, and a timing grid next to the cache entry.
Configurations mirror nt_stage_valid: tpr*rows a multiple of 32, <= 1024, tpr <=
pow2ceil(N/VEC), stages*rows*row_bytes within ~225 KB, one group's copy < 1 MB."""
import sys
SMEM = 225 * 1024
ES = {'bf16': 2, 'fp16': 2, 'fp32': 4}

def p2c(v):
    p = 1
    while p < v: p *= 2
    return p

def ok(N, dt, tpr, rows, st):
    vec = 16 // ES[dt]
    rb = N * ES[dt]
    return (N % vec == 0 and tpr * rows <= 1024 and (tpr * rows) % 32 == 0 and
            tpr <= p2c(-(-N // vec)) and st * rows * rb <= SMEM and rows * rb < (1 << 20))

def cfg(tpr, rows, st, hint=1, occ=32):
    return f"threads={tpr},rows={rows},cluster=1,occ={occ},db=0,reload=2,hint={hint},stages={st}"

def acc_cfgs(N, dt):
    """Up to 4 valid configurations: ~2, ~1 and ~4 packs per thread, varied rows/stages."""
    vec = 16 // ES[dt]
    npk = -(-N // vec)
    out = []
    for per, st, hint in ((2, 2, 1), (1, 3, 0), (4, 1, 1), (8, 4, 0)):
        tpr = min(1024, p2c(max(1, npk // per)))
        rows = 1
        while (tpr * rows) % 32: rows *= 2
        while not ok(N, dt, tpr, rows, st) and st > 1: st -= 1
        if ok(N, dt, tpr, rows, st):
            c = cfg(tpr, rows, st, hint)
            if c not in out: out.append(c)
    return out

def grid(N):
    """Timing grid, bf16: (tpr, rows) around 1-4 packs per thread, stages 2..4."""
    npk = N // 8
    out = []
    for per in (1, 2, 4):
        tpr = min(1024, p2c(max(1, npk // per)))
        for rows in (1, 2, 4, 8, 16):
            if tpr * rows < 128 or tpr * rows > 512 and rows > 1: continue
            for st in (2, 4):
                if ok(N, 'bf16', tpr, rows, st): out.append(cfg(tpr, rows, st))
    return out

def chunks(lst, n=8):
    for i in range(0, len(lst), n): yield lst[i:i + n]

mode = sys.argv[1]
K = 'build/kbench'
OPS = ['rmsnorm_forward', 'layernorm_forward']
if mode == 'acc':
    shapes = ['1x8', '3x16', '2x24', '7x4096', '33x1024', '1000x384', '257x8192', '4096x512',
              '5x32768', '64x2048', '300x20000', '4096x1000', '1x65536', '9x256']
    for dt in ('bf16', 'fp16', 'fp32'):
        for s in shapes:
            N = int(s.split('x')[1])
            cs = acc_cfgs(N, dt)
            if not cs: continue
            tc = ' '.join(f'--tuned-config a{i}:{c}' for i, c in enumerate(cs))
            print(f'{K} {" ".join(OPS)} --backend tuned --dtype {dt} --shape {s} {tc} --no-timing')
elif mode == 'kinds':
    for dt in ('bf16', 'fp16', 'fp32'):
        for s in ('4096x1000', '512x50256'):
            N = int(s.split('x')[1])
            tc = ' '.join(f'--tuned-config k{i}:{c}' for i, c in enumerate(acc_cfgs(N, dt)[:2]))
            print(f'{K} {" ".join(OPS)} --backend tuned --dtype {dt} --shape {s} '
                  f'--inputs shifted,wide,masked,constant,small {tc} --no-timing')
elif mode == 'san':
    for s in ('5x64', '17x4096', '3x1024', '40x384'):
        N = int(s.split('x')[1])
        tc = ' '.join(f'--tuned-config s{i}:{c}' for i, c in enumerate(acc_cfgs(N, 'bf16')[:3]))
        print(f'{K} {" ".join(OPS)} --backend tuned --dtype bf16,fp32 --shape {s} {tc} --no-timing')
elif mode == 'grid':
    shapes = sys.argv[2].split(',')
    for op in OPS:
        for s in shapes:
            N = int(s.split('x')[1])
            for part in chunks(grid(N)):
                tc = ' '.join(f'--tuned-config g{i}:{c}' for i, c in enumerate(part))
                print(f'{K} {op} --backend tuned --shape {s} {tc} --budget-ms 250')
