#!/usr/bin/env python3
"""Run one PyTorch peer case (the same function, inputs and torch.compile mode
as ci/peers/torch_peers.py) so that a profiler sees exactly one timed call,
inside cudaProfilerStart/Stop, after compilation, autotuning and warm-up.

Made to put the peer's kernel and kbench's side by side in one run:

  ncu --profile-from-start off --clock-control none -k regex:triton \\
      python3 ci/peers/torch_profile.py rmsnorm_forward 32768x8192
  ncu --clock-control none -k regex:fwd_reg -c 1 build/kbench rmsnorm_forward \\
      --backend tuned --shape 32768x8192 --no-timing

The L2 is flushed (a buffer twice its size zeroed) right before the profiled
call, as both timers do. With TORCH_LOGS=output_code, Inductor prints the
Triton source it generated (launch configurations, eviction policies) to
stderr. Exit: 0 done; 2 usage; 1 torch or CUDA missing."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peers as tp  # noqa: E402


# The benchmarks torch_peers.py has a PyTorch implementation of.
KNOWN = {"%s_%s" % (op, d) for op in ("cross_entropy", "softmax", "rmsnorm", "layernorm",
                                      "geglu", "swiglu") for d in ("forward", "backward")}
KNOWN |= {"mlp_forward", "mlp_swiglu_forward"}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("benchmark")
    p.add_argument("shape", help="MxN (mlp_forward: TxDxH)")
    p.add_argument("--backend", default="torch_compile", choices=["torch_eager", "torch_compile"])
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--warmup", type=int, default=5)
    a = p.parse_args(argv)
    if a.benchmark not in KNOWN:
        p.error("benchmark %r has no PyTorch peer here (one of: %s)"
                % (a.benchmark, ", ".join(sorted(KNOWN))))
    try:
        M, N, K = tp.parse_shapes(a.shape)[0]
    except Exception as ex:  # argparse-style usage error
        p.error("shape %r: %s" % (a.shape, ex))
    try:
        import torch
    except ImportError:
        print("torch_profile: torch is not installed", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("torch_profile: no CUDA device", file=sys.stderr)
        return 1
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[a.dtype]
    d = tp.make_inputs(torch, a.benchmark, M, N, dt, "cuda", 1234, K)
    fn, config = tp.build(torch, a.backend, a.benchmark, d)
    for _ in range(a.warmup):
        fn()
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or (64 << 20)
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    flush.zero_()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print("torch_profile: %s %s %s %s %s: one call profiled" %
          (a.benchmark, a.backend, config or "-", a.dtype, a.shape))
    return 0


if __name__ == "__main__":
    sys.exit(main())
