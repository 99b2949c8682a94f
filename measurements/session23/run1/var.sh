# Session 23, run 1 (sourced by run1.sh): the staged loop split over a cluster (fwd_stage_cl,
# reload=8, cluster 2-8) beside the cache entries, bf16, two rounds: the long aligned rows
# (131072-262144 columns, and 151936 / 128256, whose rows one CTA's shared memory cannot hold),
# 32768x65536, and the odd 50257-column rows the one-CTA staged loop runs now.
cfg() { echo "--tuned-config $1:threads=$2,rows=1,cluster=$3,occ=$4,db=0,reload=8,hint=0"; }
# kbench takes at most 8 named configurations a call: two calls a round.
Va="$(cfg c2t512 512 2 32) $(cfg c2t1024 1024 2 32) $(cfg c4t256 256 4 32) $(cfg c4t512 512 4 32)
   $(cfg c4t1024 1024 4 32)"
Vb="$(cfg c8t128 128 8 32) $(cfg c8t256 256 8 32) $(cfg c8t512 512 8 32) $(cfg c2t512o1 512 2 1)
   $(cfg c8t256o1 256 8 1)"
S="--shape 1024x151936 --shape 2048x128256 --shape 16384x131072 --shape 8192x262144
   --shape 32768x65536 --shape 4096x50257 --shape 512x50257"
for r in 1 2; do
  for h in a b; do
    eval V=\$V$h
    timeout 120 $K layernorm_forward rmsnorm_forward --backend tuned $V --budget-ms 120 --dtype bf16 $S \
      --csv $O/var$r$h.csv > $O/var$r$h.log 2>&1; st "var $r$h" $?
  done
done
