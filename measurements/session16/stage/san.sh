# compute-sanitizer (memcheck, racecheck, synccheck) on small shapes of acc.sh's db=2 configurations.
A=threads=512,rows=1,cluster=1,occ=1,acc=1,reload=0,hint=1,db=2
B=threads=64,rows=8,cluster=1,occ=32,acc=0,reload=0,hint=0,db=2
C=threads=1024,rows=1,cluster=4,occ=32,acc=1,reload=0,hint=1,db=2
D=threads=512,rows=1,cluster=16,occ=32,acc=0,reload=0,hint=0,db=2
E=threads=128,rows=2,cluster=1,occ=32,acc=1,reload=0,hint=1,db=2
for tool in memcheck racecheck synccheck; do for op in rmsnorm_backward layernorm_backward; do
  n=0; for cs in "B:$B --shape 300x1024" "A:$A --shape 3x4096 --shape 300x4096" "C:$C --shape 5x32768" "D:$D --shape 3x131072" "E:$E --shape 7x8192 --shape 300x8192"; do
    n=$((n+1)); compute-sanitizer --tool $tool --error-exitcode 9 $K $op --backend tuned --tuned-config $cs --no-timing > /dev/null 2>$O/san-$tool-$op-$n.err; echo "$tool $op ${cs%%:*} exit $? $(grep -c 'ERROR SUMMARY: 0' $O/san-$tool-$op-$n.err)"
  done
done; done
