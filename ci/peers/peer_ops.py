"""The PyTorch side of torch_peers.py, per op family: inputs drawn as kbench
draws them (make_inputs), the fp32 reference and the tolerances every peer's
output is checked with (reference, tolerance, compare), and the peers
themselves: PyTorch eager (torch_fn), library modules (module_fn) and the
timed callable of each backend (build), torch.compile included.

Every function takes the torch module as its first argument: torch_peers.py
imports torch only when it measures, so --list and --from-csv run without
it. PEERS names the benchmarks this file has code for; torch_peers.py lists
every other benchmark kbench describes as having no PyTorch peer. A new op
needs its code here (make_inputs, reference, torch_fn, module_fn, build) and
its name in PEERS; the functions refuse a benchmark not in PEERS rather than
treat it as another op."""
import math

EPS = 1e-6
COMPILE_MODE = "max-autotune-no-cudagraphs"
DW_ROUNDING = 8.0  # fp32 unit roundoffs per |term|, as kbench's tolerance.h
FP32_U = 2.0 ** -24
GEMM_ROUNDING = 8.0  # bf16 unit roundoffs per root-sum-square of the K terms (tolerance.h)
TERMS_ROUNDING = 4.0  # dtype unit roundoffs per sum of |terms| (tolerance.h, KB_TERMS_ROUNDING)


# The benchmarks this file has PyTorch code for, by kbench's names.
PEERS = (
    "cross_entropy_forward", "cross_entropy_backward", "softmax_forward", "softmax_backward",
    "rmsnorm_forward", "rmsnorm_backward", "layernorm_forward", "layernorm_backward",
    "geglu_forward", "geglu_backward", "swiglu_forward", "swiglu_backward",
    "mlp_forward", "mlp_swiglu_forward",
    "add_rmsnorm_forward", "add_rmsnorm_backward", "rope_forward", "rope_backward",
)
ROPE_D = 128       # kbench's rope head_dim (kernels/rope/rope.h)
ROPE_BASE = 10000.0
NO_PEER = "no PyTorch peer"


def require_peer(bench):
    """The branches below pick an op by its name's prefix, the last one
    taking what is left: a benchmark without code here is refused by name,
    never run as another op."""
    if bench not in PEERS:
        raise ValueError("%s: %s (ci/peers/peer_ops.py has no code for it)" % (bench, NO_PEER))


# ---- inputs and the fp32 reference ------------------------------------------

def make_inputs(torch, bench, M, N, dtype, device, seed, K=0):
    require_peer(bench)
    g = torch.Generator(device=device)
    g.manual_seed(seed)

    def randn(*shape, scale=1.0, dt=dtype):
        t = torch.randn(*shape, generator=g, device=device, dtype=torch.float32)
        if scale != 1.0:
            t.mul_(scale)
        return t.to(dt)

    d = {}
    if bench.startswith("rope"):
        # q, k in the layout HF's attention hands apply_rotary_pos_emb: the
        # [batch, heads, seq, D] views of [batch, seq, heads, D] storage
        # (what Liger's kernel reads in place); cos/sin HF's table in the
        # dtype, [1, seq, D]. kbench's own kernels take head-major storage:
        # the same bytes.
        d["q"] = randn(1, M, N, ROPE_D).transpose(1, 2)
        d["k"] = randn(1, M, K, ROPE_D).transpose(1, 2)
        inv = ROPE_BASE ** (-torch.arange(0, ROPE_D, 2, device=device, dtype=torch.float64) / ROPE_D)
        ang = torch.arange(M, device=device, dtype=torch.float64)[:, None] * inv[None, :]
        ang = torch.cat([ang, ang], dim=-1)
        d["cos"] = ang.cos()[None].to(dtype)
        d["sin"] = ang.sin()[None].to(dtype)
        if bench.endswith("backward"):
            d["dq"] = randn(1, M, N, ROPE_D).transpose(1, 2)
            d["dk"] = randn(1, M, K, ROPE_D).transpose(1, 2)
        return d
    if bench.startswith("add_rmsnorm"):
        d["x"] = randn(M, N)
        d["res"] = randn(M, N)
        d["w"] = randn(N, dt=torch.float32)
        if bench.endswith("backward"):
            d["dy"] = randn(M, N)
            d["dres"] = randn(M, N)
        return d
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
    """act(g) and act'(g) in float64 (kernels/glu/glu_ref.h's formulas)."""
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
    require_peer(bench)
    if bench.startswith("rope"):
        return rope_reference(torch, bench, d)
    if bench.startswith("add_rmsnorm"):
        return add_rmsnorm_reference(torch, bench, d)
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


def rotate_half(torch, x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rope_reference(torch, bench, d):
    """q, k rotated (forward) or the gradients rotated back (backward), in
    fp64 from the stored inputs, with each element's two terms as the error
    scale (kbench's `terms`: PyTorch rounds each product before adding)."""
    cos, sin = d["cos"].double()[:, None], d["sin"].double()[:, None]
    items = []
    for name in ("q", "k") if bench == "rope_forward" else ("dq", "dk"):
        t = d[name]
        x = t.double()
        if bench == "rope_forward":
            gold = x * cos + rotate_half(torch, x) * sin
            terms = (x * cos).abs() + (rotate_half(torch, x) * sin).abs()
        else:  # the transpose: dx = g cos - rotate_half(g sin)
            gold = x * cos - rotate_half(torch, x * sin)
            terms = (x * cos).abs() + rotate_half(torch, x * sin).abs()
        items.append((gold.to(t.dtype), terms, TERMS_ROUNDING * unit_roundoff(torch, t.dtype)))
    return items


def add_rmsnorm_reference(torch, bench, d):
    """h = x + res (in the dtype) and y = rmsnorm(h) w (forward); dx =
    rmsnorm's dx + dres and dw (backward), from the stored inputs."""
    w = d["w"].double()
    if bench == "add_rmsnorm_forward":
        x, r = d["x"], d["res"]
        h = (x.float() + r.float()).to(x.dtype)
        hf = h.double()
        rstd = torch.rsqrt(hf.square().mean(-1, keepdim=True) + EPS)
        y = hf * rstd * w
        u = TERMS_ROUNDING * unit_roundoff(torch, x.dtype)
        return [(h, x.double().abs() + r.double().abs(), u),
                (y.to(x.dtype), (hf * rstd * w).abs(), u)]
    h = d["x"].double()
    dy, dres = d["dy"].double(), d["dres"].double()
    rstd = torch.rsqrt(h.square().mean(-1, keepdim=True) + EPS)
    xh = h * rstd
    g = dy * w
    m = (g * xh).mean(-1, keepdim=True)
    dx = rstd * (g - xh * m) + dres
    terms = rstd * (g.abs() + xh.abs() * (g * xh).abs().mean(-1, keepdim=True)) + dres.abs()
    t = dy * xh
    return [(dx.to(d["x"].dtype), terms, TERMS_ROUNDING * unit_roundoff(torch, d["x"].dtype)),
            (t.sum(0).float(), t.abs().sum(0), DW_ROUNDING * FP32_U)]


def unit_roundoff(torch, dtype):
    return {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}.get(dtype, FP32_U)


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
    flat_t = absterms.reshape(gold.shape[0], -1) if absterms is not None else None
    n = flat_g.shape[1]
    for a, b in row_chunks(flat_g.shape[0], n):
        g = flat_g[a:b].double()
        o = flat_o[a:b].double()
        allowed = atol + rtol * g.abs()
        if flat_t is not None:  # the same rows of the terms as of the gold
            allowed = allowed + coef * flat_t[a:b].double()
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
    require_peer(bench)
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


def liger_mlp_fn(torch, bench):
    """The MLP block as Liger-Kernel's own modules run it: LigerGEGLUMLP
    (mlp_forward) and LigerSwiGLUMLP (mlp_swiglu_forward) compute
    down_proj(Fn.apply(gate_proj(x), up_proj(x))) with bias-free nn.Linear
    layers, i.e. PyTorch's GEMMs with Liger's fused act(gate) * up kernel
    between them; here F.linear on the same weights as the torch peers.
    LigerGELUMulFunction is the tanh GELU, as kbench's mlp_forward and
    mlp_act's GeGLU."""
    F = torch.nn.functional
    if bench == "mlp_swiglu_forward":
        from liger_kernel.ops.swiglu import LigerSiLUMulFunction as Fn
    else:
        from liger_kernel.ops.geglu import LigerGELUMulFunction as Fn
    return lambda x, wg, wu, wd: F.linear(Fn.apply(F.linear(x, wg), F.linear(x, wu)), wd)


def module_fn(torch, backend, bench, N, w):
    """The forward of a library backend as f(x[, target]) -> output, plus the
    weight tensor autograd should differentiate (norms) or None."""
    require_peer(bench)
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
    require_peer(bench)
    if bench.startswith("rope"):
        return build_rope(torch, backend, bench, d)
    if bench.startswith("add_rmsnorm"):
        return build_add_rmsnorm(torch, backend, bench, d)
    M, N = d["x"].shape
    backward = bench.endswith("backward")
    if bench.startswith("mlp"):
        if backend not in ("torch_eager", "torch_compile", "liger"):
            raise RuntimeError("%s: no %s peer in this script" % (backend, bench))
        f = liger_mlp_fn(torch, bench) if backend == "liger" else torch_fn(torch, bench)
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


def hf_rope(torch):
    """HF's apply_rotary_pos_emb (Llama), cos/sin [1, seq, D] unsqueezed
    over the heads."""
    def f(q, k, cos, sin):
        c, s_ = cos.unsqueeze(1), sin.unsqueeze(1)
        return q * c + rotate_half(torch, q) * s_, k * c + rotate_half(torch, k) * s_
    return f


def build_rope(torch, backend, bench, d):
    config = ""
    if backend in ("torch_eager", "torch_compile"):
        f = hf_rope(torch)
        if backend == "torch_compile":
            torch._dynamo.reset()
            f = torch.compile(f, mode=COMPILE_MODE)
            config = COMPILE_MODE
    elif backend == "liger":
        from liger_kernel.ops.rope import LigerRopeFunction
        f = (lambda q, k, c, s_: LigerRopeFunction.apply(q, k, c, s_))
    else:
        raise RuntimeError("%s has no %s peer" % (bench, backend))
    q, k = d["q"].detach().clone(), d["k"].detach().clone()
    cos, sin = d["cos"], d["sin"]
    if bench == "rope_forward":
        return (lambda: tuple(f(q, k, cos, sin))), config
    q.requires_grad_(True)
    k.requires_grad_(True)
    oq, ok = f(q, k, cos, sin)  # once, untimed
    dq, dk = d["dq"], d["dk"]
    return (lambda: tuple(torch.autograd.grad((oq, ok), (q, k), grad_outputs=(dq, dk),
                                              retain_graph=True))), config


def build_add_rmsnorm(torch, backend, bench, d):
    """h = x + res, y = RMSNorm(h) w: PyTorch as a decoder layer writes it
    (eager and compiled), Liger's LigerFusedAddRMSNormFunction (llama
    casting). The backward differentiates (y, h) with (dy, dres) against
    x and w; res's gradient is x's (one tensor, as kbench's dx)."""
    config = ""
    backward = bench == "add_rmsnorm_backward"
    if backend in ("torch_eager", "torch_compile"):
        def f(x, r, w):
            h = x + r
            return rms_ref(torch, h, w), h
        if backend == "torch_compile":
            torch._dynamo.reset()
            f = torch.compile(f, mode=COMPILE_MODE)
            config = COMPILE_MODE
    elif backend == "liger":
        from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
        f = (lambda x, r, w: LigerFusedAddRMSNormFunction.apply(x, r, w, EPS))
    else:
        raise RuntimeError("%s has no %s peer" % (bench, backend))
    w = d["w"].detach().clone().requires_grad_(backward)
    if not backward:
        x, r = d["x"].detach().clone(), d["res"].detach().clone()
        return (lambda: tuple(reversed(f(x, r, w)))), config  # (h, y), kbench's order
    # The backward's input h is what a forward of (h - 0) + 0 saves: x = h,
    # res = 0 gives the same saved sum and the same rstd.
    x = d["x"].detach().clone().requires_grad_(True)
    r = torch.zeros_like(x).requires_grad_(True)
    y, h = f(x, r, w)  # once, untimed
    dy, dres = d["dy"], d["dres"]
    return (lambda: tuple(torch.autograd.grad((y, h), (x, w), grad_outputs=(dy, dres),
                                              retain_graph=True))), config
