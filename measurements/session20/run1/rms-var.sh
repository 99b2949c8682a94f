# RMSNorm forward, bf16, the shapes where tuned trails torch.compile (session 19's peer table):
# re-reading-loop layouts beside the cache entry. LayerNorm's N<=4096 entry is the loop with 4
# slots a thread and one row a CTA (threads=128, reload=4, occ=0) at 4194 GB/s, above RMSNorm's
# register-kernel entry there (4142): coordinate descent cannot reach that layout from RMSNorm's
# entry (rows, db, reload and hint all change). Per shape: U = 4, 2, 1 with the row in one pass
# (threads = packs / U, at most 1024), one row a CTA, hint 0 / 1; U = 4 in two passes; U = 4
# persistent (occ=32). Two rounds; one kbench call per shape (the configurations name threads).
for r in 1 2; do
  for s in 32768x2048 32768x4096 32768x8192 32768x16384 32768x32768; do
    N=${s#*x}; P=$((N / 8)); V=""
    for u in 4 2 1; do
      t=$((P / u)); [ $t -gt 1024 ] && t=1024
      for h in 0 1; do V="$V --tuned-config u${u}t${t}h$h:threads=$t,rows=1,cluster=1,occ=0,db=0,reload=$u,hint=$h"; done
    done
    t=$((P / 8)); [ $t -gt 1024 ] && t=1024
    V="$V --tuned-config u4t${t}x2:threads=$t,rows=1,cluster=1,occ=0,db=0,reload=4,hint=0"
    t=$((P / 4)); [ $t -gt 1024 ] && t=1024
    V="$V --tuned-config u4t${t}p:threads=$t,rows=1,cluster=1,occ=32,db=0,reload=4,hint=0"
    $K rmsnorm_forward --backend tuned $V --budget-ms 150 --dtype bf16 --shape $s --csv $O/var$r-$s.csv > $O/var$r-$s.log 2>&1; echo "variants $r $s exit $?"
  done
done
