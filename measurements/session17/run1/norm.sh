# Norm backward launch variants (db=2 and neighbours) on the few-long-row shapes below 80 % of copy
# SOL (2048x128256, 1024x151936) and LayerNorm backward 32768x1024, each beside its cache entry.
V() { local b=$1 s=$2; shift 2; local a=(); for c in "$@"; do a+=(--tuned-config $c); done; $K $b --backend tuned --shape $s "${a[@]}" --csv $O/n-$b-$s-${1%%:*}.csv > $O/n-$b-$s-${1%%:*}.log 2>&1; echo "variants $b $s exit $?"; }
B=rows=1,occ=16,reload=0
for r in 1 2; do
for b in layernorm_backward rmsnorm_backward; do
V $b 2048x128256 a:threads=128,cluster=16,$B,acc=1,hint=0,db=2 b:threads=128,cluster=16,$B,acc=1,hint=1,db=2 c:threads=256,cluster=16,$B,acc=1,hint=1,db=2 d:threads=256,cluster=16,$B,acc=0,hint=1,db=2 e:threads=512,cluster=16,$B,acc=0,hint=1,db=2 f:threads=256,cluster=8,$B,acc=1,hint=1,db=2 g:threads=128,cluster=16,rows=1,occ=32,reload=0,acc=1,hint=1,db=2
V $b 1024x151936 a:threads=256,cluster=16,rows=1,occ=2,reload=0,acc=1,hint=0,db=2 b:threads=256,cluster=16,$B,acc=1,hint=1,db=2 c:threads=512,cluster=16,$B,acc=0,hint=1,db=2 d:threads=512,cluster=16,$B,acc=1,hint=1,db=2 e:threads=256,cluster=16,$B,acc=0,hint=1,db=2 f:threads=512,cluster=8,$B,acc=0,hint=1,db=2
done
V layernorm_backward 32768x1024 a:threads=64,rows=2,occ=16,cluster=1,acc=1,reload=0,hint=1,db=1 b:threads=64,rows=4,occ=16,cluster=1,acc=1,reload=0,hint=1,db=0 c:threads=128,rows=1,occ=16,cluster=1,acc=1,reload=0,hint=1,db=0 d:threads=64,rows=2,occ=32,cluster=1,acc=1,reload=0,hint=1,db=0 e:threads=32,rows=4,occ=16,cluster=1,acc=1,reload=0,hint=1,db=0 f:threads=64,rows=2,occ=16,cluster=1,acc=0,reload=0,hint=1,db=0 g:threads=64,rows=2,occ=16,cluster=1,acc=1,reload=0,hint=0,db=0
# fewer, larger persistent CTAs: fewer dw partials written and re-read by the dw reduction (the
# cache entry's 2112 CTAs write 17 MB of LayerNorm partials at N=1024)
for b in layernorm_backward rmsnorm_backward; do
V $b 32768x1024 h:threads=64,rows=8,occ=4,cluster=1,acc=1,reload=0,hint=1,db=0 i:threads=64,rows=16,occ=2,cluster=1,acc=1,reload=0,hint=1,db=0 j:threads=128,rows=4,occ=4,cluster=1,acc=1,reload=0,hint=1,db=0 k:threads=64,rows=8,occ=3,cluster=1,acc=1,reload=0,hint=1,db=0 l:threads=64,rows=4,occ=8,cluster=1,acc=1,reload=0,hint=1,db=0 m:threads=64,rows=8,occ=4,cluster=1,acc=0,reload=0,hint=1,db=0
done
mkdir -p $O/n$r; mv $O/n-*.csv $O/n-*.log $O/n$r/
done
