# Written by kbench-report. Redraw: cd to this folder, gnuplot cross_entropy_forward_bf16.gp
set terminal pngcairo noenhanced size 1280,720 font 'sans,11'
set output 'cross_entropy_forward_bf16.png'
set title 'cross_entropy_forward bf16 on NVIDIA H200: memory bandwidth by shape'
set xlabel 'shape (M x N)'
set ylabel 'GB/s'
set xrange [-0.5:16.5]
set yrange [0:5000]
set xtics rotate by 45 right nomirror ('32768x256' 0, '32768x512' 1, '32768x1024' 2, '32768x2048' 3, '32768x4096' 4, '32768x8192' 5, '32768x16384' 6, '32768x32768' 7, '32768x65536' 8, '16384x131072' 9, '8192x262144' 10, '4096x50257' 11, '2048x128256' 12, '1024x151936' 13, '32768x4095' 14, '4096x1' 15, '1x32768' 16)
set ytics nomirror
set grid ytics lc rgb '#dddddd'
set key outside right top
set bmargin 7
plot \
  'cross_entropy_forward_bf16.dat' using 1:3 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#1f77b4' title 'eager', \
  'cross_entropy_forward_bf16.dat' using 1:4 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#9467bd' title 'fused', \
  'cross_entropy_forward_bf16.dat' using 1:5 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#2ca02c' title 'tuned', \
  'cross_entropy_forward_bf16.dat' using 1:6 with linespoints lw 2 pt 7 ps 1 dt 2 lc rgb '#6baed6' title 'torch_eager', \
  'cross_entropy_forward_bf16.dat' using 1:7 with linespoints lw 2 pt 7 ps 1 dt 2 lc rgb '#ff7f0e' title 'torch_compile', \
  'cross_entropy_forward_bf16.dat' using 1:8 with linespoints lw 2 pt 7 ps 1 dt 2 lc rgb '#d62728' title 'liger', \
  4199.3 with lines dt 3 lw 2 lc rgb '#000000' title 'SOL 4199 GB/s'
set terminal svg noenhanced size 1280,720 dynamic font 'sans,11'
set output 'cross_entropy_forward_bf16.svg'
replot
unset output
