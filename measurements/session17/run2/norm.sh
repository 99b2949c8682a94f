# The norm-backward cache entries ci/tune moved in run 1 (db=2 with 8- and 16-CTA clusters at
# 128256-131072 columns, occ/hint/threads elsewhere): accuracy on every registered shape and input
# kind, forced copies of the new configurations on small, odd and tiny-M shapes in three dtypes,
# memcheck and racecheck; then both backward sweeps against the committed baseline.
IN=randn,shifted,wide,masked,constant,small
$K layernorm_backward rmsnorm_backward --backend tuned --inputs $IN --sweep all --no-timing --csv $O/nacc-kinds.csv > $O/nacc-kinds.log 2>&1; echo "acc kinds exit $?"
$K layernorm_backward rmsnorm_backward --backend tuned --dtype fp16,fp32 --sweep all --no-timing --csv $O/nacc-dtypes.csv > $O/nacc-dtypes.log 2>&1; echo "acc dtypes exit $?"
for cfg in a:threads=512,rows=1,cluster=8,occ=16,acc=0,reload=0,hint=0,db=2 b:threads=256,rows=1,cluster=8,occ=16,acc=0,reload=0,hint=1,db=2 c:threads=128,rows=1,cluster=16,occ=32,acc=0,reload=0,hint=1,db=2 d:threads=256,rows=1,cluster=16,occ=12,acc=1,reload=0,hint=0,db=0; do
  $K layernorm_backward rmsnorm_backward --backend tuned --tuned-config $cfg --dtype bf16,fp16,fp32 --inputs $IN --shape 1x32768 --shape 3x131072 --shape 7x65536 --shape 2x128256 --shape 5x151936 --shape 9x100000 --no-timing --csv $O/nacc-${cfg%%:*}.csv > $O/nacc-${cfg%%:*}.log 2>&1; echo "acc $cfg exit $?"
done
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 $K layernorm_backward rmsnorm_backward --backend tuned --tuned-config a:threads=512,rows=1,cluster=8,occ=16,acc=0,reload=0,hint=0,db=2 --tuned-config b:threads=256,rows=1,cluster=8,occ=16,acc=0,reload=0,hint=1,db=2 --shape 3x131072 --shape 2x128256 --no-timing > $O/n$tool.log 2>&1; echo "$tool exit $?"
done
for r in 1; do
  $K layernorm_backward rmsnorm_backward --backend tuned --perf-tolerance 0.05 --csv $O/nsweep$r.csv > $O/nsweep$r.log 2>&1; echo "nsweep $r exit $?"
done
