# Written by kbench-report. Redraw: cd to this folder, gnuplot rmsnorm_backward_fp32.gp
set terminal pngcairo noenhanced size 1280,720 font 'sans,11'
set output 'rmsnorm_backward_fp32.png'
set title 'rmsnorm_backward fp32 on NVIDIA H200: memory bandwidth by shape'
set xlabel 'shape (M x N)'
set ylabel 'GB/s'
set xrange [-0.5:1.5]
set yrange [0:4800]
set xtics rotate by 45 right nomirror ('32768x1024' 0, '4096x50257' 1)
set ytics nomirror
set grid ytics lc rgb '#dddddd'
set key outside right top
set bmargin 7
plot \
  'rmsnorm_backward_fp32.dat' using 1:3 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#1f77b4' title 'eager', \
  'rmsnorm_backward_fp32.dat' using 1:4 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#9467bd' title 'fused', \
  'rmsnorm_backward_fp32.dat' using 1:5 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#2ca02c' title 'tuned', \
  'rmsnorm_backward_fp32.dat' using 1:6 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#8c564b' title 'cudnn', \
  4199.3 with lines dt 3 lw 2 lc rgb '#000000' title 'SOL 4199 GB/s'
set terminal svg noenhanced size 1280,720 dynamic font 'sans,11'
set output 'rmsnorm_backward_fp32.svg'
replot
unset output
