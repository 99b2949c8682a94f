# The norm forward's re-reading loop, forced layouts (U = reload 1, 2, 4 at 32, 128 and 1024
# threads; three dtypes, every input kind; odd, tiny-M, aligned and long shapes): accuracy after
# the fp32 RMSNorm sum of squares moved to per-slot fp32 + per-thread double (session 18's 9 FAILs
# were RMSNorm fp32 `constant` at 5x50257 and 3x151936 with 32-128 threads), and after the cache
# treatment enum moved to kb_cuda.cuh; memcheck on small shapes.
IN=randn,shifted,wide,masked,constant,small
B="layernorm_forward rmsnorm_forward"
for u in 1 2 4; do for t in 32 128 1024; do
  cfg=u${u}t$t:threads=$t,rows=1,cluster=1,occ=32,db=0,reload=$u,hint=0
  $K $B --backend tuned --tuned-config $cfg --dtype bf16,fp16,fp32 --inputs $IN --shape 1x37 --shape 3x37 --shape 7x1000 --shape 33x4095 --shape 5x50257 --shape 3x151936 --shape 9x4096 --shape 2x1 --no-timing --csv $O/force-${cfg%%:*}.csv > $O/force-${cfg%%:*}.log 2>&1; echo "force $cfg exit $?"
done; done
compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned --tuned-config a:threads=128,rows=1,cluster=1,occ=32,db=0,reload=4,hint=0 --tuned-config b:threads=64,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0 --tuned-config c:threads=32,rows=1,cluster=1,occ=32,db=0,reload=1,hint=1 --dtype bf16,fp32 --inputs randn,constant --shape 3x37 --shape 7x1000 --shape 33x4095 --shape 4x4096 --shape 2x50257 --no-timing > $O/memcheck-loop.log 2>&1; echo "memcheck exit $?"
