# Register-kernel layouts the tuner's coordinate descent cannot reach from the re-reading loop at
# the long odd-N and 151936-column norm forward shapes (a move from the loop to the register kernel
# changes reload and cluster together): row split over a 2-16 CTA cluster, 128-1024 threads,
# double buffer on/off, hint 0/2, beside the cache entry (the default series). bf16, two rounds.
V=""
for tc in 512:2 1024:2 256:4 512:4 1024:4 128:8 256:8 512:8 1024:8 256:16 512:16; do
  t=${tc%%:*}; c=${tc##*:}
  for db in 0 1; do for h in 0 2; do
    V="$V --tuned-config t${t}c${c}d${db}h$h:threads=$t,rows=1,cluster=$c,occ=32,db=$db,reload=0,hint=$h"
  done; done
done
for r in 1 2; do
  $K layernorm_forward rmsnorm_forward --backend tuned $V --budget-ms 150 --dtype bf16 --shape 4096x50257 --shape 1024x151936 --shape 2048x128256 --csv $O/var$r.csv > $O/var$r.log 2>&1; echo "variants $r exit $?"
done
