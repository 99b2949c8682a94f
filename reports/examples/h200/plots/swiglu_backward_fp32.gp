# Written by kbench-report. Redraw: cd to this folder, gnuplot swiglu_backward_fp32.gp
set terminal pngcairo noenhanced size 1280,720 font 'sans,11'
set output 'swiglu_backward_fp32.png'
set title 'swiglu_backward fp32 on NVIDIA H200: memory bandwidth by row length'
set xlabel 'N (log2 scale).  Lines: fixed-M sweeps.  Open circles: other shapes, labelled MxN.'
set ylabel 'GB/s'
set logscale x 2
set xrange [2048/1.2:16384*1.2]
set yrange [0:4900]
set xtics nomirror ('2K' 2048, '4K' 4096, '8K' 8192, '16K' 16384)
set ytics nomirror
set grid xtics ytics lc rgb '#dddddd'
set key below horizontal
plot \
  'swiglu_backward_fp32.dat' index 0 using 1:4 with points pt 6 ps 1.5 lw 2 lc rgb '#1f77b4' title 'eager', \
  'swiglu_backward_fp32.dat' index 0 using 1:5 with points pt 6 ps 1.5 lw 2 lc rgb '#9467bd' title 'fused', \
  'swiglu_backward_fp32.dat' index 0 using 1:6 with points pt 6 ps 1.5 lw 2 lc rgb '#2ca02c' title 'tuned', \
  'swiglu_backward_fp32.dat' index 0 using 1:3:2 with labels offset 0,1 font ',8' notitle, \
  4225.7 with lines dt 3 lw 2 lc rgb '#000000' title 'SOL (measured device copy) 4226 GB/s'
set terminal svg noenhanced size 1280,720 dynamic font 'sans,11'
set output 'swiglu_backward_fp32.svg'
replot
unset output
