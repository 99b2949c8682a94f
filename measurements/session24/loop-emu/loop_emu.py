"""A transcription of bwd_loop's index math and arithmetic (kernels/common/norm_tuned_bwd.cuh),
thread by thread, in numpy, against a reference: aligned rows and (SH) shifted slots with rows
dealt out by shift class, on slots of one CTA (R row slots) or of a cluster of cl CTAs that
splits each row. Checks that every element of every row is read once in each pass (interior
slots through the U-wide loop, the row's first and last slots through the edge path) and
written once, that nothing outside a row is written, that each CTA's shared-memory indices stay
inside what the host sizes (nt_bwd_loop_smem: R planes, SH one more for w), that every slot's
partial row is fully written, and that dx and dw equal the reference. No GPU:
`python3 loop_emu.py`."""
import math
import numpy as np


def cdiv(a, b):
    return -(-a // b)


def run(M, N, VEC, tpr, R, U, S, LN, SH, cl, rng):
    assert cl == 1 or R == 1
    Q = VEC // 4
    P = VEC // math.gcd(N, VEC) if SH else 1
    span = N + VEC - 1 if SH else N
    G = tpr * cl
    K = cdiv(span, VEC * G)
    planes = R + (1 if SH else 0)
    words = planes * K * Q * tpr * 4  # one CTA's dynamic shared memory, in floats
    total = M * N
    x = rng.standard_normal(total)
    dy = rng.standard_normal(total)
    w = rng.standard_normal(N)
    X = x.reshape(M, N)
    mu = X.mean(1) if LN else np.zeros(M)
    rs = 1 / np.sqrt(((X - mu[:, None]) ** 2).mean(1) + 1e-5)
    dx = np.full(total, np.nan)
    rd1 = np.zeros(total, int)
    rd2 = np.zeros(total, int)
    wr = np.zeros(total, int)
    ws = np.full((S, N), np.nan)
    ngroups = cdiv(cdiv(M, P), R)

    for b in range(S):  # slot b: a CTA, or a cluster of cl CTAs
        smem = [np.full(words, np.nan) for _ in range(cl)]

        def su(r, i, q, gt):
            # float index of quarter q of pack i of row slot r, thread gt of the slot
            idx = ((r * K + i) * Q + q) * tpr + gt % tpr
            assert 0 <= idx < planes * K * Q * tpr
            return idx * 4

        def sm(gt):
            return smem[gt // tpr]

        cls = b % P
        sh = (cls * N) % VEC if SH else 0
        nsl = cdiv(N + sh, VEC)
        lo = lambda k: sh - k * VEC if SH and k * VEC < sh else 0
        hi = lambda k: N + sh - k * VEC if SH and N + sh - k * VEC < VEC else VEC
        for gt in range(G):
            for ty in range(R):
                for i in range(K):
                    for q in range(Q):
                        o = su(ty, i, q, gt)
                        sm(gt)[o:o + 4] = 0
            if SH:
                for i in range(K):
                    for j in range(VEC):
                        c = (gt + i * G) * VEC - sh + j
                        sm(gt)[su(R, i, j // 4, gt) + j % 4] = w[c] if 0 <= c < N else 0

        def getw(k, i, gt):
            if SH:
                return np.array([sm(gt)[su(R, i, j // 4, gt) + j % 4] for j in range(VEC)])
            return w[k * VEC:(k + 1) * VEC]

        def slot(arr, f, k, edge):
            assert f >= 0 and f % VEC == 0
            out = np.zeros(VEC)
            for j in range(VEC):
                if f + j < total:
                    out[j] = arr[f + j]
                else:
                    assert edge, "an interior slot past the tensor's end"
            if edge:
                for j in range(VEC):
                    if j < lo(k) or j >= hi(k):
                        out[j] = 0
            else:
                assert lo(k) == 0 and hi(k) == VEC, "an interior slot with a row edge"
            return out

        def each(base, cnt, gt, use):
            kb, ke = (1, cnt - 1) if SH else (0, cnt)
            i0 = 0 if gt >= kb else 1
            k0 = gt + i0 * G
            while k0 < ke:
                for u in range(U):
                    k = k0 + u * G
                    if k < ke:
                        use(k, i0 + u, base + k * VEC, False)
                k0 += G * U
                i0 += U
            if SH:
                if cnt > 0 and gt == 0:
                    use(0, 0, base, True)
                kl = cnt - 1
                if kl > 0 and kl % G == gt:
                    use(kl, kl // G, base + kl * VEC, True)

        slots = S // P
        g = b // P
        while g < ngroups:
            s = np.zeros((R, 2))
            for ty in range(R):
                row = cls + P * (g * R + ty)
                ok = row < M
                base = (row if ok else 0) * N - sh
                cnt = nsl if ok else 0
                for gt in range(G):
                    def use1(k, i, f, edge, ty=ty, gt=gt, row=row):
                        assert k == gt + i * G and i < K
                        xv = slot(x, f, k, edge)
                        dv = slot(dy, f, k, edge)
                        for j in range(lo(k), hi(k)):
                            rd1[f + j] += 1
                        wv = getw(k, i, gt)
                        xh = (xv - mu[row]) * rs[row]
                        gv = dv * wv
                        s[ty, 0] += (gv * xh).sum()
                        s[ty, 1] += gv.sum()
                        c = dv * xh
                        for q in range(Q):
                            o = su(ty, i, q, gt)
                            sm(gt)[o:o + 4] += c[4 * q:4 * q + 4]
                    each(base, cnt, gt, use1)
            for ty in range(R):  # the row's sums, across the cluster
                row = cls + P * (g * R + ty)
                ok = row < M
                base = (row if ok else 0) * N - sh
                cnt = nsl if ok else 0
                mgx = s[ty, 0] / N
                mg = s[ty, 1] / N if LN else 0
                for gt in range(G):
                    def use2(k, i, f, edge, gt=gt, row=row, mgx=mgx, mg=mg):
                        xv = slot(x, f, k, edge)
                        dv = slot(dy, f, k, edge)
                        wv = getw(k, i, gt)
                        xh = (xv - mu[row]) * rs[row]
                        out = rs[row] * (dv * wv - mg - xh * mgx)
                        for j in range(lo(k), hi(k)):
                            rd2[f + j] += 1
                            wr[f + j] += 1
                            dx[f + j] = out[j]
                    each(base, cnt, gt, use2)
            g += slots
        for gt in range(G):  # the partial row: each thread its own packs' columns
            i, k = 0, gt
            while k < nsl:
                v = np.zeros(VEC)
                for q in range(Q):
                    t = sm(gt)[su(0, i, q, gt):su(0, i, q, gt) + 4].copy()
                    for r in range(1, R):
                        t += sm(gt)[su(r, i, q, gt):su(r, i, q, gt) + 4]
                    v[4 * q:4 * q + 4] = t
                for j in range(lo(k), hi(k)):
                    ws[b, k * VEC - sh + j] = v[j]
                i += 1
                k += G
    assert (rd1 == 1).all() and (rd2 == 1).all() and (wr == 1).all()
    assert not np.isnan(ws).any(), "a partial row left unwritten"
    dw = ws.sum(0)
    D = dy.reshape(M, N)
    xh = (X - mu[:, None]) * rs[:, None]
    gg = D * w
    mgx = (gg * xh).mean(1, keepdims=True)
    mg = gg.mean(1, keepdims=True) if LN else 0
    dxr = rs[:, None] * (gg - mg - xh * mgx)
    assert np.allclose(dx.reshape(M, N), dxr, atol=1e-9), np.abs(dx.reshape(M, N) - dxr).max()
    assert np.allclose(dw, (D * xh).sum(0), atol=1e-8)


rng = np.random.default_rng(1)
n = 0
for SH in (False, True):
    for VEC in ((8,) if SH else (8, 4)):
        # odd rows: shift periods 8 (odd N), 4 (N = 2 mod 4: 6, 102, 1030), 2 (N = 4 mod 8)
        Ns = (3, 5, 6, 13, 37, 100, 102, 129, 517, 1030) if SH else (VEC, 3 * VEC, 13 * VEC, 64 * VEC)
        for N in Ns:
            span = N + VEC - 1 if SH else N
            for tpr in (1, 2, 8, 32):
                for cl in (1, 2, 4):
                    # nt_shape_ok: threads x cluster at most the row's packs, a power of two up
                    if tpr * cl > 2 ** math.ceil(math.log2(cdiv(span, VEC))):
                        continue
                    for R in ((1, 2, 4) if cl == 1 else (1,)):
                        for U in ((4, 8) if SH else (2, 4, 8)):
                            for M in (1, 2, 5, 9, 17):
                                P = VEC // math.gcd(N, VEC) if SH else 1
                                for per_class in (1, 2, 3):
                                    run(M, N, VEC, tpr, R, U, per_class * P, bool(n % 2), SH, cl,
                                        rng)
                                    n += 1
print("cases", n, "ok")
