/* tests/cuda/cuda_kernels.cu - kernels of the Cuda conformance suite; see cuda_kernels.h. */
#include "cuda_kernels.h"

PX_FOR(k_visit, visit_args, i, a)
{
    a->cnt[i - a->base] += 1;
}

PX_FOR(k_empty, empty_args, i, a)
{
    (void)i;
    (void)a;
}

PX_FOR(k_fill, fill_args, i, a)
{
    a->x[i - a->base] = (double)(i % 1000) * 0.25;
}

PX_REDUCE(k_sum_f64, idx_args, double, i, a, acc)
{
    (void)a;
    *acc += (double)i;
}

PX_REDUCE(k_sum_f32, idx_args, float, i, a, acc)
{
    (void)a;
    (void)i;
    *acc += 1.0f;
}

PX_REDUCE(k_sum_i64, idx_args, int64_t, i, a, acc)
{
    (void)a;
    *acc += i;
}

PX_REDUCE(k_prod_f64, idx_args, double, i, a, acc)
{
    (void)a;
    *acc *= (i % 10 == 3) ? 2.0 : 1.0;
}

PX_REDUCE(k_min_f64, idx_args, double, i, a, acc)
{
    (void)a;
    double v = (double)(i > 777 ? i - 777 : 777 - i) + 0.5;
    if (v < *acc)
        *acc = v;
}

PX_REDUCE(k_max_f64, idx_args, double, i, a, acc)
{
    (void)a;
    double v = -(double)(i > 777 ? i - 777 : 777 - i);
    if (v > *acc)
        *acc = v;
}

PX_REDUCE(k_min_i64, idx_args, int64_t, i, a, acc)
{
    (void)a;
    int64_t v = (i * 37) % 1009;
    if (v < *acc)
        *acc = v;
}

PX_REDUCE(k_max_i64, idx_args, int64_t, i, a, acc)
{
    (void)a;
    int64_t v = (i * 37) % 1009;
    if (v > *acc)
        *acc = v;
}

PX_REDUCE(k_minloc, idx_args, px_valloc_f64, i, a, acc)
{
    (void)a;
    double v = (double)(i % 100);
    if (v < acc->val || (v == acc->val && i < acc->loc)) {
        acc->val = v;
        acc->loc = i;
    }
}

PX_REDUCE(k_maxloc, idx_args, px_valloc_f64, i, a, acc)
{
    (void)a;
    double v = (double)(i % 100);
    if (v > acc->val || (v == acc->val && i < acc->loc)) {
        acc->val = v;
        acc->loc = i;
    }
}

PX_REDUCE(k_land, idx_args, int, i, a, acc)
{
    *acc = (*acc && i != a->base + 500) ? 1 : 0;
}

PX_REDUCE(k_lor, idx_args, int, i, a, acc)
{
    *acc = (*acc || i == a->base + 500) ? 1 : 0;
}

PX_REDUCE(k_band, idx_args, uint64_t, i, a, acc)
{
    (void)a;
    *acc &= ~((uint64_t)1 << (i % 64));
}

PX_REDUCE(k_bor, idx_args, uint64_t, i, a, acc)
{
    (void)a;
    *acc |= (uint64_t)1 << (i % 64);
}

PX_REDUCE(k_sum_mem, fill_args, double, i, a, acc)
{
    *acc += a->x[i - a->base];
}

/* ---- the order-checking custom reducer, written once for host and device ---- */
static PX_HOST_DEVICE void run_join(void *dst, const void *src)
{
    run_value *d = (run_value *)dst;
    const run_value *s = (const run_value *)src;
    if (s->lo == s->hi)
        return; /* right side empty */
    if (d->lo == d->hi) {
        *d = *s;
        return;
    }
    d->ok = d->ok && s->ok && d->hi == s->lo;
    d->hi = s->hi;
}
static void run_identity(void *v)
{
    run_value r = {0, 0, 1};
    *(run_value *)v = r;
}
const px_reducer run_reducer = PX_REDUCER_INIT(run_value, run_identity, run_join, "run");
PX_REDUCER_DEVICE(run_value, run_join);

PX_REDUCE(k_run, idx_args, run_value, i, a, acc)
{
    (void)a;
    run_value e = {i, i + 1, 1};
    run_join(acc, &e);
}

/* Same layout as run_value but no PX_REDUCER_DEVICE: refused on cuda. */
typedef struct {
    int64_t lo, hi;
    int64_t ok;
} run_value_nodev;
PX_REDUCE(k_run_nodev, idx_args, run_value_nodev, i, a, acc)
{
    (void)a;
    run_value e = {i, i + 1, 1};
    run_join(acc, &e);
}

PX_SCAN(k_scan_i64, scan_args, int64_t, i, a, partial, final_pass)
{
    if (final_pass)
        a->out[i - a->base] = *partial;
    *partial += i % 7 + 1;
}

PX_SCAN(k_scan_run, scan_run_args, run_value, i, a, partial, final_pass)
{
    if (final_pass)
        a->out[i - a->base] = partial->lo == partial->hi ? a->base - 1 : partial->hi;
    run_value e = {i, i + 1, 1};
    run_join(partial, &e);
}

PX_FOR(k_triad, triad_args, i, a)
{
    a->x[i - a->base] = a->y[i - a->base] + a->s * a->z[i - a->base];
}
