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
PyTorch implementations of each op family and a --quick subset of shapes.
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
would pay, ~5 us on an H200), a short spin kernel (torch.cuda._sleep)
holding the stream so Python's launch overhead is not timed, repetitions
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
docs/SPEC.md) into the same schema, accuracy not checked.

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

COLUMNS = [
    "benchmark", "backend", "dtype", "M", "N", "median_ms", "min_ms", "max_ms", "noise",
    "gbps", "sol_gbps", "sol_pct", "samples", "accuracy", "mismatches", "max_err",
    "baseline_gbps", "verdict", "gpu", "config", "date", "version", "message", "K", "tflops",
]

BACKENDS = ["torch_eager", "torch_compile", "liger", "quack"]
# The op families this script has PyTorch code for (make_inputs, reference,
# torch_fn, module_fn); a benchmark of another family has no peer here.
FAMILIES = ("cross_entropy", "softmax", "rmsnorm", "layernorm", "glu", "mlp")
# --quick: three shapes of kbench's default sweep, short to long rows.
QUICK = [(32768, 1024, 0), (32768, 16384, 0), (16384, 131072, 0)]
EPS = 1e-6
COMPILE_MODE = "max-autotune-no-cudagraphs"
DW_ROUNDING = 8.0  # fp32 unit roundoffs per |term|, as kbench's tolerance.h
FP32_U = 2.0 ** -24
GEMM_ROUNDING = 8.0  # bf16 unit roundoffs per root-sum-square of the K terms (tolerance.h)


# ---- kbench's description: benchmarks, shapes, byte models ------------------

TERMS = ("M*N*s", "M*s", "M", "N")  # the byte model's monomials, s the dtype's size
# (3-D ops add "N*K*s"; shapes then carry "K": mlp_forward is T x D x H)


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
             + t.get("N*K*s", 0) * N * K * s)
        return int(v) if v == int(v) else v

    def flops(self, bench, M, N, K):
        """A compute-bound op's flops (kbench's "flops"), else 0."""
        return self.benches[bench].get("flops", {}).get("M*N*K", 0) * M * N * K

    def peer_benchmarks(self, wanted):
        """The benchmarks to run: wanted (names), or every one with PyTorch
        code here; an unknown or peerless name given is an error."""
        out = []
        for name in wanted or self.names:
            if name not in self.benches:
                raise SystemExit("torch_peers.py: unknown benchmark '%s' (kbench has: %s)"
                                 % (name, ", ".join(self.names)))
            if self.benches[name]["family"] in FAMILIES:
                out.append(name)
            elif wanted:
                raise SystemExit("torch_peers.py: %s has no PyTorch implementation in this "
                                 "script" % name)
            else:
                print("torch_peers.py: %s has no PyTorch implementation here; skipped" % name,
                      file=sys.stderr)
        return out


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


# ---- inputs and the fp32 reference ------------------------------------------

def make_inputs(torch, bench, M, N, dtype, device, seed, K=0):
    g = torch.Generator(device=device)
    g.manual_seed(seed)

    def randn(*shape, scale=1.0, dt=dtype):
        t = torch.randn(*shape, generator=g, device=device, dtype=torch.float32)
        if scale != 1.0:
            t.mul_(scale)
        return t.to(dt)

    d = {}
    if bench.startswith("mlp"):  # kbench's distributions (kernels/reference/inputs.cu)
        d["x"] = randn(M, N)
        d["wg"] = randn(K, N, scale=N ** -0.5)
        d["wu"] = randn(K, N, scale=N ** -0.5)
        d["wd"] = randn(N, K, scale=K ** -0.5)
    elif bench.startswith("cross_entropy"):
        d["x"] = randn(M, N, scale=0.1)
        d["target"] = torch.randint(0, N, (M,), generator=g, device=device, dtype=torch.int64)
        if bench.endswith("backward"):
            d["dloss"] = randn(M, dt=torch.float32)
    elif bench.startswith("softmax"):
        d["x"] = randn(M, N, scale=0.1)
        if bench.endswith("backward"):
            d["dy"] = randn(M, N)
    elif is_glu(bench):
        d["x"] = randn(M, N)  # the gate, as kbench names it
        d["up"] = randn(M, N)
        if bench.endswith("backward"):
            d["dy"] = randn(M, N)
    else:
        d["x"] = randn(M, N)
        d["w"] = randn(N, dt=torch.float32)
        if bench.endswith("backward"):
            d["dy"] = randn(M, N)
    return d


def torch_dtype(torch, name):
    """kbench's dtype name as torch's dtype."""
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[name]


def is_glu(bench):
    return bench.startswith(("geglu", "swiglu"))


GELU_BETA = math.sqrt(2.0 / math.pi)
GELU_KAPPA = 0.044715


def glu_act_dact(torch, bench, g):
    """act(g) and act'(g) in float64 (kernels/reference/glu_ref.h's formulas)."""
    if bench.startswith("geglu"):
        t = torch.tanh(GELU_BETA * (g + GELU_KAPPA * g * g * g))
        return (0.5 * g * (1.0 + t),
                0.5 * (1.0 + t) + 0.5 * g * (1.0 - t * t) * GELU_BETA * (1.0 + 3.0 * GELU_KAPPA * g * g))
    s = torch.sigmoid(g)
    return g * s, s * (1.0 + g * (1.0 - s))


def glu_reference(torch, bench, d):
    """GLU gold in float64 from the dtype-rounded inputs: out, or dgate and dup."""
    x = d["x"]
    M, N = x.shape
    backward = bench.endswith("backward")
    outs = [torch.empty((M, N), dtype=x.dtype, device=x.device) for _ in range(2 if backward else 1)]
    for a, b in row_chunks(M, N):
        g, u = x[a:b].double(), d["up"][a:b].double()
        act, dact = glu_act_dact(torch, bench, g)
        if not backward:
            outs[0][a:b] = (act * u).to(x.dtype)
            continue
        dy = d["dy"][a:b].double()
        outs[0][a:b] = (dy * u * dact).to(x.dtype)
        outs[1][a:b] = (dy * act).to(x.dtype)
    return [(o, None, 0.0) for o in outs]


def row_chunks(M, N, budget=1 << 26):
    """Row ranges so that fp32 temporaries stay near budget elements."""
    step = max(1, budget // max(N, 1))
    for i in range(0, M, step):
        yield i, min(M, i + step)


def mlp_act(torch, bench):
    """GeGLU (mlp_forward) or SwiGLU (mlp_swiglu_forward)."""
    F = torch.nn.functional
    if bench == "mlp_swiglu_forward":
        return F.silu
    return lambda g: F.gelu(g, approximate="tanh")


def mlp_reference(torch, bench, d):
    """The MLP block's gold (fp32 GEMMs, the GLU activation, rounded once) and
    its error scale sqrt(sum_k (h_k Wd_k)^2), as kbench's reference
    (mlp_math.h)."""
    act = mlp_act(torch, bench)
    F = torch.nn.functional
    x = d["x"]
    T, D = x.shape
    wg, wu, wd = d["wg"].float(), d["wu"].float(), d["wd"].float()
    out = torch.empty((T, D), dtype=x.dtype, device=x.device)
    scale = torch.empty((T, D), dtype=torch.float32, device=x.device)
    for a, b in row_chunks(T, wg.shape[0]):
        xf = x[a:b].float()
        h = act(xf @ wg.T) * (xf @ wu.T)
        out[a:b] = (h @ wd.T).to(x.dtype)
        scale[a:b] = (h.square() @ wd.square().T).sqrt()
    return [(out, scale, GEMM_ROUNDING * 2.0 ** -8)]


def reference(torch, bench, d):
    """fp32 gold from the dtype-rounded inputs, rounded to the output dtype;
    dw stays fp32 (summed in fp64), with the per-column sum of |terms| that
    the summation-order allowance scales. Items: (gold, terms, coefficient):
    an element may differ by coefficient * terms more."""
    if is_glu(bench):
        return glu_reference(torch, bench, d)
    if bench.startswith("mlp"):
        return mlp_reference(torch, bench, d)
    x = d["x"]
    M, N = x.shape
    dt = x.dtype
    out = torch.empty((M,) if bench == "cross_entropy_forward" else (M, N), dtype=dt,
                      device=x.device)
    dw = absw = None
    if bench in ("rmsnorm_backward", "layernorm_backward"):
        dw = torch.zeros(N, dtype=torch.float64, device=x.device)
        absw = torch.zeros(N, dtype=torch.float64, device=x.device)
    w = d.get("w")
    for a, b in row_chunks(M, N):
        xf = x[a:b].float()
        if bench == "cross_entropy_forward":
            lse = torch.logsumexp(xf, dim=-1)
            out[a:b] = (lse - xf.gather(1, d["target"][a:b, None])[:, 0]).to(dt)
        elif bench == "cross_entropy_backward":
            p = torch.softmax(xf, dim=-1)
            p[torch.arange(b - a, device=x.device), d["target"][a:b]] -= 1.0
            out[a:b] = (p * d["dloss"][a:b, None]).to(dt)
        elif bench == "softmax_forward":
            out[a:b] = torch.softmax(xf, dim=-1).to(dt)
        elif bench == "softmax_backward":
            # The backward reads the saved y in the input dtype, as autograd does.
            y = torch.softmax(xf, dim=-1).to(dt).float()
            dy = d["dy"][a:b].float()
            out[a:b] = (y * (dy - (dy * y).sum(-1, keepdim=True))).to(dt)
        elif bench.startswith("rmsnorm"):
            rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + EPS)
            xh = xf * rstd
            if bench == "rmsnorm_forward":
                out[a:b] = (xh * w).to(dt)
            else:
                dy = d["dy"][a:b].float()
                g = dy * w
                out[a:b] = (rstd * (g - xh * (g * xh).mean(-1, keepdim=True))).to(dt)
                t = dy * xh
                dw += t.double().sum(0)
                absw += t.abs().double().sum(0)
        else:
            mean = xf.mean(-1, keepdim=True)
            var = (xf - mean).square().mean(-1, keepdim=True)
            rstd = torch.rsqrt(var + EPS)
            xh = (xf - mean) * rstd
            if bench == "layernorm_forward":
                out[a:b] = (xh * w).to(dt)
            else:
                dy = d["dy"][a:b].float()
                g = dy * w
                out[a:b] = (rstd * (g - g.mean(-1, keepdim=True)
                                    - xh * (g * xh).mean(-1, keepdim=True))).to(dt)
                t = dy * xh
                dw += t.double().sum(0)
                absw += t.abs().double().sum(0)
    if dw is None:
        return [(out, None, 0.0)]
    return [(out, None, 0.0), (dw.float(), absw, DW_ROUNDING * FP32_U)]


def tolerance(torch, dtype):
    """SPEC's (atol, rtol) by output dtype: torch.testing's defaults."""
    if dtype == torch.bfloat16:
        return 1e-5, 1.6e-2
    if dtype == torch.float16:
        return 1e-5, 1e-3
    return 1e-5, 1.3e-6


def compare(torch, got, gold, absterms, coef, atol, rtol):
    """assert_close's test, element-wise: (mismatches, worst |d|/allowed)."""
    got = got.detach().reshape(gold.shape)
    if got.dtype != gold.dtype:
        got = got.to(gold.dtype)  # e.g. a library that returns an fp32 loss
    mism, worst = 0, 0.0
    flat_g, flat_o = gold.reshape(gold.shape[0], -1), got.reshape(gold.shape[0], -1)
    n = flat_g.shape[1]
    for a, b in row_chunks(flat_g.shape[0], n):
        g = flat_g[a:b].double()
        o = flat_o[a:b].double()
        allowed = atol + rtol * g.abs()
        if absterms is not None:
            allowed = allowed + coef * absterms.reshape(g.shape).double()
        diff = (o - g).abs()
        same_nonfinite = (torch.isnan(g) & torch.isnan(o)) | (torch.isinf(g) & (o == g))
        ratio = torch.where(diff == 0, torch.zeros_like(diff), diff / allowed)
        ratio = torch.where(same_nonfinite, torch.zeros_like(ratio), ratio)
        ratio = torch.where(torch.isfinite(ratio), ratio, torch.full_like(ratio, math.inf))
        mism += int((ratio > 1.0).sum().item())
        worst = max(worst, float(ratio.max().item()))
    return mism, worst


# ---- the backends ---------------------------------------------------------

def rms_ref(torch, x, w):
    """PyTorch eager's RMSNorm: the fp32 chain, one kernel per op."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + EPS) * w).to(x.dtype)


def ln_ref(torch, x, w):
    """PyTorch eager's LayerNorm without bias: cast -> layer_norm -> cast."""
    return torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), w, None, EPS).to(x.dtype)


def torch_fn(torch, bench):
    F = torch.nn.functional
    if bench.startswith("mlp"):  # the block as a model writes it: F.linear, GeGLU/SwiGLU
        act = mlp_act(torch, bench)
        return lambda x, wg, wu, wd: F.linear(act(F.linear(x, wg)) * F.linear(x, wu), wd)
    if bench.startswith("cross_entropy"):
        return lambda x, t: F.cross_entropy(x, t, reduction="none")
    if bench.startswith("softmax"):
        return lambda x: F.softmax(x, dim=-1)
    if bench.startswith("geglu"):
        return lambda x, up: F.gelu(x, approximate="tanh") * up
    if bench.startswith("swiglu"):
        return lambda x, up: F.silu(x) * up
    if bench.startswith("rmsnorm"):
        return lambda x, w: rms_ref(torch, x, w)
    return lambda x, w: ln_ref(torch, x, w)


def module_fn(torch, backend, bench, N, w):
    """The forward of a library backend as f(x[, target]) -> output, plus the
    weight tensor autograd should differentiate (norms) or None."""
    if is_glu(bench):
        if backend != "liger":
            raise RuntimeError("%s has no %s peer" % (bench, backend))
        # Liger's GEGLU/SwiGLU elementwise ops (what LigerGEGLUMLP and
        # LigerSwiGLUMLP call between their GEMMs). Their backward writes the
        # gradients over the saved gate and up: repeated backward calls time
        # the same kernel on overwritten values (accuracy is from the first).
        if bench.startswith("geglu"):
            from liger_kernel.ops.geglu import LigerGELUMulFunction as Fn
        else:
            from liger_kernel.ops.swiglu import LigerSiLUMulFunction as Fn
        return (lambda x, up: Fn.apply(x, up)), None
    if backend == "liger":
        if bench.startswith("cross_entropy"):
            from liger_kernel.transformers.cross_entropy import LigerCrossEntropyLoss
            m = LigerCrossEntropyLoss(reduction="none")
            return (lambda x, t: m(x, t)), None
        if bench.startswith("softmax"):
            from liger_kernel.transformers.softmax import LigerSoftmax
            m = LigerSoftmax()
            return (lambda x: m(x)), None
        if bench.startswith("rmsnorm"):
            from liger_kernel.transformers.rms_norm import LigerRMSNorm
            m = LigerRMSNorm(hidden_size=N, eps=EPS).to(w.device)
        else:
            from liger_kernel.transformers.layer_norm import LigerLayerNorm
            m = LigerLayerNorm(hidden_size=N, eps=EPS).to(w.device)
            if getattr(m, "bias", None) is not None:
                with torch.no_grad():
                    m.bias.zero_()  # SPEC's LayerNorm has no bias
                m.bias.requires_grad_(False)
        with torch.no_grad():
            m.weight.data = w.detach().clone().to(m.weight.dtype)
        return (lambda x, wt=None: m(x)), m.weight
    # quack: its public autograd-aware functions.
    if bench.startswith("cross_entropy"):
        from quack.cross_entropy import cross_entropy
        return (lambda x, t: cross_entropy(x, t)), None
    if bench.startswith("softmax"):
        from quack.softmax import softmax
        return (lambda x: softmax(x)), None
    wq = w.detach().clone().requires_grad_(bench.endswith("backward"))
    if bench.startswith("rmsnorm"):
        from quack.rmsnorm import rmsnorm
        return (lambda x, wt=None: rmsnorm(x, wq, eps=EPS)), wq
    from quack.layernorm import layernorm
    return (lambda x, wt=None: layernorm(x, wq, eps=EPS)), wq


def build(torch, backend, bench, d):
    """A zero-argument callable running exactly the timed work and returning
    its outputs (a tuple), and a text for the config column."""
    M, N = d["x"].shape
    backward = bench.endswith("backward")
    if bench.startswith("mlp"):
        if backend not in ("torch_eager", "torch_compile"):
            raise RuntimeError("%s: no mlp_forward peer in this script" % backend)
        f = torch_fn(torch, bench)
        config = ""
        if backend == "torch_compile":
            # Specialised per shape, as Inductor in the blog; the default mode:
            # the GEMMs stay cuBLAS's (max-autotune would swap in tuned Triton
            # GEMMs, minutes per shape) and Inductor fuses act * up, which is
            # what the mlp backends differ in.
            torch._dynamo.reset()
            f = torch.compile(f)
            config = "default"
        x, wg, wu, wd = d["x"], d["wg"], d["wu"], d["wd"]
        return (lambda: (f(x, wg, wu, wd),)), config
    ce = bench.startswith("cross_entropy")
    glu = is_glu(bench)
    norm = bench.startswith(("rmsnorm", "layernorm"))
    config = ""
    wgrad = None
    if backend in ("torch_eager", "torch_compile"):
        f = torch_fn(torch, bench)
        if backend == "torch_compile":
            torch._dynamo.reset()  # a fresh specialisation per shape
            f = torch.compile(f, mode=COMPILE_MODE)
            config = COMPILE_MODE
        if norm:
            wgrad = d["w"].detach().clone().requires_grad_(backward)
            fwd = (lambda x, f=f, wt=wgrad: f(x, wt))
        else:
            fwd = f
    else:
        fwd, wgrad = module_fn(torch, backend, bench, N, d.get("w"))
    # Own copies: some libraries write into their input (Liger's cross
    # entropy stores the gradient in x).
    x = d["x"].detach().clone()
    args = (d["target"].clone(),) if ce else (d["up"].detach().clone(),) if glu else ()
    if backend == "torch_compile" and not backward:
        for t in (x,) + args:
            torch._dynamo.mark_dynamic(t, 0)
    if not backward:
        return (lambda: (fwd(x, *args),)), config
    x.requires_grad_(True)
    if glu:  # dgate and dup: gradients of both inputs
        args[0].requires_grad_(True)
    y = fwd(x, *args)  # once, untimed: autograd saves what the backward reads
    grad = d["dloss"] if ce else d["dy"]
    inputs = [x] + ([wgrad] if wgrad is not None else [])
    if glu:
        inputs = [x, args[0]]
    return (lambda: tuple(torch.autograd.grad(y, inputs, grad_outputs=grad,
                                              retain_graph=True))), config


# ---- timing ------------------------------------------------------------------

class Timer:
    def __init__(self, torch, device, budget_ms, min_reps, max_reps):
        self.torch = torch
        self.cuda = device.startswith("cuda")
        self.budget_ms, self.min_reps, self.max_reps = budget_ms, min_reps, max_reps
        self.flush = None
        self.sleep = None
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
        for i in range(reps):
            self.flush_l2()
            if self.sleep is not None:
                self.sleep(200000)  # ~0.1 ms: the GPU waits here, not on Python
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
                   help="comma-separated (default: every kbench benchmark with a PyTorch "
                        "peer here)")
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
    benchmarks = kb.peer_benchmarks(a.benchmarks)

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
        print("benchmark,dtype,M,N,K,bytes")
        for bench in benchmarks:
            for M, N, K in shapes_of(bench):
                print("%s,%s,%d,%d,%d,%s" % (bench, a.dtype, M, N, K,
                                             kb.bytes_moved(bench, M, N, a.dtype, K)))
        return 0

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
                try:
                    d = make_inputs(torch, bench, M, N, dtype, a.device, a.seed, K)
                    gold = reference(torch, bench, d)
                except torch.cuda.OutOfMemoryError as ex:
                    d = gold = None
                    oom = "inputs do not fit in device memory: %s" % str(ex).splitlines()[0]
                for backend in todo:
                    row = {"benchmark": bench, "backend": backend, "dtype": a.dtype, "M": M,
                           "N": N, "K": K or "", "gpu": gpu, "version": ver.get(backend, ""),
                           "sol_gbps": fmt(sol),
                           "date": datetime.datetime.now(datetime.timezone.utc)
                           .strftime("%Y-%m-%dT%H:%M:%SZ")}
                    try:
                        if d is None:
                            raise RuntimeError(oom)
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
