/* tests/proc_threads.h - the threads of this process, each with its name and affinity mask, as
 * Linux lists them in /proc/self/task: what check_placement and check_mpi read to check the
 * masks of the threads parex creates (parex/instance.h, "Placement"). The including file
 * defines _GNU_SOURCE (cpu_set_t, sched_getaffinity). */
#ifndef PX_TESTS_PROC_THREADS_H
#define PX_TESTS_PROC_THREADS_H

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Called per thread with its name (no newline), its mask and its thread id; nonzero stops
 * the walk. */
typedef int (*pxt_thread_fn)(const char *name, const cpu_set_t *mask, void *arg);
typedef int (*pxt_task_fn)(const char *name, const cpu_set_t *mask, pid_t tid, void *arg);

/* Call @fn for every thread of this process that still exists when it is read, with its
 * thread id (for calls that take one: sched_getscheduler). 0 when /proc/self/task cannot be
 * opened, else 1. */
static inline int pxt_each_task(pxt_task_fn fn, void *arg)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        char path[300], name[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* the thread exited */
        if (!fgets(name, sizeof name, f))
            name[0] = '\0';
        fclose(f);
        name[strcspn(name, "\n")] = '\0';
        const pid_t tid = (pid_t)atoi(de->d_name);
        cpu_set_t mask;
        if (sched_getaffinity(tid, sizeof mask, &mask) != 0)
            continue;
        if (fn(name, &mask, tid, arg))
            break;
    }
    closedir(d);
    return 1;
}

struct pxt_each_thread_arg {
    pxt_thread_fn fn;
    void *arg;
};

static inline int pxt_each_thread_adapt(const char *name, const cpu_set_t *mask, pid_t tid,
                                        void *arg)
{
    (void)tid;
    const struct pxt_each_thread_arg *a = arg;
    return a->fn(name, mask, a->arg);
}

/* pxt_each_task for callbacks that need no thread id. */
static inline int pxt_each_thread(pxt_thread_fn fn, void *arg)
{
    struct pxt_each_thread_arg a = {fn, arg};
    return pxt_each_task(pxt_each_thread_adapt, &a);
}

#endif
