"""Recompile Inductor's RMSNorm forward kernels (sources from TORCH_LOGS=output_code,
dev/output_code.txt) for sm_90 without a GPU, with the configs Inductor's autotuner picked
on the H200 (triton_configs.txt), and dump SASS.  venv/bin/python compile_triton.py"""
import re, subprocess, sys, importlib.util, os
import triton
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget
CUOBJ = "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump"
src = open("triton_sources.py").read().split("----\n")
cfg = {4096: dict(XBLOCK=2, R0_BLOCK=2048, num_warps=16), 32768: dict(XBLOCK=1, R0_BLOCK=16384, num_warps=32)}
for body in src:
    if "def triton_red" not in body: continue
    N = int(re.search(r"r0_numel = (\d+)", body).group(1))
    fn_src = ("import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n"
              "@triton.jit\n" + body)
    path = f"cpu_tri_{N}_src.py"; open(path, "w").write(fn_src)
    spec = importlib.util.spec_from_file_location(f"k{N}", path); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    fn = m.triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0
    c = cfg[N]
    sig = {"in_ptr0": "*bf16", "in_ptr1": "*fp32", "out_ptr1": "*bf16", "xnumel": "i32", "r0_numel": "i32",
           "XBLOCK": "constexpr", "R0_BLOCK": "constexpr"}
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]], (4,): [["tt.divisibility", 16]]}
    k = triton.compile(ASTSource(fn, sig, {"XBLOCK": c["XBLOCK"], "R0_BLOCK": c["R0_BLOCK"]}, attrs),
                       target=GPUTarget("cuda", 90, 32), options={"num_warps": c["num_warps"], "num_stages": 1})
    open(f"cpu_tri_{N}.cubin", "wb").write(k.asm["cubin"])
    open(f"cpu_tri_{N}.sass", "w").write(subprocess.run([CUOBJ, "-sass", f"cpu_tri_{N}.cubin"], capture_output=True, text=True).stdout)
    print(N, "shared", k.metadata.shared)
