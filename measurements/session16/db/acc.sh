# Accuracy of the double-buffered norm backward, forced configurations, every input kind (no timing).
A=threads=512,rows=1,cluster=1,occ=1,acc=1,reload=0,hint=1,db=1
B=threads=64,rows=8,cluster=1,occ=32,acc=0,reload=0,hint=0,db=1
C=threads=1024,rows=1,cluster=4,occ=32,acc=1,reload=0,hint=1,db=1
D=threads=512,rows=1,cluster=16,occ=32,acc=0,reload=0,hint=0,db=1
IN=randn,shifted,wide,masked,constant,small
for op in rmsnorm_backward layernorm_backward; do
  $K $op --backend tuned --tuned-config A:$A --dtype bf16,fp16,fp32 --inputs $IN --shape 1x4096 --shape 3x4096 --shape 300x4096 --shape 4097x4096 --no-timing --csv $O/acc-A-$op.csv; echo "A $op exit $?"
  $K $op --backend tuned --tuned-config B:$B --dtype bf16,fp16 --inputs $IN --shape 7x1024 --shape 1000x1024 --shape 32768x1024 --no-timing --csv $O/acc-B-$op.csv; echo "B $op exit $?"
  $K $op --backend tuned --tuned-config C:$C --dtype bf16,fp16 --inputs $IN --shape 1x32768 --shape 5x32768 --shape 1000x32768 --no-timing --csv $O/acc-C-$op.csv; echo "C $op exit $?"
  $K $op --backend tuned --tuned-config D:$D --dtype bf16 --inputs $IN --shape 3x131072 --shape 50x131072 --no-timing --csv $O/acc-D-$op.csv; echo "D $op exit $?"
done
