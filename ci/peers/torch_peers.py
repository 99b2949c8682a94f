#!/usr/bin/env python3
"""Time what users would otherwise pick, on kbench's benchmarks, and write
kbench's results CSV so that kbench-report shows them next to kbench's own
backends.

Series (the CSV's backend column):
  torch_eager    PyTorch eager: the same decomposition kbench's eager backend
                 launches (F.cross_entropy, F.softmax, the fp32 RMSNorm chain,
                 cast -> F.layer_norm -> cast).
  torch_compile  torch.compile(mode="max-autotune-no-cudagraphs") of the same
                 function; forwards mark M dynamic, as PyTorch's
                 benchmarks/dynamo/genai_layers does; dynamo is reset per shape.
  liger          Liger-Kernel's modules, if liger_kernel imports.
  quack          QuACK's functions, if quack imports.

The benchmark list, the shapes (kbench's default sweep per benchmark) and
the byte models (what GB/s divides) come from `kbench --describe` (--kbench,
default build/kbench), so they are kbench's own; this script keeps only the
PyTorch implementations of each op (peer_ops.py, beside it; its PEERS names
them) and a --quick subset of shapes. A benchmark kbench has and peer_ops.py
has no code for is never dropped in silence: --list gives its cases with the
note "no PyTorch peer", and a run writes a SKIP row per case saying so.
--list prints the cases and byte counts a run would measure, without torch.

Inputs and tolerances follow kbench's SPEC: bf16 by
default, x = 0.1*randn for cross entropy and softmax, randn for the norms,
fp32 weights, eps = 1e-6, target uniform in [0, N), dloss fp32. The values
come from torch's generator, not kbench's, so they are the same
distributions, not the same bytes. A backward times the backward alone:
the forward runs once outside the timing (saving what autograd keeps), then
torch.autograd.grad(..., retain_graph=True) is timed.

Timing: CUDA events around each call, the L2 flushed before every call by
reading a buffer twice the L2 size that was written once (kbench's flush: a
zeroing flush leaves an L2 of dirty lines whose write-back the timed call
would pay, ~5 us on an H200), a spin kernel (torch.cuda._sleep) holding
the stream for twice the slowest host time of one call (read per case, at
least 0.1 ms) so Python's launch overhead is never timed, repetitions
until a GPU-time budget is spent; median reported, with min, max and noise
(1.4826*MAD/median). Accuracy: every output against an fp32 reference made
from the same (dtype-rounded) inputs and rounded to the output dtype, as
torch.testing.assert_close with SPEC's tolerances; dw with an allowance for
summation order like kbench's.

Rows are appended to --out as each case finishes, so a run cut short keeps
what it measured; --resume skips the cases already in the file. Needs only
the Python standard library and torch; kbench itself never needs Python.

Without a GPU, --from-csv turns a table of peers' GB/s measured elsewhere
(reports/peers/h200.csv: eager, torch.compile and Liger-Kernel on an H200, see
docs/reference/spec.md) into the same schema, accuracy not checked.

Examples:
  python3 ci/peers/torch_peers.py --list
  python3 ci/peers/torch_peers.py --out peers.csv --quick
  python3 ci/peers/torch_peers.py --out peers.csv --benchmarks softmax_forward --resume
  python3 ci/peers/torch_peers.py --out anchors.csv --from-csv reports/peers/h200.csv --gpu "NVIDIA H200"
  kbench-report results.csv peers.csv --out report
"""
import argparse
import csv
import datetime
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_ops import PEERS, NO_PEER, make_inputs, torch_dtype, reference, tolerance, compare, torch_fn, module_fn, build  # noqa: E402 (beside this script)

COLUMNS = [
    "benchmark", "backend", "dtype", "M", "N", "median_ms", "min_ms", "max_ms", "noise",
    "gbps", "sol_gbps", "sol_pct", "samples", "accuracy", "mismatches", "max_err",
    "baseline_gbps", "verdict", "gpu", "config", "date", "version", "message", "K", "tflops",
]

BACKENDS = ["torch_eager", "torch_compile", "liger", "quack"]
# --quick: three shapes of kbench's default sweep, short to long rows.
QUICK = [(32768, 1024, 0), (32768, 16384, 0), (16384, 131072, 0)]


# ---- kbench's description: benchmarks, shapes, byte models ------------------

TERMS = ("M*N*s", "M*s", "M", "N")  # the byte model's monomials, s the dtype's size
# (3-D ops add "N*K*s" and "M*K*s"; shapes then carry "K": mlp_forward is
# T x D x H, rope positions x query heads x key/value heads)


class Kbench:
    """What `kbench --describe` says: the benchmarks in kbench's order, each
    with its default sweep and byte model (terms of M*N*s, M*s, M, N)."""

    def __init__(self, path):
        try:
            r = subprocess.run([path, "--describe"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, check=False)
        except OSError as ex:
            raise SystemExit("torch_peers.py: cannot run '%s --describe' (%s): build kbench "
                             "or pass --kbench PATH" % (path, ex.strerror or ex))
        if r.returncode != 0:
            raise SystemExit("torch_peers.py: '%s --describe' failed (exit %d): %s"
                             % (path, r.returncode, r.stderr.strip()))
        try:
            doc = json.loads(r.stdout)
            self.dtype_bytes = doc["dtype_bytes"]
            self.benches = {b["name"]: b for b in doc["benchmarks"]}
            for b in self.benches.values():  # what the methods below read, or KeyError
                if not (isinstance(b["family"], str) and b["sets"]["default"]["shapes"]
                        and all(t in b["bytes"]["terms"] for t in TERMS)):
                    raise KeyError("%s: family, default shapes or byte terms" % b["name"])
        except (ValueError, KeyError, TypeError) as ex:
            raise SystemExit("torch_peers.py: '%s --describe' is not the description this "
                             "script reads (%s: %s)" % (path, type(ex).__name__, ex))
        self.names = list(self.benches)

    def default_shapes(self, bench):
        return [(s["M"], s["N"], s.get("K", 0))
                for s in self.benches[bench]["sets"]["default"]["shapes"]]

    def bytes_moved(self, bench, M, N, dtype, K=0):
        """kbench's byte model (what GB/s divides); KeyError for an unknown
        benchmark or dtype."""
        t = self.benches[bench]["bytes"]["terms"]
        s = self.dtype_bytes[dtype]
        v = (t["M*N*s"] * M * N * s + t["M*s"] * M * s + t["M"] * M + t["N"] * N
             + t.get("N*K*s", 0) * N * K * s + t.get("M*K*s", 0) * M * K * s)
        return int(v) if v == int(v) else v

    def flops(self, bench, M, N, K):
        """A compute-bound op's flops (kbench's "flops"), else 0."""
        return self.benches[bench].get("flops", {}).get("M*N*K", 0) * M * N * K

    def selected(self, wanted):
        """The benchmarks to run, in kbench's order when none is named:
        wanted (names), or every one kbench has, with or without a PyTorch
        peer here (has_peer); an unknown name is an error."""
        for name in wanted or ():
            if name not in self.benches:
                raise SystemExit("torch_peers.py: unknown benchmark '%s' (kbench has: %s)"
                                 % (name, ", ".join(self.names)))
        return list(wanted or self.names)

    def require_peer(self, name):
        """A benchmark kbench has and peer_ops.py has code for, else
        SystemExit naming it (for a caller that runs exactly one)."""
        self.selected([name])
        if not has_peer(name):
            raise SystemExit("torch_peers.py: %s: %s (ci/peers/peer_ops.py has no code for it)"
                             % (name, NO_PEER))


def has_peer(bench):
    return bench in PEERS


def parse_shapes(text):
    """MxN (K = 0) or MxNxK (mlp_forward: T x D x H), as (M, N, K)."""
    out = []
    for s in text.replace(",", " ").split():
        dims = s.lower().split("x")
        if len(dims) not in (2, 3) or not all(d.isdigit() and int(d) >= 1 for d in dims):
            raise argparse.ArgumentTypeError("shape '%s' is not MxN or MxNxK with sizes >= 1"
                                             % s)
        out.append(tuple(int(d) for d in dims) + ((0,) if len(dims) == 2 else ()))
    return out


def shape_text(M, N, K):
    return "%dx%d" % (M, N) + ("x%d" % K if K else "")


def parse_list(allowed, what):
    """allowed None: any names (checked later, against kbench's list)."""
    def parse(text):
        items = [t for t in text.replace(",", " ").split() if t]
        for t in items:
            if allowed is not None and t not in allowed:
                raise argparse.ArgumentTypeError(
                    "unknown %s '%s' (one of: %s)" % (what, t, ", ".join(allowed)))
        return items
    return parse


# ---- timing ------------------------------------------------------------------

class Timer:
    def __init__(self, torch, device, budget_ms, min_reps, max_reps):
        self.torch = torch
        self.cuda = device.startswith("cuda")
        self.budget_ms, self.min_reps, self.max_reps = budget_ms, min_reps, max_reps
        self.flush = None
        self.sleep = None
        self.cycles_per_ms = None
        self.hold_ms = self.host_ms = None  # the last measure()'s hold and host time of a call
        if self.cuda:
            l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or (64 << 20)
            # Written once: its lines in L2 are clean. Read before each call.
            self.flush = torch.zeros(2 * l2 // 8, dtype=torch.int64, device=device)
            self.sleep = getattr(torch.cuda, "_sleep", None)

    def flush_l2(self):
        """A read-only pass over 2x L2 (a max reduction): evicts every line,
        writes the previous call's dirty outputs back before the timed call,
        and leaves only clean lines, so the call pays no write-back of the
        flush (a zeroing flush costs a 35 us call ~5 us on an H200)."""
        self.flush.max()

    def calibrate_sleep(self):
        """GPU cycles per millisecond of torch.cuda._sleep, measured once:
        the SM clock the spin runs at is the card's, not a constant."""
        torch = self.torch
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self.sleep(100000)
        s.record()
        self.sleep(4000000)
        e.record()
        torch.cuda.synchronize()
        self.cycles_per_ms = 4000000 / max(s.elapsed_time(e), 1e-3)

    def hold_for(self, fn):
        """How long the spin must hold the stream so that the GPU is still
        waiting when fn's last kernel is queued: every Python, autograd and
        guard step of one call (a compiled backward through autograd is the
        slowest peer) must sit inside the spin, never between the timed
        events. fn's host time is read with the GPU held busy, so queueing
        never waits on it; the hold is twice the slowest of three calls, at
        least 0.1 ms."""
        torch = self.torch
        host = []
        for _ in range(3):
            self.sleep(int(5 * self.cycles_per_ms))  # the queue does not wait on the GPU
            t0 = time.perf_counter()
            fn()
            host.append(1e3 * (time.perf_counter() - t0))
            torch.cuda.synchronize()
        self.host_ms = max(host)
        return max(0.1, 2 * self.host_ms)

    def measure(self, fn):
        torch = self.torch
        for _ in range(3):
            fn()
        if not self.cuda:  # smoke tests on a CPU: wall clock, no flush
            t = []
            for _ in range(self.min_reps):
                t0 = time.perf_counter()
                fn()
                t.append(1e3 * (time.perf_counter() - t0))
            return t
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(3):
            fn()
        e.record()
        torch.cuda.synchronize()
        est = max(s.elapsed_time(e) / 3, 1e-3)
        reps = int(min(self.max_reps, max(self.min_reps, self.budget_ms / est)))
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        cycles = 0
        if self.sleep is not None:
            if self.cycles_per_ms is None:
                self.calibrate_sleep()
            self.hold_ms = self.hold_for(fn)
            cycles = int(self.hold_ms * self.cycles_per_ms)
        for i in range(reps):
            self.flush_l2()
            if cycles:
                self.sleep(cycles)  # the GPU waits here, not on Python (hold_for)
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return [a.elapsed_time(b) for a, b in zip(starts, ends)]


def summarise(times):
    t = sorted(times)
    n = len(t)
    med = t[n // 2] if n % 2 else 0.5 * (t[n // 2 - 1] + t[n // 2])
    dev = sorted(abs(v - med) for v in t)
    mad = dev[n // 2] if n % 2 else 0.5 * (dev[n // 2 - 1] + dev[n // 2])
    return med, t[0], t[-1], 1.4826 * mad / med if med > 0 else float("nan"), n


def measure_sol(torch, device):
    """Device-to-device copy bandwidth (read + write bytes) on 2 GiB, far
    beyond L2: the speed of light kbench reports % of."""
    if not device.startswith("cuda"):
        return None
    n = 1 << 31
    a = torch.empty(n, dtype=torch.uint8, device=device)
    b = torch.empty_like(a)
    a.fill_(1)
    t = []
    for _ in range(3):
        b.copy_(a)
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        b.copy_(a)
        e.record()
        e.synchronize()
        t.append(s.elapsed_time(e))
    del a, b
    torch.cuda.empty_cache()
    med = sorted(t)[len(t) // 2]
    return 2 * n / (med * 1e-3) / 1e9


# ---- driver ------------------------------------------------------------------

def fmt(v):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if isinstance(v, float):
        return "%.6g" % v
    return str(v)


def versions(backends):
    import importlib.metadata as md
    out = {}
    names = {"torch_eager": "torch", "torch_compile": "torch", "liger": "liger-kernel",
             "quack": "quack-kernels"}
    for b in backends:
        try:
            v = md.version(names[b])
        except Exception:
            v = "?"
        label = {"liger-kernel": "liger", "quack-kernels": "quack"}.get(names[b], names[b])
        out[b] = ("%s %s" % (label, v.split("+")[0]))[:15]
    return out


def available(backend):
    import importlib
    try:
        if backend in ("liger", "quack"):
            importlib.import_module({"liger": "liger_kernel", "quack": "quack"}[backend])
        return None
    except Exception as ex:  # not installed, or its import fails on this box
        return "%s not importable: %s" % (backend, str(ex).splitlines()[0] if str(ex) else type(ex).__name__)


def done_keys(path):
    keys = set()
    if not os.path.exists(path):
        return keys
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            keys.add((r["benchmark"], r["backend"], r["dtype"], int(r["M"]), int(r["N"]),
                      int(r.get("K") or 0)))
    return keys


ANCHOR_COLUMNS = {"eager_gbps": "torch_eager", "compiled_gbps": "torch_compile",
                  "liger_gbps": "liger", "quack_gbps": "quack"}


def convert_anchors(kb, src, out, gpu):
    """A table of peers' GB/s measured elsewhere (benchmark,M,N,dtype,
    eager_gbps,compiled_gbps,liger_gbps,...) as results rows: median_ms from
    SPEC's byte model, accuracy not checked (empty), an empty cell a SKIP.
    Costs no GPU time, so a report can show peers without running them."""
    n = 0
    with open(src, newline="") as f, open(out, "w", newline="") as g:
        w = csv.DictWriter(g, COLUMNS)
        w.writeheader()
        for line, r in enumerate(csv.DictReader(f), start=2):
            try:
                bench, M, N, dt = r["benchmark"], int(r["M"]), int(r["N"]), r["dtype"]
                moved = kb.bytes_moved(bench, M, N, dt)
            except (KeyError, ValueError) as ex:
                raise SystemExit("%s:%d: not a peers' GB/s row (%s)" % (src, line, ex))
            for col, backend in ANCHOR_COLUMNS.items():
                if col not in r:
                    continue
                row = {"benchmark": bench, "backend": backend, "dtype": dt, "M": M, "N": N,
                       "gpu": gpu, "config": "GB/s from " + os.path.basename(src)}
                v = (r[col] or "").strip()
                try:
                    gbps = float(v)
                except ValueError:
                    gbps = float("nan")
                if not (gbps > 0 and math.isfinite(gbps)):
                    row.update(accuracy="SKIP", message="no %s value in %s" % (col, src))
                else:
                    med = moved / (gbps * 1e9) * 1e3
                    row.update(median_ms=fmt(med), gbps=fmt(gbps))
                w.writerow(row)
                n += 1
    print("torch_peers.py: wrote %d rows to %s" % (n, out), file=sys.stderr)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Time PyTorch eager, torch.compile, Liger-Kernel and QuACK on kbench's "
                    "benchmarks and write kbench's results CSV.")
    p.add_argument("--out", help="results CSV to write (kbench's schema); needed unless --list")
    p.add_argument("--kbench", default=os.path.join("build", "kbench"), metavar="PATH",
                   help="the kbench whose --describe gives the benchmarks, shapes and byte "
                        "models (default: build/kbench)")
    p.add_argument("--list", action="store_true",
                   help="print the cases a run would measure and their byte counts, then "
                        "exit (needs no torch and no GPU)")
    p.add_argument("--benchmarks", type=parse_list(None, "benchmark"), default=None,
                   help="comma-separated (default: every kbench benchmark; one without a "
                        "PyTorch peer here is listed as such and gets SKIP rows)")
    p.add_argument("--shapes", type=parse_shapes, default=None,
                   help="comma-separated MxN, or MxNxK for mlp_forward (default: kbench's "
                        "sweep per benchmark)")
    p.add_argument("--backends", type=parse_list(BACKENDS, "backend"), default=None,
                   help="comma-separated from %s (default: those that import)" % ",".join(BACKENDS))
    p.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    p.add_argument("--quick", action="store_true",
                   help="3 shapes per benchmark and a short time budget per case")
    p.add_argument("--resume", action="store_true",
                   help="keep --out and skip the cases already in it")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--from-csv", metavar="FILE",
                   help="no timing: convert a table of peers' GB/s (benchmark,M,N,dtype,"
                        "eager_gbps,compiled_gbps,liger_gbps) measured elsewhere")
    p.add_argument("--gpu", default="", help="gpu column for --from-csv rows")
    p.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # cpu: smoke tests only
    a = p.parse_args(argv)
    if not a.out and not a.list:
        p.error("--out is required (or --list)")
    if a.list and a.from_csv:
        p.error("--list and --from-csv cannot be combined")
    kb = Kbench(a.kbench)
    if a.from_csv:
        return convert_anchors(kb, a.from_csv, a.out, a.gpu)
    benchmarks = kb.selected(a.benchmarks)

    def shapes_of(bench):
        """Shapes with as many sizes as the benchmark takes (3: mlp_forward)."""
        three = kb.benches[bench].get("dims", 2) == 3
        if a.shapes:
            return [s for s in a.shapes if (s[2] > 0) == three]
        if a.quick:
            return kb.default_shapes(bench)[:2] if three else QUICK
        return kb.default_shapes(bench)

    # --shapes of the wrong kind for every benchmark (MxN for mlp_forward
    # alone) would select nothing: an empty CSV and exit 0.
    if a.shapes and not any(shapes_of(bench) for bench in benchmarks):
        p.error("--shapes: no selected benchmark takes shapes with %s sizes (mlp blocks take "
                "MxNxK, the others MxN)" % " or ".join(sorted({"3" if s[2] else "2"
                                                             for s in a.shapes})))
    if a.list:
        # note: empty for a case a run measures, NO_PEER for one it can only SKIP
        print("benchmark,dtype,M,N,K,bytes,note")
        for bench in benchmarks:
            for M, N, K in shapes_of(bench):
                print("%s,%s,%d,%d,%d,%s,%s" % (bench, a.dtype, M, N, K,
                                                kb.bytes_moved(bench, M, N, a.dtype, K),
                                                "" if has_peer(bench) else NO_PEER))
        return 0
    for bench in benchmarks:
        if not has_peer(bench):
            print("torch_peers.py: %s: %s; its cases are written as SKIP" % (bench, NO_PEER),
                  file=sys.stderr)

    try:
        import torch
    except ImportError:
        print("torch_peers.py: PyTorch is not installed", file=sys.stderr)
        return 77
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        print("torch_peers.py: no CUDA device", file=sys.stderr)
        return 77

    dtype = torch_dtype(torch, a.dtype)
    backends = a.backends
    notes = {}
    if backends is None:
        backends = []
        for b in BACKENDS:
            why = available(b)
            if why:
                print("torch_peers.py: %s; skipped" % why, file=sys.stderr)
            else:
                backends.append(b)
    else:
        for b in backends:
            why = available(b)
            if why:
                notes[b] = why  # asked for: every case gets a SKIP row saying why

    gpu = torch.cuda.get_device_name(a.device) if a.device.startswith("cuda") else a.device
    sol = measure_sol(torch, a.device)
    if sol:
        print("torch_peers.py: %s, device copy %.0f GB/s" % (gpu, sol), file=sys.stderr)
    timer = Timer(torch, a.device, 30.0 if a.quick else 200.0, 5 if a.quick else 10,
                  50 if a.quick else 500)
    ver = versions(backends)
    skip = done_keys(a.out) if a.resume else set()
    new = not (a.resume and os.path.exists(a.out) and os.path.getsize(a.out) > 0)

    with open(a.out, "w" if new else "a", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        if new:
            w.writeheader()
        for bench in benchmarks:
            for M, N, K in shapes_of(bench):
                todo = [b for b in backends if (bench, b, a.dtype, M, N, K) not in skip]
                if not todo:
                    continue
                d = gold = None
                if not has_peer(bench):
                    none_why = "%s (ci/peers/peer_ops.py has no code for %s)" % (NO_PEER, bench)
                else:
                    try:
                        d = make_inputs(torch, bench, M, N, dtype, a.device, a.seed, K)
                        gold = reference(torch, bench, d)
                    except torch.cuda.OutOfMemoryError as ex:
                        d = gold = None
                        none_why = ("inputs do not fit in device memory: %s"
                                    % str(ex).splitlines()[0])
                for backend in todo:
                    row = {"benchmark": bench, "backend": backend, "dtype": a.dtype, "M": M,
                           "N": N, "K": K or "", "gpu": gpu, "version": ver.get(backend, ""),
                           "sol_gbps": fmt(sol),
                           "date": datetime.datetime.now(datetime.timezone.utc)
                           .strftime("%Y-%m-%dT%H:%M:%SZ")}
                    try:
                        if d is None:
                            raise RuntimeError(none_why)
                        if backend in notes:
                            raise RuntimeError(notes[backend])
                        fn, row["config"] = build(torch, backend, bench, d)
                        outs = fn()
                        mism, worst = 0, 0.0
                        for (g, absterms, coef), o in zip(gold, outs):
                            atol, rtol = tolerance(torch, g.dtype)
                            mm, ww = compare(torch, o, g, absterms, coef, atol, rtol)
                            mism, worst = mism + mm, max(worst, ww)
                        del outs
                        med, lo, hi, noise, n = summarise(timer.measure(fn))
                        gbps = kb.bytes_moved(bench, M, N, a.dtype, K) / (med * 1e-3) / 1e9
                        fl = kb.flops(bench, M, N, K)
                        if fl:
                            row["tflops"] = fmt(fl / (med * 1e-3) / 1e12)
                        row.update(median_ms=fmt(med), min_ms=fmt(lo), max_ms=fmt(hi),
                                   noise=fmt(noise), samples=n, gbps=fmt(gbps),
                                   sol_pct=fmt(100 * gbps / sol if sol else None),
                                   accuracy="FAIL" if mism else "PASS", mismatches=mism,
                                   max_err=fmt(worst))
                        if timer.hold_ms is not None:
                            row["message"] = ("stream held %.3f ms before each call; one call's "
                                              "host time %.3f ms" % (timer.hold_ms, timer.host_ms))
                        msg = "%.4f ms %.0f GB/s %s" % (med, gbps, row["accuracy"])
                    except Exception as ex:  # the library refused or failed: SKIP, say why
                        text = (str(ex).strip().splitlines() or [type(ex).__name__])[0]
                        row.update(accuracy="SKIP", message=text[:500])
                        msg = "SKIP: " + text
                    fn = None
                    w.writerow({k: fmt(v) if isinstance(v, float) else v for k, v in row.items()})
                    f.flush()
                    print("%s %s %s %s: %s" % (bench, backend, a.dtype, shape_text(M, N, K), msg),
                          file=sys.stderr)
                    if a.device.startswith("cuda"):
                        torch.cuda.empty_cache()
                d = gold = None
    return 0


if __name__ == "__main__":
    sys.exit(main())
