# bench/plot_mdrange.gp - the 3-D 7-point stencil's GB/s against the grid (issue 13), from
# bench/mdrange_stencil.dat (written by bench/run_mdrange.sh: one line per grid, ordered by
# points; columns dims, points, then medians over rounds of each contender, "?" = not built).
set terminal pngcairo size 960,640 noenhanced font ",11"
set output "bench/mdrange_stencil.png"
set title "3-D 7-point Jacobi sweep, 2 x 8 bytes per interior point: GB/s by grid (median of rounds)"
set key below maxrows 3 box
set grid
set datafile missing "?"
set xlabel "grid (extents slowest first)"
set ylabel "GB/s"
set yrange [0:*]
set offsets 0.3, 0.3, 0, 0
f = "bench/mdrange_stencil.dat"
plot f using 0:3:xticlabels(1) with linespoints lw 2 pt 6 dt 2 title "OpenMP collapse(2)", \
     f using 0:4 with linespoints lw 2 pt 5 title "parex 1-D launch (rows)", \
     f using 0:5 with linespoints lw 2 pt 7 title "parex MDRange, automatic tile", \
     f using 0:6 with linespoints lw 1 pt 7 dt 3 title "parex MDRange, best tile", \
     f using 0:7 with linespoints lw 2 pt 9 title "Kokkos::Threads MDRange, default tile", \
     f using 0:8 with linespoints lw 1 pt 9 dt 3 title "Kokkos::Threads MDRange, best tile", \
     f using 0:9 with linespoints lw 2 pt 11 title "Kokkos::OpenMP MDRange, default tile", \
     f using 0:10 with linespoints lw 1 pt 11 dt 3 title "Kokkos::OpenMP MDRange, best tile"
