/* tests/cuda/team_device.cu - team kernels compiled by nvcc. Team bodies have no device half
 * yet: nvcc compiles them for the host, so they run on serial and threads, and a launch on the
 * cuda space is refused with a message. */
#include "team_device.h"

PX_TEAM_FOR(td_fill, td_args, t, a)
{
    int64_t lr = px_team_league_rank(t);
    int64_t *s = (int64_t *)px_team_scratch(t);
    PX_TEAM_THREAD_FOR(t, j, 0, a->width)
    {
        s[j] = lr * 1000 + j;
    }
    px_team_barrier(t);
    PX_TEAM_THREAD_FOR(t, j, 0, a->width)
    {
        PX_THREAD_VECTOR_FOR(t, k, 0, 1)
        {
            a->out[lr * a->width + j] = s[j] + k;
        }
    }
}

PX_TEAM_REDUCE(td_sum, td_args, int64_t, t, a, acc)
{
    int64_t lr = px_team_league_rank(t), part = 0, total = 0;
    PX_TEAM_THREAD_FOR(t, j, 0, a->width)
    {
        part += lr * 1000 + j;
    }
    (void)px_team_reduce(t, &px_sum_i64, &part, &total);
    if (px_team_rank(t) == 0)
        *acc += total;
}
