# Register-kernel layouts the tuner's coordinate descent cannot reach from the re-reading loop at
# the long odd-N and 128256/151936-column norm forward shapes (a move from the loop to the register
# kernel changes reload and cluster together): a row split over a 2-16 CTA cluster, 128-1024
# threads, double buffer off/on, hint 0; beside the cache entry (the default series). bf16, two
# rounds; kbench takes at most 8 named configurations a call, so three calls a round.
C=""
for tc in 512:2 1024:2 256:4 512:4 1024:4 128:8 256:8 512:8 1024:8 256:16 512:16; do
  t=${tc%%:*}; c=${tc##*:}
  for db in 0 1; do C="$C t${t}c${c}d$db:threads=$t,rows=1,cluster=$c,occ=32,db=$db,reload=0,hint=0"; done
done
set -- $C
for r in 1 2; do
  i=0; rest=("$@")
  while [ ${#rest[@]} -gt 0 ]; do
    V=""; for x in "${rest[@]:0:8}"; do V="$V --tuned-config $x"; done; rest=("${rest[@]:8}")
    i=$((i + 1))
    $K layernorm_forward rmsnorm_forward --backend tuned $V --budget-ms 150 --dtype bf16 --shape 4096x50257 --shape 1024x151936 --shape 2048x128256 --csv $O/var$r-$i.csv > $O/var$r-$i.log 2>&1; echo "variants $r.$i exit $?"
  done
done
