# The four rmsnorm_backward bf16 buckets given double-buffered entries after run 1b: the new cache entry
# (series "tuned") beside the old one (series "old"), one kbench call per shape ($R: round).
$K rmsnorm_backward --backend tuned --shape 16384x131072 --tuned-config old:threads=128,rows=1,cluster=16,occ=32,acc=1,reload=0,hint=0,db=0 --budget-ms 1000 --csv $O/c$R-131072.csv
$K rmsnorm_backward --backend tuned --shape 32768x65536 --tuned-config old:threads=256,rows=1,cluster=8,occ=16,acc=0,reload=0,hint=0,db=0 --budget-ms 1000 --csv $O/c$R-65536.csv
$K rmsnorm_backward --backend tuned --shape 32768x1024 --tuned-config old:threads=32,rows=16,cluster=1,occ=32,acc=1,reload=0,hint=1,db=0 --budget-ms 1000 --csv $O/c$R-1024.csv
$K rmsnorm_backward --backend tuned --shape 32768x2048 --tuned-config old:threads=128,rows=1,cluster=1,occ=32,acc=1,reload=0,hint=1,db=0 --budget-ms 1000 --csv $O/c$R-2048.csv
