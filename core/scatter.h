/* core/scatter.h - the executing-rank hook behind px_scatter_add (core/scatter.c).
 *
 * pxi_exec_rank: the calling thread's rank in the host launch it runs. The threads space
 * (spaces/threads/threads.c) stores the rank at the start of each rank's share of a launch
 * (job_main, scan_main); every other thread reads 0, its initial value. Only the owning thread
 * reads or writes it, so plain accesses suffice. px_exec_rank_location() exports its address. */
#ifndef PXI_CORE_SCATTER_H
#define PXI_CORE_SCATTER_H

extern _Thread_local int pxi_exec_rank;

#endif
