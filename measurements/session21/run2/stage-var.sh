# Session 21, run 2 (sourced by run2.sh): the staged loop (reload=8: the row copied into shared
# memory by per-thread cp.async, every pass from there) and run 1's best persistent-grid layouts
# beside the cache entries; two rounds. Long odd rows in three dtypes, mid-length bf16 rows.
cfg() { echo "--tuned-config $1:threads=$2,rows=1,cluster=1,occ=$3,db=0,reload=$4,hint=0"; }
V1="$(cfg s128 128 32 8) $(cfg s256 256 32 8) $(cfg s512 512 32 8) $(cfg s1024 1024 32 8) $(cfg o2u2t512 512 2 2) $(cfg o4u2t256 256 4 2) $(cfg o1u4t1024 1024 1 4)"
V2="$(cfg s64 64 32 8) $(cfg s128 128 32 8) $(cfg s256 256 32 8) $(cfg s512 512 32 8) $(cfg s1024 1024 32 8)"
S1="--shape 4096x50257 --shape 512x50257"
S2="--shape 32768x4095 --shape 32768x4096 --shape 32768x8192 --shape 32768x16384 --shape 32768x32768"
for r in 1 2; do
  timeout 150 $K layernorm_forward rmsnorm_forward --backend tuned $V1 --budget-ms 150 --dtype bf16,fp16,fp32 $S1 --csv $O/var$r-1.csv > $O/var$r-1.log 2>&1; st "stage-var $r.1" $?
  timeout 150 $K layernorm_forward rmsnorm_forward --backend tuned $V2 --budget-ms 150 --dtype bf16 $S2 --csv $O/var$r-2.csv > $O/var$r-2.log 2>&1; st "stage-var $r.2" $?
done
