# Branch ln-two-pass (LayerNorm's loop with mean and M2 in one pass) against main: $K2 the
# branch's kbench, $K main's. Alternating, two rounds; the cache entries (the default series)
# at every LayerNorm forward shape whose entry runs the loop, plus four forced loop layouts at
# the odd-N and 4K-16K shapes. bf16, and fp32 at the fp32 loop buckets.
V="--tuned-config u1t256:threads=256,rows=1,cluster=1,occ=32,db=0,reload=1,hint=0 --tuned-config u2t512:threads=512,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0 --tuned-config u4t512:threads=512,rows=1,cluster=1,occ=32,db=0,reload=4,hint=0 --tuned-config u4t256:threads=256,rows=1,cluster=1,occ=32,db=0,reload=4,hint=0"
S="--shape 4096x50257 --shape 512x50257 --shape 32768x4095 --shape 1024x151936 --shape 32768x4096 --shape 32768x16384"
for r in 1 2; do for side in old new; do
  b=$K2; [ $side = old ] && b=$K
  $b layernorm_forward --backend tuned $V --dtype bf16 $S --budget-ms 200 --csv $O/ab-$side$r.csv > $O/ab-$side$r.log 2>&1; echo "ab $side round $r exit $?"
  $b layernorm_forward --backend tuned --dtype fp32 --shape 32768x1024 --shape 4096x1024 --shape 4096x50257 --shape 512x50257 --budget-ms 200 --csv $O/ab32-$side$r.csv > $O/ab32-$side$r.log 2>&1; echo "ab32 $side round $r exit $?"
done; done
