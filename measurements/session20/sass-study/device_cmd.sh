export TRITON_CACHE_DIR=/tmp/tc TORCHINDUCTOR_CACHE_DIR=/tmp/ic TORCH_LOGS=output_code PYTHONUNBUFFERED=1
cat > /tmp/t.py <<'P'
import torch,gc,os
from triton.testing import do_bench
def f(x,w):
    xf=x.float(); return (xf*torch.rsqrt(xf.square().mean(-1,keepdim=True)+1e-6)*w).to(x.dtype)
for N in (4096,32768):
    torch._dynamo.reset(); M=32768
    x=torch.randn(M,N,device='cuda').to(torch.bfloat16); w=torch.randn(N,device='cuda')
    torch._dynamo.mark_dynamic(x,0)
    g=torch.compile(f,mode='max-autotune-no-cudagraphs'); g(x,w); torch.cuda.synchronize()
    t=do_bench(lambda:g(x,w),warmup=50,rep=300)
    print('RESULT',N,'ms %.4f GB/s %.0f'%(t,2*M*N*2/t/1e6))
    for o in gc.get_objects():
        try:
            if type(o).__name__=='CachingAutotuner' and 'rsqrt' in o.fn.__name__:
                for L in o.launchers: print('RESULT',N,o.fn.__name__,L.config,getattr(L,'n_regs',None),getattr(L,'n_spills',None),getattr(L,'cache_hash',None))
        except Exception as e: print('ERR',e)
P
python3 /tmp/t.py > $OUT/log.txt 2>&1; echo rc=$?; grep RESULT $OUT/log.txt
cd /tmp && tar czf $OUT/tc.tgz tc ic 2>/dev/null; ls -la $OUT
