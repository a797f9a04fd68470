# bench/plot_threads.gp - plots bench/threads_data.txt (written by bench/run_threads.sh).
# Lines: DATA <threads> <name> <parex> <omp> <ratio>; latencies in us, bandwidths in GB/s.
set terminal pngcairo size 960,640 noenhanced font ",11"
set key below maxrows 3 box
set grid
set xlabel "threads (2-core machine: 4 threads oversubscribe)"
set xtics (1, 2, 4)
set logscale x 2
f = "bench/threads_data.txt"
sel(n) = sprintf("< grep ' %s ' %s", n, f)

set output "bench/threads_latency.png"
set title "Launch latency: parex Threads vs OpenMP (libgomp), median of alternating rounds"
set ylabel "microseconds per launch"
set logscale y
plot sel("empty_for_2") using 2:4 with linespoints lw 2 pt 7 title "parex parallel_for, 2 indices", \
     sel("empty_for_2") using 2:5 with linespoints lw 2 pt 6 dt 2 title "OpenMP parallel for, 2 indices", \
     sel("reduce_2")    using 2:4 with linespoints lw 2 pt 5 title "parex parallel_reduce, 2 doubles", \
     sel("reduce_2")    using 2:5 with linespoints lw 2 pt 4 dt 2 title "OpenMP reduction, 2 doubles"

set output "bench/threads_bandwidth.png"
set title "Bandwidth (2^24 elements): parex Threads vs OpenMP (libgomp)"
set ylabel "GB/s"
unset logscale y
set yrange [0:*]
plot sel("sum_2^24")   using 2:4 with linespoints lw 2 pt 7 title "parex sum", \
     sel("sum_2^24")   using 2:5 with linespoints lw 2 pt 6 dt 2 title "OpenMP sum", \
     sel("triad_2^24") using 2:4 with linespoints lw 2 pt 5 title "parex triad", \
     sel("triad_2^24") using 2:5 with linespoints lw 2 pt 4 dt 2 title "OpenMP triad", \
     sel("scan_2^24")  using 2:4 with linespoints lw 2 pt 9 title "parex exclusive scan", \
     sel("scan_2^24")  using 2:5 with linespoints lw 2 pt 8 dt 2 title "OpenMP inscan exclusive scan"
