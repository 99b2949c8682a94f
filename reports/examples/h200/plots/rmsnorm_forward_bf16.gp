# Written by kbench-report. Redraw: cd to this folder, gnuplot rmsnorm_forward_bf16.gp
set terminal pngcairo noenhanced size 1280,720 font 'sans,11'
set output 'rmsnorm_forward_bf16.png'
set title 'rmsnorm_forward bf16 on NVIDIA H200: memory bandwidth by row length'
set xlabel 'N (log2 scale).  Lines: fixed-M sweeps.  Open circles: other shapes, labelled MxN.'
set ylabel 'GB/s'
set logscale x 2
set xrange [1/1.2:262144*1.2]
set yrange [0:4900]
set xtics nomirror ('1' 1, '' 2, '4' 4, '' 8, '16' 16, '' 32, '64' 64, '' 128, '256' 256, '' 512, '1K' 1024, '' 2048, '4K' 4096, '' 8192, '16K' 16384, '' 32768, '64K' 65536, '' 131072, '256K' 262144)
set ytics nomirror
set grid xtics ytics lc rgb '#dddddd'
set key below horizontal
plot \
  'rmsnorm_forward_bf16.dat' index 0 using 1:4 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#1f77b4' title 'eager', \
  'rmsnorm_forward_bf16.dat' index 1 using 1:4 with points pt 6 ps 1.5 lw 2 lc rgb '#1f77b4' notitle, \
  'rmsnorm_forward_bf16.dat' index 0 using 1:5 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#9467bd' title 'fused', \
  'rmsnorm_forward_bf16.dat' index 1 using 1:5 with points pt 6 ps 1.5 lw 2 lc rgb '#9467bd' notitle, \
  'rmsnorm_forward_bf16.dat' index 0 using 1:6 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#2ca02c' title 'tuned', \
  'rmsnorm_forward_bf16.dat' index 1 using 1:6 with points pt 6 ps 1.5 lw 2 lc rgb '#2ca02c' notitle, \
  'rmsnorm_forward_bf16.dat' index 0 using 1:7 with linespoints lw 2 pt 7 ps 1 dt 1 lc rgb '#8c564b' title 'cudnn', \
  'rmsnorm_forward_bf16.dat' index 1 using 1:7 with points pt 6 ps 1.5 lw 2 lc rgb '#8c564b' notitle, \
  'rmsnorm_forward_bf16.dat' index 0 using 1:8 with linespoints lw 2 pt 7 ps 1 dt 2 lc rgb '#d62728' title 'liger', \
  'rmsnorm_forward_bf16.dat' index 1 using 1:8 with points pt 6 ps 1.5 lw 2 lc rgb '#d62728' notitle, \
  'rmsnorm_forward_bf16.dat' index 1 using 1:3:2 with labels offset 0,1 font ',8' notitle, \
  4225.7 with lines dt 3 lw 2 lc rgb '#000000' title 'SOL (measured device copy) 4226 GB/s'
set terminal svg noenhanced size 1280,720 dynamic font 'sans,11'
set output 'rmsnorm_forward_bf16.svg'
replot
unset output
