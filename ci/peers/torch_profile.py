#!/usr/bin/env python3
"""Run one PyTorch peer case (the same function, inputs and torch.compile mode
as ci/peers/torch_peers.py) so that a profiler sees exactly one timed call,
inside cudaProfilerStart/Stop, after compilation, autotuning and warm-up.

Made to put the peer's kernel and kbench's side by side in one run:

  ncu --profile-from-start off --clock-control none -k regex:triton \\
      python3 ci/peers/torch_profile.py rmsnorm_forward 32768x8192
  ncu --clock-control none -k regex:fwd_reg -c 1 build/kbench rmsnorm_forward \\
      --backend tuned --shape 32768x8192 --no-timing

The L2 is flushed (a read pass over a buffer twice its size, written once)
right before the profiled call, as both timers do. With TORCH_LOGS=output_code, Inductor prints the
Triton source it generated (launch configurations, eviction policies) to
stderr. Exit: 0 done; 2 usage; 1 an unknown or peerless benchmark, torch or CUDA
missing."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peers as tp  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("benchmark")
    p.add_argument("shape", help="MxN (mlp_forward: TxDxH)")
    p.add_argument("--backend", default="torch_compile", choices=["torch_eager", "torch_compile"])
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--kbench", default=os.path.join("build", "kbench"), metavar="PATH",
                   help="kbench binary whose --describe names the benchmarks (default "
                        "build/kbench), as for torch_peers.py")
    a = p.parse_args(argv)
    # torch_peers.py's own check: a benchmark kbench has and this script can run
    # (SystemExit with the reason otherwise).
    tp.Kbench(a.kbench).require_peer(a.benchmark)
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
    dt = tp.torch_dtype(torch, a.dtype)
    d = tp.make_inputs(torch, a.benchmark, M, N, dt, "cuda", 1234, K)
    fn, config = tp.build(torch, a.backend, a.benchmark, d)
    for _ in range(a.warmup):
        fn()
    timer = tp.Timer(torch, "cuda", 0, 1, 1)
    # torch_peers.py's L2 flush; twice, as its buffer was just written (the
    # first pass writes those lines back, the second leaves the L2 clean)
    timer.flush_l2()
    timer.flush_l2()
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
