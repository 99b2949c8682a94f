# Cross-entropy forward with x[target] picked from the streamed row (session 17): accuracy on every
# input kind and sweep in three dtypes, forced cluster configurations (target in another CTA's chunk,
# in an edge, tiny and odd M), memcheck; then timing: the tuned CE forward/backward and softmax forward
# (which shares kb_max_sumexp) default sweeps against the committed baseline, and launch variants on
# the short rows, each beside the cache entry in one kbench call.
IN=randn,shifted,wide,masked,constant,small
$K cross_entropy_forward cross_entropy_backward --backend tuned --inputs $IN --sweep all --no-timing --csv $O/acc-kinds.csv > $O/acc-kinds.log 2>&1; echo "acc kinds exit $?"
$K cross_entropy_forward cross_entropy_backward --backend tuned --dtype fp16,fp32 --sweep all --no-timing --csv $O/acc-dtypes.csv > $O/acc-dtypes.log 2>&1; echo "acc dtypes exit $?"
for cfg in c2:threads=64,rows=1,cluster=2,unroll=2 c4:threads=32,rows=2,cluster=4,unroll=1 c8:threads=256,rows=1,cluster=8,unroll=8 c16:threads=128,rows=1,cluster=16,unroll=4 r32:threads=4,rows=32,cluster=1,unroll=8 u1:threads=8,rows=8,cluster=1,unroll=1; do
  $K cross_entropy_forward --backend tuned --tuned-config $cfg --dtype bf16,fp16,fp32 --inputs $IN --shape 1x32768 --shape 3x4095 --shape 7x50257 --shape 5x1000 --shape 17x129 --shape 2x8 --shape 33x2053 --no-timing --csv $O/acc-${cfg%%:*}.csv > $O/acc-${cfg%%:*}.log 2>&1; echo "acc $cfg exit $?"
done
compute-sanitizer --tool memcheck --error-exitcode 9 $K cross_entropy_forward --backend tuned --tuned-config c4:threads=32,rows=2,cluster=4,unroll=1 --dtype bf16,fp32 --shape 3x4095 --shape 5x1000 --shape 2x8 --no-timing > $O/memcheck-c4.log 2>&1; echo "memcheck c4 exit $?"
compute-sanitizer --tool memcheck --error-exitcode 9 $K cross_entropy_forward cross_entropy_backward --backend tuned --shape 64x4095 --shape 9x50257 --shape 128x1024 --no-timing > $O/memcheck-cache.log 2>&1; echo "memcheck cache exit $?"
for r in 1 2; do
  $K cross_entropy_forward cross_entropy_backward softmax_forward --backend tuned --perf-tolerance 0.05 --csv $O/sweep$r.csv > $O/sweep$r.log 2>&1; echo "sweep $r exit $?"
done
V() { local s=$1; shift; local a=(); for c in "$@"; do a+=(--tuned-config $c); done; $K cross_entropy_forward --backend tuned --shape $s "${a[@]}" --csv $O/v-$s.csv > $O/v-$s.log 2>&1; echo "variants $s exit $?"; }
for r in 1 2; do
V 32768x256 a:threads=8,rows=16,cluster=1,unroll=8 b:threads=16,rows=8,cluster=1,unroll=2 c:threads=8,rows=32,cluster=1,unroll=4 d:threads=4,rows=32,cluster=1,unroll=8 e:threads=16,rows=16,cluster=1,unroll=2
V 32768x512 a:threads=8,rows=16,cluster=1,unroll=4 b:threads=16,rows=8,cluster=1,unroll=4 c:threads=8,rows=32,cluster=1,unroll=8 d:threads=16,rows=4,cluster=1,unroll=4 e:threads=32,rows=4,cluster=1,unroll=2
V 32768x1024 a:threads=16,rows=4,cluster=1,unroll=8 b:threads=16,rows=8,cluster=1,unroll=4 c:threads=32,rows=4,cluster=1,unroll=4 d:threads=8,rows=8,cluster=1,unroll=8 e:threads=16,rows=2,cluster=1,unroll=4 f:threads=32,rows=2,cluster=1,unroll=2 g:threads=16,rows=16,cluster=1,unroll=8
V 32768x2048 a:threads=32,rows=4,cluster=1,unroll=8 b:threads=32,rows=2,cluster=1,unroll=4 c:threads=64,rows=2,cluster=1,unroll=4 d:threads=16,rows=8,cluster=1,unroll=8 e:threads=32,rows=8,cluster=1,unroll=4 f:threads=64,rows=1,cluster=1,unroll=2
mkdir -p $O/v$r; mv $O/v-*.csv $O/v-*.log $O/v$r/
done
