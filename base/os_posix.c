/* base/os_posix.c - the platform layer without futexes: a small table of mutex + condition
 * variable buckets hashed by address stands in for the futex wait queue. Wake-ups broadcast the
 * bucket, so they may be spurious; callers re-check their condition (base/os.h contract). */
#include "base/os.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#define N_BUCKETS 64

static struct bucket {
    pthread_mutex_t lock;
    pthread_cond_t cond;
} buckets[N_BUCKETS];
static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;

static void buckets_init(void)
{
    for (int i = 0; i < N_BUCKETS; ++i) {
        pthread_mutex_init(&buckets[i].lock, NULL);
        pthread_cond_init(&buckets[i].cond, NULL);
    }
}

static struct bucket *bucket_of(const void *addr)
{
    pthread_once(&buckets_once, buckets_init);
    return &buckets[((uintptr_t)addr >> 6) % N_BUCKETS];
}

void pxi_os_futex_wait(atomic_uint *addr, unsigned expected)
{
    struct bucket *b = bucket_of(addr);
    pthread_mutex_lock(&b->lock);
    /* Checked under the bucket lock, which every waker takes, so a wake cannot be lost. */
    if (atomic_load_explicit(addr, memory_order_relaxed) == expected)
        pthread_cond_wait(&b->cond, &b->lock);
    pthread_mutex_unlock(&b->lock);
}

void pxi_os_futex_wait_timeout(atomic_uint *addr, unsigned expected, int64_t timeout_us)
{
    struct bucket *b = bucket_of(addr);
    struct timespec ts;
    if (timeout_us < 0) /* would make tv_nsec negative (EINVAL): treat as "do not sleep" */
        timeout_us = 0;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = ts.tv_nsec + (timeout_us % 1000000) * 1000;
    ts.tv_sec += (time_t)(timeout_us / 1000000 + ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    pthread_mutex_lock(&b->lock);
    if (atomic_load_explicit(addr, memory_order_relaxed) == expected)
        pthread_cond_timedwait(&b->cond, &b->lock, &ts);
    pthread_mutex_unlock(&b->lock);
}

void pxi_os_futex_wake(atomic_uint *addr, int n)
{
    (void)n;
    struct bucket *b = bucket_of(addr);
    pthread_mutex_lock(&b->lock);
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
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
    (void)name;
}

int pxi_os_thread_no_wakeup_preemption(void)
{
    return ENOSYS;
}

uint64_t pxi_os_thread_id(void)
{
    return (uint64_t)(uintptr_t)pthread_self();
}

int pxi_os_num_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void pxi_os_affinity_capture(void)
{
}

void pxi_os_affinity_apply_captured(void)
{
}

int pxi_os_current_cpu(void)
{
    return -1;
}

int pxi_os_placement(const int *cpus, int n)
{
    (void)cpus;
    (void)n;
    return -1;
}
