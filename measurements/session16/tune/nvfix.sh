# db=2 on aligned N whose packs per thread come to 3, 5 or 6 (review finding: NV must round up to 4 or
# 8, the compiled db=2 values, not fail): forced configurations, every input kind, and the cache path
# (the config column must say "(cache)").
IN=randn,shifted,wide,masked,constant,small
for op in rmsnorm_backward layernorm_backward; do
  $K $op --backend tuned --tuned-config c8:threads=128,rows=1,cluster=8,occ=32,acc=0,reload=0,hint=0,db=2 --dtype bf16,fp16 --inputs $IN --shape 200x24576 --shape 100x20480 --shape 33x40960 --no-timing --csv $O/nv-c8-$op.csv; echo "c8 $op exit $?"
  $K $op --backend tuned --tuned-config c16:threads=512,rows=1,cluster=16,occ=32,acc=0,reload=0,hint=1,db=2 --dtype bf16 --inputs $IN --shape 64x196608 --shape 17x163840 --no-timing --csv $O/nv-c16-$op.csv; echo "c16 $op exit $?"
  $K $op --backend tuned --shape 200x24576 --shape 300x49152 --shape 300x98304 --shape 64x196608 --no-timing --csv $O/nv-cache-$op.csv; echo "cache $op exit $?"
done
compute-sanitizer --tool memcheck --error-exitcode 9 $K rmsnorm_backward --backend tuned --tuned-config c8:threads=128,rows=1,cluster=8,occ=32,acc=0,reload=0,hint=0,db=2 --shape 5x24576 --shape 3x40960 --no-timing > $O/nv-memcheck.log 2>&1; echo "memcheck exit $?"
