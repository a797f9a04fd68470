/* core/oversub.c - the oversubscription rule and its action, decided once at px_initialize
 * (see core/oversub.h). */
#include "core/oversub.h"

#include <stdlib.h>
#include <unistd.h>

#include "base/log.h"
#include "base/os.h"
#include "base/wait.h"

static pxi_oversub state; /* written by px_initialize only, before any runtime thread */

/* The launchers' environment variables giving the job's process count on this node. */
static const char *const local_size_vars[] = {
    "OMPI_COMM_WORLD_LOCAL_SIZE", /* Open MPI's mpirun / orterun / prterun */
    "MPI_LOCALNRANKS",            /* MPICH's and Intel MPI's Hydra */
};

/* The job's processes on this node as the launcher announces them (1 when none does or the
 * value is not a positive count). */
static int local_ranks(void)
{
    for (size_t i = 0; i < sizeof local_size_vars / sizeof *local_size_vars; ++i) {
        const char *v = getenv(local_size_vars[i]);
        if (!v || !*v)
            continue;
        char *end = NULL;
        long n = strtol(v, &end, 10);
        if (*end == '\0' && n >= 1 && n <= 1 << 20)
            return (int)n;
        PXI_DEBUG("px_initialize: ignoring %s='%s' (not a process count)", local_size_vars[i], v);
    }
    return 1;
}

static int online_cpus(int at_least)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > at_least ? (int)n : at_least;
}

void pxi_oversub_detect(const pxi_config *cfg)
{
    pxi_oversub s = {0};
    s.cpus = pxi_os_num_cpus();
    s.threads = cfg->num_threads > 0 ? cfg->num_threads : s.cpus;
    s.local_ranks = local_ranks();
    s.node_cpus = online_cpus(s.cpus);
    const long node_threads = (long)s.local_ranks * s.threads;
    s.oversubscribed = 1;
    if (s.threads > s.cpus)
        s.rule = "process";
    else if (s.local_ranks > 1 && node_threads > s.node_cpus)
        s.rule = "node";
    else {
        s.rule = "none";
        s.oversubscribed = 0;
    }
    s.acted = pxi_wait_set_oversubscribed(s.oversubscribed);
    state = s;
    if (!s.oversubscribed)
        return;
    if (s.acted)
        PXI_INFO("px_initialize: oversubscribed (%d threads on %d processors; %d processes x %d "
                 "threads on a node of %d): waits spin %d us, then sleep, and engines run as on "
                 "one processor (set PX_WAIT_POLICY or PX_SPIN_US to choose otherwise)",
                 s.threads, s.cpus, s.local_ranks, s.threads, s.node_cpus,
                 PXI_WAIT_SPIN_US_THROTTLED);
    else if (pxi_wait_configured_spin_us() > PXI_WAIT_SPIN_US_THROTTLED)
        PXI_WARN("px_initialize: oversubscribed (%d threads on %d processors; %d processes x %d "
                 "threads on a node of %d), yet waits spin %lld us as PX_WAIT_POLICY=%s / "
                 "PX_SPIN_US ask: spinning threads take the processors the others need",
                 s.threads, s.cpus, s.local_ranks, s.threads, s.node_cpus,
                 (long long)pxi_wait_configured_spin_us(), pxi_wait_policy_name());
    else
        PXI_INFO("px_initialize: oversubscribed (%d threads on %d processors; %d processes x %d "
                 "threads on a node of %d); waits keep the explicit PX_WAIT_POLICY=%s / "
                 "PX_SPIN_US budget of %lld us",
                 s.threads, s.cpus, s.local_ranks, s.threads, s.node_cpus, pxi_wait_policy_name(),
                 (long long)pxi_wait_configured_spin_us());
}

const pxi_oversub *pxi_oversub_get(void)
{
    return &state;
}

/* The action is base/wait's throttle: one flag, read where the waits read it. */
int pxi_oversub_active(void)
{
    return pxi_wait_oversubscribed();
}
