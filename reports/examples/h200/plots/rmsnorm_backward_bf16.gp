# Written by kbench-report. Redraw: cd to this folder, gnuplot rmsnorm_backward_bf16.gp
set terminal pngcairo noenhanced size 1280,720 font 'sans,11'
set output 'rmsnorm_backward_bf16.png'
set title 'rmsnorm_backward bf16 on NVIDIA H200: memory bandwidth by shape'
set xlabel 'shape (M x N)'
set ylabel 'GB/s'
set xrange [-0.5:20.5]
set yrange [0:4800]
set xtics rotate by 45 right nomirror ('32768x256' 0, '32768x512' 1, '32768x1024' 2, '32768x2048' 3, '32768x4096' 4, '32768x8192' 5, '32768x16384' 6, '32768x32768' 7, '32768x65536' 8, '16384x131072' 9, '8192x262144' 10, '576000x384' 11, '576000x512' 12, '1152000x384' 13, '1152000x512' 14, '4096x50257' 15, '2048x128256' 16, '1024x151936' 17, '32768x4095' 18, '4096x1' 19, '1x32768' 20)
set ytics nomirror
set grid ytics lc rgb '#dddddd'
set key outside right top
set bmargin 7
plot \
  'rmsnorm_backward_bf16.dat' using 1:3 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#1f77b4' title 'eager', \
  'rmsnorm_backward_bf16.dat' using 1:4 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#9467bd' title 'fused', \
  'rmsnorm_backward_bf16.dat' using 1:5 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#2ca02c' title 'tuned', \
  'rmsnorm_backward_bf16.dat' using 1:6 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#8c564b' title 'cudnn', \
  'rmsnorm_backward_bf16.dat' using 1:7 with linespoints lw 2 pt 7 ps 1 dt 2 lc rgb '#6baed6' title 'torch_eager', \
  'rmsnorm_backward_bf16.dat' using 1:8 with linespoints lw 2 pt 7 ps 1 dt 2 lc rgb '#ff7f0e' title 'torch_compile', \
  'rmsnorm_backward_bf16.dat' using 1:9 with linespoints lw 2 pt 7 ps 1 dt 2 lc rgb '#d62728' title 'liger', \
  4199.3 with lines dt 3 lw 2 lc rgb '#000000' title 'SOL 4199 GB/s'
set terminal svg noenhanced size 1280,720 dynamic font 'sans,11'
set output 'rmsnorm_backward_bf16.svg'
replot
unset output
