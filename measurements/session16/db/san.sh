# compute-sanitizer on small shapes of each forced double-buffered configuration (acc.sh's A-D).
A=threads=512,rows=1,cluster=1,occ=1,acc=1,reload=0,hint=1,db=1
B=threads=64,rows=8,cluster=1,occ=32,acc=0,reload=0,hint=0,db=1
C=threads=1024,rows=1,cluster=4,occ=32,acc=1,reload=0,hint=1,db=1
D=threads=512,rows=1,cluster=16,occ=32,acc=0,reload=0,hint=0,db=1
for tool in memcheck racecheck; do for op in rmsnorm_backward layernorm_backward; do
  compute-sanitizer --tool $tool --error-exitcode 9 $K $op --backend tuned --tuned-config B:$B --shape 300x1024 --no-timing > /dev/null 2>$O/san-$tool-$op-1.err; echo "$tool $op B exit $?"; tail -2 $O/san-$tool-$op-1.err
  compute-sanitizer --tool $tool --error-exitcode 9 $K $op --backend tuned --tuned-config A:$A --shape 3x4096 --shape 300x4096 --no-timing > /dev/null 2>$O/san-$tool-$op-2.err; echo "$tool $op A exit $?"; tail -2 $O/san-$tool-$op-2.err
  compute-sanitizer --tool $tool --error-exitcode 9 $K $op --backend tuned --tuned-config C:$C --shape 5x32768 --no-timing > /dev/null 2>$O/san-$tool-$op-3.err; echo "$tool $op C exit $?"; tail -2 $O/san-$tool-$op-3.err
  compute-sanitizer --tool $tool --error-exitcode 9 $K $op --backend tuned --tuned-config D:$D --shape 3x131072 --no-timing > /dev/null 2>$O/san-$tool-$op-4.err; echo "$tool $op D exit $?"; tail -2 $O/san-$tool-$op-4.err
done; done
