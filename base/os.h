/* base/os.h - the platform layer (STYLE.md section 5). base/os_linux.c implements it with the
 * futex syscall, base/os_posix.c with a mutex and condition variable; CMake picks one. No other
 * file tests the platform. */
#ifndef PXI_OS_H
#define PXI_OS_H

#include <stdatomic.h>
#include <stdint.h>

/* Thread-locals read on hot paths (an engine op, a kernel launch, a kernel's piece) use the
 * initial-exec TLS model: in a shared library the default model calls __tls_get_addr on every
 * access (about 11 instructions and a call; ~6 calls per engine op were 2-3 % of an empty op's
 * time), where initial-exec is one %fs-relative load. The library's thread-locals of this kind
 * total about 300 bytes, well inside the static TLS surplus glibc keeps for libraries that are
 * dlopen'ed (libgomp does the same). */
#if defined(__GNUC__)
#define PXI_TLS_INITIAL_EXEC _Thread_local __attribute__((tls_model("initial-exec")))
#else
#define PXI_TLS_INITIAL_EXEC _Thread_local
#endif

/* Sleep while *addr == expected (re-checked atomically by the kernel, or under the fallback's
 * lock). May return spuriously: callers re-check their condition in a loop. The futex only
 * sleeps; data crosses threads through the caller's release stores and acquire loads. */
void pxi_os_futex_wait(atomic_uint *addr, unsigned expected);
/* Same with a timeout in microseconds (returns after at most about timeout_us). */
void pxi_os_futex_wait_timeout(atomic_uint *addr, unsigned expected, int64_t timeout_us);
/* Wake up to n sleepers of addr (n <= 0: all). */
void pxi_os_futex_wake(atomic_uint *addr, int n);

/* One spin-loop pause (x86 PAUSE, arm64 YIELD). */
static inline void pxi_os_cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Give the processor to another runnable thread (sched_yield); best effort. */
void pxi_os_yield(void);

/* Monotonic clock in nanoseconds. */
int64_t pxi_os_now_ns(void);
/* CPU time consumed by the whole process, in nanoseconds (for idle-cost checks). */
int64_t pxi_os_process_cpu_ns(void);
/* Name the calling thread (truncated to the OS limit); best effort. */
void pxi_os_thread_set_name(const char *name);
/* Numeric id of the calling thread (for traces). */
uint64_t pxi_os_thread_id(void);
/* Let the calling thread's wake-ups never preempt a running thread, keeping its fair share of
 * the processor otherwise (Linux SCHED_BATCH, nice unchanged: the scheduler skips wake-up
 * preemption for it and runs it when the running thread blocks, or at the running thread's
 * next slice end). For helper threads that share one processor with the thread that woke
 * them. Returns 0, or an errno value (ENOSYS where the platform has no such policy). */
int pxi_os_thread_no_wakeup_preemption(void);
/* CPU affinity of runtime-owned helper threads (engine workers, the MPI progress thread).
 * px_initialize captures the calling thread's affinity before any space binds it (the
 * process's own placement: taskset, cgroups, mpirun); a helper thread calls
 * pxi_os_affinity_apply_captured() first thing so it does not inherit whatever binding its
 * creator has by then (the Threads space binds the initializing thread to rank 0's core). Both are
 * no-ops where the platform has no affinity. */
void pxi_os_affinity_capture(void);
void pxi_os_affinity_apply_captured(void);

/* The processor the calling thread runs on right now (sched_getcpu: a vDSO read, no system
 * call on Linux), or -1 where the platform cannot say. It may change at the next instruction
 * unless the thread is bound; the Threads space uses it only as a cheap first test of where a
 * launching thread is (spaces/threads/pool.c). */
int pxi_os_current_cpu(void);
/* Where the calling thread stands towards the processors @cpus[0 .. n-1] (OS indices; entries
 * < 0 ignored; duplicates allowed):
 *   PXI_OS_WITHIN  its affinity mask lies within them: it cannot run anywhere else;
 *   PXI_OS_NEAR    it runs on one of them now, but its mask allows others;
 *   PXI_OS_AWAY    it runs on another processor now (settled by pxi_os_current_cpu alone);
 *   -1             the platform cannot say (no affinity).
 * The mask is read with a system call (0.65-0.75 us on the 2-core CI VM) and kept per thread:
 * read again when the copy is over 10 ms old or the thread runs on a processor outside it, so
 * a re-bound thread is seen at once when the re-binding moved it, else within 10 ms.
 * Thread-safe (the copy is thread-local). */
enum { PXI_OS_AWAY = 0, PXI_OS_NEAR = 1, PXI_OS_WITHIN = 2 };
int pxi_os_placement(const int *cpus, int n);

/* Number of processors this process may run on: its affinity mask at px_initialize (or now,
 * before it), else the online processors. A rank that mpirun binds to one core counts one. */
int pxi_os_num_cpus(void);

#endif
