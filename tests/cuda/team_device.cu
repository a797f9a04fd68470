/* tests/cuda/team_device.cu - team kernels compiled by nvcc: host entries for serial and
 * threads, device halves for the cuda space (parex/kernel_cuda_team.h). */
#include <math.h>

#include "team_device.h"

static PX_HOST_DEVICE void td_run_join(void *dst, const void *src)
{
    td_run *d = (td_run *)dst;
    const td_run *s = (const td_run *)src;
    if (s->lo == s->hi)
        return;
    if (d->lo == d->hi) {
        *d = *s;
        return;
    }
    d->ok = d->ok && s->ok && d->hi == s->lo;
    d->hi = s->hi;
}
static void td_run_identity(void *v)
{
    td_run r = {0, 0, 1};
    *(td_run *)v = r;
}
const px_reducer td_run_reducer = PX_REDUCER_INIT(td_run, td_run_identity, td_run_join, "td_run");
PX_REDUCER_DEVICE(td_run, td_run_join);

PX_TEAM_FOR(td_fill, td_args, t, a)
{
    int64_t lr = px_team_league_rank(t), w = a->width;
    int64_t *s = (int64_t *)px_team_scratch(t);
    PX_TEAM_THREAD_FOR(t, j, 0, w)
    {
        s[j] = lr * 1000 + j;
    }
    px_team_barrier(t);
    PX_TEAM_THREAD_FOR(t, j, 0, w)
    {
        a->out[lr * w + j] = s[w - 1 - j];
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

PX_TEAM_FOR(td_cover, td_args, t, a)
{
    int64_t lr = px_team_league_rank(t);
    PX_TEAM_THREAD_FOR(t, j, 0, a->width)
    {
        PX_THREAD_VECTOR_FOR(t, k, 0, 8)
        {
            (void)px_atomic_add_i64(&a->out[(lr * a->width + j) * 8 + k], 1);
        }
    }
}

PX_TEAM_REDUCE(td_order, td_args, td_run, t, a, acc)
{
    (void)a;
    int64_t i = px_team_league_rank(t) * px_team_size(t) + px_team_rank(t);
    td_run e = {i, i + 1, 1};
    td_run_join(acc, &e);
}

PX_TEAM_REDUCE(td_isolation, td_args, int64_t, t, a, acc)
{
    (void)a;
    int64_t *mine = (int64_t *)px_team_thread_scratch(t);
    int64_t lr = px_team_league_rank(t), r = px_team_rank(t);
    mine[0] = lr;
    mine[1] = r;
    px_team_barrier(t);
    *acc += (mine[0] != lr) + (mine[1] != r);
    px_team_barrier(t);
}

PX_TEAM_REDUCE(td_fsum, td_args, double, t, a, acc)
{
    (void)a;
    double v = sin((double)px_team_league_rank(t) + 0.001 * (double)px_team_rank(t)), team = 0;
    (void)px_team_reduce(t, &px_sum_f64, &v, &team);
    *acc += v + (px_team_rank(t) == 0 ? team * 1e-3 : 0.0);
}

/* A host function body in an nvcc-compiled file: px_team_reduce with a custom reducer and
 * untyped pointers still compiles here (nvcc's device pass sees the call too). */
void td_host_runs(const px_team *t, void *ctx, void *acc)
{
    (void)ctx;
    int64_t i = px_team_league_rank(t) * px_team_size(t) + px_team_rank(t);
    td_run mine = {i, i + 1, 1}, team;
    const void *m = &mine;
    void *res = &team;
    if (px_team_reduce(t, &td_run_reducer, m, res) == PX_OK && px_team_rank(t) == 0)
        td_run_join(acc, &team);
}
