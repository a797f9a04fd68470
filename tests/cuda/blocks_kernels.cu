/* tests/cuda/blocks_kernels.cu - see blocks_kernels.h. */
#include "blocks_kernels.h"

PX_FOR(k_blocks_atomics, atomics_args, i, a)
{
    blocks_cells *c = a->c;
    px_atomic_add_f64(&c->f64_sum, (double)i);
    px_atomic_min_f64(&c->f64_min, -0.5 * (double)i);
    px_atomic_max_f64(&c->f64_max, 0.5 * (double)i);
    (void)px_atomic_exchange_f64(&c->f64_xchg, (double)i);
    px_atomic_add_f32(&c->f32_sum, 1.0f);
    px_atomic_min_f32(&c->f32_min, (float)-i);
    px_atomic_max_f32(&c->f32_max, (float)i);
    px_atomic_add_i32(&c->i32_sum, 2);
    px_atomic_sub_i32(&c->i32_sum, 1);
    px_atomic_min_i32(&c->i32_min, (int32_t)-i);
    px_atomic_max_i32(&c->i32_max, (int32_t)i);
    int32_t o32 = px_atomic_fetch_add_i32(&c->i32_cas, 0);
    for (;;) {
        int32_t seen = px_atomic_cas_i32(&c->i32_cas, o32, o32 + 1);
        if (seen == o32)
            break;
        o32 = seen;
    }
    px_atomic_add_i64(&c->i64_sum, i);
    px_atomic_sub_i64(&c->i64_sum, 1);
    px_atomic_min_i64(&c->i64_min, -i * 1000000);
    px_atomic_max_i64(&c->i64_max, i * 1000000);
    int64_t o64 = px_atomic_add_i64(&c->i64_cas, 0);
    for (;;) {
        int64_t seen = px_atomic_cas_i64(&c->i64_cas, o64, o64 + 1);
        if (seen == o64)
            break;
        o64 = seen;
    }
    px_atomic_add_u64(&c->u64_sum, 3);
    px_atomic_sub_u64(&c->u64_sum, 1);
    px_atomic_min_u64(&c->u64_min, (uint64_t)i + 7);
    px_atomic_max_u64(&c->u64_max, (uint64_t)i << 20);
    (void)px_atomic_exchange_u64(&c->u64_xchg_count, (uint64_t)i);
}

PX_FOR(k_blocks_rng, rng_args, i, a)
{
    px_rng r = px_rng_at(a->seed, (uint64_t)i);
    double *o = a->out + i * BLOCKS_RNG_DRAWS;
    o[0] = px_rng_u32(&r);
    o[1] = px_rng_u32(&r);
    o[2] = px_rng_uniform_f64(&r);
    o[3] = px_rng_normal_f64(&r);
    o[4] = px_rng_normal_f64(&r);
}

PX_FOR(k_blocks_deposit, deposit_args, k, a)
{
    double w = (double)(k % 5 + 1);
    px_scatter_add(a->sc, (k * 7919) % a->n, w);
    px_scatter_add(a->sc, k % a->n, 0.5 * w);
}
