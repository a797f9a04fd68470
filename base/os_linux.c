/* base/os_linux.c - the platform layer on Linux: futex syscall, clocks, thread names and
 * scheduling policy. The only file that defines _GNU_SOURCE. */
#define _GNU_SOURCE
#include "base/os.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(atomic_uint) == sizeof(unsigned), "futex word must be 32 bits");

void pxi_os_futex_wait(atomic_uint *addr, unsigned expected)
{
    /* The kernel compares *addr with expected atomically; EAGAIN/EINTR are spurious returns
     * that the caller's loop absorbs. */
    syscall(SYS_futex, (void *)addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void pxi_os_futex_wait_timeout(atomic_uint *addr, unsigned expected, int64_t timeout_us)
{
    struct timespec ts;
    if (timeout_us < 0) /* a negative timespec is EINVAL: treat as "do not sleep" */
        timeout_us = 0;
    ts.tv_sec = (time_t)(timeout_us / 1000000);
    ts.tv_nsec = (long)(timeout_us % 1000000) * 1000;
    syscall(SYS_futex, (void *)addr, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
}

void pxi_os_futex_wake(atomic_uint *addr, int n)
{
    syscall(SYS_futex, (void *)addr, FUTEX_WAKE_PRIVATE, n <= 0 ? 0x7fffffff : n, NULL, NULL, 0);
}

void pxi_os_yield(void)
{
    (void)sched_yield();
}

int64_t pxi_os_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t pxi_os_process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void pxi_os_thread_set_name(const char *name)
{
    char buf[16];
    size_t i = 0;
    if (!name)
        return;
    for (; name[i] && i < sizeof buf - 1; ++i)
        buf[i] = name[i];
    buf[i] = '\0';
    pthread_setname_np(pthread_self(), buf);
}

int pxi_os_thread_no_wakeup_preemption(void)
{
    const struct sched_param sp = {.sched_priority = 0};
    return pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
}

uint64_t pxi_os_thread_id(void)
{
    return (uint64_t)syscall(SYS_gettid);
}

/* Written by px_initialize before any helper thread exists and read by helper threads that
 * px_initialize creates afterwards (pthread_create orders the two). */
static cpu_set_t captured_affinity;
static int have_captured_affinity;

void pxi_os_affinity_capture(void)
{
    have_captured_affinity =
        sched_getaffinity(0, sizeof captured_affinity, &captured_affinity) == 0;
}

void pxi_os_affinity_apply_captured(void)
{
    if (have_captured_affinity)
        (void)sched_setaffinity(0, sizeof captured_affinity, &captured_affinity);
}

int pxi_os_current_cpu(void)
{
    return sched_getcpu();
}

/* The calling thread's affinity mask as last read, and when (0: never). sched_getaffinity is
 * a system call (0.65-0.75 us on the 2-core CI VM, more than a whole launch of the Threads
 * space), so pxi_os_placement reads it again only when the copy is older than
 * AFFINITY_RECHECK_NS or the thread runs on a processor outside it (it was re-bound). */
#define AFFINITY_RECHECK_NS 10000000
static _Thread_local cpu_set_t tls_mask;
static _Thread_local int64_t tls_mask_ns;
static _Thread_local int tls_mask_one; /* the mask holds one processor (a bound thread) */

int pxi_os_placement(const int *cpus, int n)
{
    int cpu = sched_getcpu();
    if (cpu >= 0) {
        int on = 0;
        for (int i = 0; i < n && !on; ++i)
            on = cpus[i] == cpu;
        if (!on)
            return PXI_OS_AWAY; /* settled without a system call */
    }
    int64_t now = pxi_os_now_ns();
    if (tls_mask_ns == 0 || now - tls_mask_ns > AFFINITY_RECHECK_NS ||
        (cpu >= 0 && cpu < CPU_SETSIZE && !CPU_ISSET((size_t)cpu, &tls_mask))) {
        if (sched_getaffinity(0, sizeof tls_mask, &tls_mask) != 0 || CPU_COUNT(&tls_mask) == 0) {
            tls_mask_ns = 0;
            return -1;
        }
        tls_mask_ns = now > 0 ? now : 1;
        tls_mask_one = CPU_COUNT(&tls_mask) == 1;
    }
    /* A thread bound to one processor runs there (cpu), which is in the list. */
    if (tls_mask_one && cpu >= 0)
        return PXI_OS_WITHIN;
    /* The mask lies within the list <=> (mask AND list) == mask. */
    cpu_set_t in;
    CPU_ZERO(&in);
    for (int i = 0; i < n; ++i)
        if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE)
            CPU_SET((size_t)cpus[i], &in);
    CPU_AND(&in, &in, &tls_mask);
    return CPU_EQUAL(&in, &tls_mask) ? PXI_OS_WITHIN : PXI_OS_NEAR;
}

int pxi_os_num_cpus(void)
{
    /* The processors this process may run on (as omp_get_num_procs counts them): an MPI rank
     * bound to one core has one, whatever the machine has. The mask captured at px_initialize
     * comes first, since the Threads space binds the initializing thread to one core after. */
    if (have_captured_affinity && CPU_COUNT(&captured_affinity) > 0)
        return CPU_COUNT(&captured_affinity);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
