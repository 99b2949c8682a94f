# LayerNorm forward, bf16, the long odd-N and 128256/151936-column shapes: re-reading-loop layouts
# (fwd_loop_long, the two-pass loop, runs where a row takes >= 6 steps of U x threads slots) beside
# the cache entries; two rounds, two kbench calls a round (at most 8 named configurations a call).
C1="u1t128:threads=128,rows=1,cluster=1,occ=32,db=0,reload=1,hint=0 u1t256:threads=256,rows=1,cluster=1,occ=32,db=0,reload=1,hint=0 u1t512:threads=512,rows=1,cluster=1,occ=32,db=0,reload=1,hint=0 u1t1024:threads=1024,rows=1,cluster=1,occ=32,db=0,reload=1,hint=0"
C2="u2t256:threads=256,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0 u2t512:threads=512,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0 u2t1024:threads=1024,rows=1,cluster=1,occ=32,db=0,reload=2,hint=0 u4t128:threads=128,rows=1,cluster=1,occ=32,db=0,reload=4,hint=0 u4t256:threads=256,rows=1,cluster=1,occ=32,db=0,reload=4,hint=0 u4t512:threads=512,rows=1,cluster=1,occ=32,db=0,reload=4,hint=0"
S="--shape 4096x50257 --shape 512x50257 --shape 1024x151936 --shape 2048x128256"
for r in 1 2; do
  i=0
  for C in "$C1" "$C2"; do
    i=$((i + 1)); V=""; for x in $C; do V="$V --tuned-config $x"; done
    $K layernorm_forward --backend tuned $V --budget-ms 150 --dtype bf16 $S --csv $O/var$r-$i.csv > $O/var$r-$i.log 2>&1; echo "variants $r.$i exit $?"
  done
done
