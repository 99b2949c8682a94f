# The norm forward's re-reading loop with U = reload slots in flight per thread (1, 2, 4; U > 1
# with evict-last first passes and an evict-first last pass): accuracy on every registered shape
# and input kind with the cache as committed; forced U = 1, 2, 4 layouts on odd, tiny-M, aligned
# and long shapes in three dtypes and every input kind; memcheck; then the U variants timed beside
# each odd-N cache entry at the registered odd shapes, two rounds.
IN=randn,shifted,wide,masked,constant,small
B="layernorm_forward rmsnorm_forward"
$K $B --backend tuned --inputs $IN --sweep all --no-timing --csv $O/acc-kinds.csv > $O/acc-kinds.log 2>&1; echo "acc kinds exit $?"
$K $B --backend tuned --dtype fp16,fp32 --sweep all --no-timing --csv $O/acc-dtypes.csv > $O/acc-dtypes.log 2>&1; echo "acc dtypes exit $?"
for u in 1 2 4; do for t in 32 128 1024; do
  cfg=u${u}t$t:threads=$t,rows=1,cluster=1,occ=32,db=0,reload=$u,hint=0
  $K $B --backend tuned --tuned-config $cfg --dtype bf16,fp16,fp32 --inputs $IN --shape 1x37 --shape 3x37 --shape 7x1000 --shape 33x4095 --shape 5x50257 --shape 3x151936 --shape 9x4096 --shape 2x1 --no-timing --csv $O/force-${cfg%%:*}.csv > $O/force-${cfg%%:*}.log 2>&1; echo "force $cfg exit $?"
done; done
compute-sanitizer --tool memcheck --error-exitcode 9 $K $B --backend tuned --tuned-config a:threads=128,rows=1,cluster=1,occ=32,db=0,reload=4,hint=0 --tuned-config b:threads=64,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0 --tuned-config c:threads=32,rows=1,cluster=1,occ=32,db=0,reload=4,hint=1 --dtype bf16,fp32 --shape 3x37 --shape 7x1000 --shape 33x4095 --shape 4x4096 --no-timing > $O/memcheck.log 2>&1; echo "memcheck exit $?"
V=""
for u in 2 4; do for t in 128 256 512 1024; do V="$V --tuned-config u${u}t$t:threads=$t,rows=1,cluster=1,occ=32,db=0,reload=$u,hint=0"; done; done
for r in 1 2; do
  $K $B --backend tuned $V --budget-ms 300 --dtype bf16 --shape 4096x50257 --shape 32768x4095 --shape 1024x151936 --csv $O/var$r.csv > $O/var$r.log 2>&1; echo "variants $r exit $?"
done
