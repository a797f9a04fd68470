/* tests/cuda/check_cuda_emulated.cpp - the device algorithms of parex/kernel_cuda.h (grid-stride
 * for, ordered warp/block reduction, reduce-then-scan) run on the host without a GPU: the header
 * is compiled by the host C++ compiler with PXI_CUDA_EMULATE, every CUDA thread of a block runs
 * as a pthread, __syncthreads is a block barrier and the warp shuffles exchange through a
 * per-warp buffer between two warp barriers. Blocks run one after another, so `__shared__`
 * becomes `static`. This checks index coverage, the order of every join (a non-commutative
 * reducer), exclusive prefixes, and block/warp partitions for odd sizes, warp counts and grids;
 * team kernels (parex/kernel_cuda_team.h) run on 2-D blocks (lanes x members, partial last
 * warps) with team scratch, __syncthreads and the ordered member fold;
 * it cannot check timing, occupancy or the CUDA runtime calls (check_cuda does on a GPU). */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "parex/kernel.h"
#include "parex/team.h"

/* ---- the CUDA built-ins the kernels use ---------------------------------------------------- */
#undef PXI_HD
#undef PXI_DEVICE_FOR
#undef PXI_DEVICE_FOR_PTR
#undef PXI_DEVICE_REDUCE
#undef PXI_DEVICE_REDUCE_PTR
#undef PXI_DEVICE_SCAN
#undef PXI_DEVICE_SCAN_PTR
#undef PXI_DEVICE_FOR_MD
#undef PXI_DEVICE_FOR_MD_PTR
#undef PXI_DEVICE_REDUCE_MD
#undef PXI_DEVICE_REDUCE_MD_PTR
#define PXI_CUDA_EMULATE 1
#define __host__
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__      static
typedef void *cudaStream_t;

struct emu_dim {
    unsigned x, y;
};
static thread_local emu_dim threadIdx, blockIdx;
static emu_dim blockDim, gridDim;

static pthread_barrier_t block_bar;
static pthread_barrier_t warp_bar[32];
static unsigned warp_buf[32][32];

static void __syncthreads(void)
{
    pthread_barrier_wait(&block_bar);
}

/* The thread's index in its block (x fastest), whose 32-runs are the warps. */
static unsigned emu_tid(void)
{
    return threadIdx.x + blockDim.x * threadIdx.y;
}

static unsigned emu_exchange(unsigned v, int src_lane, int valid)
{
    unsigned w = emu_tid() >> 5, lane = emu_tid() & 31u;
    warp_buf[w][lane] = v;
    pthread_barrier_wait(&warp_bar[w]);
    unsigned r = valid ? warp_buf[w][src_lane] : v;
    pthread_barrier_wait(&warp_bar[w]);
    return r;
}
static unsigned __shfl_down_sync(unsigned, unsigned v, unsigned d)
{
    unsigned lane = emu_tid() & 31u;
    return emu_exchange(v, (int)(lane + d), lane + d < 32);
}
static unsigned __shfl_up_sync(unsigned, unsigned v, unsigned d)
{
    unsigned lane = emu_tid() & 31u;
    return emu_exchange(v, (int)lane - (int)d, lane >= d);
}
static unsigned __shfl_sync(unsigned, unsigned v, int src)
{
    return emu_exchange(v, src & 31, 1);
}

/* Team kernels' dynamic shared memory (one block runs at a time). */
alignas(64) static unsigned char emu_dyn_shared[1 << 16];
static unsigned char *pxi_cuda_emulated_shared(void)
{
    return emu_dyn_shared;
}

#include "parex/kernel_cuda.h"
#include "parex/kernel_cuda_team.h"

/* ---- a launcher: blocks in sequence, the threads of a block as pthreads -------------------- */

template <class F> struct emu_job {
    F *body;
    unsigned tid, bid;
};

template <class F> static void *emu_thread(void *p)
{
    emu_job<F> *j = (emu_job<F> *)p;
    threadIdx.x = j->tid % blockDim.x;
    threadIdx.y = j->tid / blockDim.x;
    blockIdx.x = j->bid;
    (*j->body)();
    return NULL;
}

/* Run body() as a grid of `grid` blocks of bx x by threads (x fastest; the last warp may be
 * partial). */
template <class F> static void emu_launch2(unsigned grid, unsigned bx, unsigned by, F body)
{
    const unsigned block = bx * by, nwarps = (block + 31) / 32;
    gridDim.x = grid;
    blockDim.x = bx;
    blockDim.y = by;
    std::vector<pthread_t> th(block);
    std::vector<emu_job<F>> jobs(block);
    /* Small stacks (the bodies need little): glibc keeps up to 40 MiB of joined threads'
     * stacks for reuse, a few 8 MiB defaults but hundreds of these, so most creations reuse a
     * mapping instead of an mmap, a guard-page mprotect and an munmap each (on the CI VM,
     * where page-table changes are dear, the suite took 40-48 s). */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (unsigned b = 0; b < grid; ++b) {
        pthread_barrier_init(&block_bar, NULL, block);
        for (unsigned w = 0; w < nwarps; ++w)
            pthread_barrier_init(&warp_bar[w], NULL, block - 32 * w < 32 ? block - 32 * w : 32);
        for (unsigned t = 0; t < block; ++t) {
            jobs[t].body = &body;
            jobs[t].tid = t;
            jobs[t].bid = b;
            ck_assert_int_eq(pthread_create(&th[t], &attr, emu_thread<F>, &jobs[t]), 0);
        }
        for (unsigned t = 0; t < block; ++t)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&block_bar);
        for (unsigned w = 0; w < nwarps; ++w)
            pthread_barrier_destroy(&warp_bar[w]);
    }
    pthread_attr_destroy(&attr);
}

/* Run body() as a grid of `grid` blocks of `block` threads (block a multiple of 32). */
template <class F> static void emu_launch(unsigned grid, unsigned block, F body)
{
    emu_launch2(grid, block, 1, body);
}

/* ---- kernels: hand-written tags shaped like the ones PX_FOR/PX_REDUCE/PX_SCAN generate --- */

struct args {
    int64_t base;
    int32_t *cnt;
    int64_t *out;
};

/* Order checker (as in cuda_kernels.cu): joins fail unless the left run ends where the right
 * one starts. */
struct run_value {
    int64_t lo, hi, ok;
};
static void run_join(void *dst, const void *src)
{
    run_value *d = (run_value *)dst;
    const run_value *s = (const run_value *)src;
    if (s->lo == s->hi)
        return;
    if (d->lo == d->hi) {
        *d = *s;
        return;
    }
    d->ok = d->ok && s->ok && d->hi == s->lo;
    d->hi = s->hi;
}
PX_REDUCER_DEVICE(run_value, run_join);
static_assert(pxi_reducer_device_has(pxi_tag<run_value>()) == 1, "device join not found");
static_assert(pxi_reducer_device_has(pxi_tag<double>()) == 0, "unexpected device join");

struct visit_k {
    static void fold(int64_t i, const args *a)
    {
        __atomic_fetch_add(&a->cnt[i - a->base], 1, __ATOMIC_RELAXED);
    }
};
struct run_k {
    static void fold(int64_t i, const args *, run_value *acc)
    {
        run_value e = {i, i + 1, 1};
        run_join(acc, &e);
    }
};
struct sum_k { /* int64 sum of i % 7 + 1 */
    static void fold(int64_t i, const args *, int64_t *acc)
    {
        *acc += i % 7 + 1;
    }
};
struct scan_k {
    struct sum_pass {
        static void fold(int64_t i, const args *a, int64_t *acc)
        {
            scan_k::scan(i, a, acc, 0);
        }
    };
    static void scan(int64_t i, const args *a, int64_t *p, int final_pass)
    {
        if (final_pass)
            a->out[i - a->base] = *p;
        *p += i % 7 + 1;
    }
};
struct scan_run_k {
    struct sum_pass {
        static void fold(int64_t i, const args *a, run_value *acc)
        {
            scan_run_k::scan(i, a, acc, 0);
        }
    };
    static void scan(int64_t i, const args *a, run_value *p, int final_pass)
    {
        if (final_pass)
            a->out[i - a->base] = (p->lo == p->hi) ? -1 : (p->ok ? p->hi : -2);
        run_value e = {i, i + 1, 1};
        run_join(p, &e);
    }
};

/* The grid the glue would pick for n indices, capped at max_grid. */
static unsigned grid_for(int64_t n, unsigned block, unsigned max_grid)
{
    int64_t tiles = n / PXI_CUDA_TILE + (n % PXI_CUDA_TILE != 0);
    int64_t wpb = block / 32;
    int64_t g = tiles / wpb + (tiles % wpb != 0);
    if (g > max_grid)
        g = max_grid;
    return g < 1 ? 1u : (unsigned)g;
}

/* Up to several warp tiles per block of every grid (1001 elements: 32 tiles, 4-5 a block of 7
 * one-warp blocks), with a last partial tile; 2053 added nothing else and took 40 % of the
 * suite's time (each emulated CUDA thread a pthread on CI's 2 cores: CI time, session 27). */
static const int64_t sizes[] = {1, 2, 127, 129, 1001};
static const unsigned blocks[] = {32, 96};
static const unsigned grids[] = {1, 3, 7};

START_TEST(test_emulated_for_visits_every_index_once)
{
    for (int64_t n : sizes)
        for (unsigned blk : blocks) {
            std::vector<int32_t> cnt((size_t)n, 0);
            args a = {-5, cnt.data(), NULL};
            int64_t b = -5, nn = n;
            unsigned g = (unsigned)((n + blk - 1) / blk);
            if (g > 3)
                g = 3; /* force the grid-stride loop */
            emu_launch(g, blk, [&] { pxi_cuda_kfor<visit_k, args>(a, b, nn); });
            for (int64_t k = 0; k < n; ++k)
                ck_assert_msg(cnt[(size_t)k] == 1, "n %lld block %u: index %lld seen %d",
                              (long long)n, blk, (long long)k, cnt[(size_t)k]);
        }
}
END_TEST

START_TEST(test_emulated_reduce_joins_every_range_in_index_order)
{
    for (int64_t n : sizes)
        for (unsigned blk : blocks)
            for (unsigned mg : grids) {
                unsigned g = grid_for(n, blk, mg);
                std::vector<run_value> part(g);
                args a = {0, NULL, NULL};
                int64_t b = 100, e = 100 + n;
                run_value ident = {0, 0, 1};
                emu_launch(g, blk, [&] {
                    pxi_cuda_kreduce<run_k, args, run_value>(a, b, e, PX_REDUCER_CUSTOM, ident,
                                                             part.data());
                });
                run_value acc = ident;
                for (unsigned k = 0; k < g; ++k)
                    run_join(&acc, &part[k]);
                ck_assert_msg(acc.lo == b && acc.hi == e && acc.ok == 1,
                              "n %lld block %u grid %u: [%lld, %lld) ok %lld", (long long)n, blk, g,
                              (long long)acc.lo, (long long)acc.hi, (long long)acc.ok);
            }
}
END_TEST

START_TEST(test_emulated_reduce_builtin_sum_is_exact)
{
    for (int64_t n : sizes)
        for (unsigned blk : blocks) {
            unsigned g = grid_for(n, blk, 5);
            std::vector<int64_t> part(g);
            args a = {0, NULL, NULL};
            int64_t b = 3, e = 3 + n, ident = 0;
            emu_launch(g, blk, [&] {
                pxi_cuda_kreduce<sum_k, args, int64_t>(a, b, e, PX_REDUCER_SUM, ident, part.data());
            });
            int64_t got = 0, want = 0;
            for (unsigned k = 0; k < g; ++k)
                got += part[k];
            for (int64_t i = b; i < e; ++i)
                want += i % 7 + 1;
            ck_assert_int_eq(got, want);
        }
}
END_TEST

/* Pass 1 (block sums with the non-final body) and pass 2 (prefix + final pass), as the space
 * runs them, with pass 2 on a different block size (its own occupancy). */
template <class K, class V>
static void emu_scan(const args &a, int64_t b, int64_t e, int op, V ident, unsigned blk1,
                     unsigned blk2, unsigned max_grid, V *total)
{
    unsigned g = grid_for(e - b, blk1, max_grid);
    std::vector<V> part(g);
    emu_launch(g, blk1, [&] {
        pxi_cuda_kreduce<typename K::sum_pass, args, V>(a, b, e, op, ident, part.data());
    });
    emu_launch(g, blk2, [&] { pxi_cuda_kscan<K, args, V>(a, b, e, op, ident, part.data()); });
    *total = ident;
    for (unsigned k = 0; k < g; ++k)
        pxi_cuda_join(op, total, &part[k]);
}

START_TEST(test_emulated_scan_writes_exact_exclusive_prefixes)
{
    for (int64_t n : sizes)
        for (unsigned blk : blocks)
            for (unsigned mg : grids) {
                std::vector<int64_t> out((size_t)n, -7);
                int64_t b = -11, e = b + n, total = 0;
                args a = {b, NULL, out.data()};
                emu_scan<scan_k, int64_t>(a, b, e, PX_REDUCER_SUM, (int64_t)0, blk,
                                          blk == 32 ? 96 : 32, mg, &total);
                int64_t s = 0;
                for (int64_t k = 0; k < n; ++k) {
                    ck_assert_msg(out[(size_t)k] == s,
                                  "n %lld block %u grid %u: at %lld got %lld want %lld",
                                  (long long)n, blk, mg, (long long)k, (long long)out[(size_t)k],
                                  (long long)s);
                    s += (b + k) % 7 + 1;
                }
                ck_assert_int_eq(total, s);
            }
}
END_TEST

START_TEST(test_emulated_scan_joins_prefixes_in_index_order)
{
    for (int64_t n : sizes)
        for (unsigned blk : blocks)
            for (unsigned mg : grids) {
                std::vector<int64_t> out((size_t)n, -7);
                int64_t b = 40, e = b + n;
                args a = {b, NULL, out.data()};
                run_value ident = {0, 0, 1}, total;
                emu_scan<scan_run_k, run_value>(a, b, e, PX_REDUCER_CUSTOM, ident, blk, blk, mg,
                                                &total);
                ck_assert(total.lo == b && total.hi == e && total.ok == 1);
                ck_assert_int_eq(out[0], -1);
                for (int64_t k = 1; k < n; ++k)
                    ck_assert_msg(out[(size_t)k] == b + k,
                                  "n %lld block %u grid %u: at %lld got %lld", (long long)n, blk,
                                  mg, (long long)k, (long long)out[(size_t)k]);
            }
}
END_TEST

START_TEST(test_emulated_builtin_joins_match_core_semantics)
{
    /* minloc/maxloc: lowest index on ties; min/max keep dst on ties; land/lor give 0/1. */
    px_valloc_f64 d = {1.0, 9}, s = {1.0, 4};
    pxi_cuda_join(PX_REDUCER_MINLOC, &d, &s);
    ck_assert(d.val == 1.0 && d.loc == 4);
    px_valloc_f64 d2 = {2.0, 1}, s2 = {2.0, 8};
    pxi_cuda_join(PX_REDUCER_MAXLOC, &d2, &s2);
    ck_assert(d2.loc == 1);
    int x = 5, y = 0;
    pxi_cuda_join(PX_REDUCER_LOR, &x, &y);
    ck_assert_int_eq(x, 1);
    pxi_cuda_join(PX_REDUCER_LAND, &x, &y);
    ck_assert_int_eq(x, 0);
    uint64_t u = 0xF0, v = 0x3C;
    pxi_cuda_join(PX_REDUCER_BAND, &u, &v);
    ck_assert(u == 0x30);
    int64_t m = INT64_MAX, w = INT64_MAX;
    pxi_cuda_join(PX_REDUCER_SUM, &m, &w); /* wraps like core, no overflow trap */
    ck_assert_int_eq(m, -2);
    double p = 3.0, q = 0.5;
    pxi_cuda_join(PX_REDUCER_PROD, &p, &q);
    ck_assert(p == 1.5);
    ck_assert_int_eq((int)pxi_cuda_vtype<int64_t>::value, PX_VALUE_I64);
    ck_assert_int_eq((int)pxi_cuda_vtype<long long>::value, PX_VALUE_I64);
    ck_assert_int_eq((int)pxi_cuda_vtype<uint64_t>::value, PX_VALUE_U64);
    ck_assert_int_eq((int)pxi_cuda_vtype<px_valloc_f64>::value, PX_VALUE_VALLOC_F64);
    ck_assert_int_eq((int)pxi_cuda_vtype<run_value>::value, PX_VALUE_CUSTOM);
}
END_TEST

/* ---- MDRange kernels: tiles to blocks, axes to threads ----------------------------------------
 */

struct md_targs {
    int rank;
    int64_t lower[PX_MAX_RANK], ext[PX_MAX_RANK];
    int32_t *cnt;
};
static int64_t md_lin(const md_targs *a, const int64_t *x)
{
    int64_t l = 0;
    for (int d = 0; d < a->rank; ++d)
        l = l * a->ext[d] + (x[d] - a->lower[d]);
    return l;
}
struct md_visit_k {
    static void fold(const int64_t *x, const md_targs *a)
    {
        __atomic_fetch_add(&a->cnt[md_lin(a, x)], 1, __ATOMIC_RELAXED);
    }
};
struct md_sum_k {
    static void fold(const int64_t *x, const md_targs *a, int64_t *acc)
    {
        *acc += md_lin(a, x) + 1;
    }
};

struct md_config {
    int rank, iterate;
    int64_t lower[PX_MAX_RANK], upper[PX_MAX_RANK], tile[PX_MAX_RANK];
    int dim[3];
    unsigned block[3];
};
static const md_config md_configs[] = {
    {3, PX_ITERATE_RIGHT, {-1, 0, 2}, {6, 5, 9}, {3, 2, 4}, {2, 1, 0}, {4, 2, 3}},
    {3, PX_ITERATE_LEFT, {0, -3, 0}, {5, 4, 7}, {2, 3, 5}, {0, 1, 2}, {3, 2, 2}},
    {2, PX_ITERATE_RIGHT, {0, 0}, {9, 70}, {2, 40}, {1, 0, -1}, {32, 2, 1}},
    {2, PX_ITERATE_LEFT, {-4, 0}, {37, 3}, {37, 1}, {0, 1, -1}, {20, 1, 1}},
    {4, PX_ITERATE_RIGHT, {0, 0, 0, 0}, {3, 4, 5, 6}, {2, 3, 2, 4}, {3, 2, 1}, {2, 2, 2}},
    {5, PX_ITERATE_LEFT, {0, 0, 0, 0, 0}, {3, 2, 4, 3, 5}, {1, 2, 3, 2, 2}, {0, 1, 2}, {1, 2, 3}},
};

static pxi_cuda_md md_of(const md_config &c, int64_t grid)
{
    pxi_cuda_md m;
    memset(&m, 0, sizeof m);
    m.rank = c.rank;
    m.iterate = c.iterate;
    m.total = 1;
    for (int d = 0; d < c.rank; ++d) {
        m.lower[d] = c.lower[d];
        m.upper[d] = c.upper[d];
        m.tile[d] = c.tile[d];
        int64_t e = c.upper[d] - c.lower[d];
        m.ntiles[d] = e / c.tile[d] + (e % c.tile[d] != 0);
        m.total *= m.ntiles[d];
    }
    unsigned prod = 1;
    for (int a = 0; a < 3; ++a) {
        m.dim[a] = c.dim[a];
        m.block[a] = c.block[a];
        prod *= c.block[a];
    }
    m.threads = (prod + 31u) / 32u * 32u;
    m.grid = grid;
    return m;
}

START_TEST(test_emulated_md_for_visits_every_point_once_and_reduce_is_exact)
{
    for (const md_config &c : md_configs)
        for (int64_t grid : {(int64_t)1, (int64_t)3, (int64_t)1000}) {
            md_targs a;
            memset(&a, 0, sizeof a);
            a.rank = c.rank;
            int64_t n = 1;
            for (int d = 0; d < c.rank; ++d) {
                a.lower[d] = c.lower[d];
                a.ext[d] = c.upper[d] - c.lower[d];
                n *= a.ext[d];
            }
            std::vector<int32_t> cnt((size_t)n, 0);
            a.cnt = cnt.data();
            pxi_cuda_md m = md_of(c, grid);
            unsigned g = (unsigned)(grid < m.total ? grid : m.total);
            emu_launch(g, m.threads, [&] { pxi_cuda_kfor_md<md_visit_k, md_targs>(a, m); });
            for (int64_t k = 0; k < n; ++k)
                ck_assert_msg(cnt[(size_t)k] == 1, "rank %d grid %u: point %lld seen %d", c.rank, g,
                              (long long)k, cnt[(size_t)k]);
            std::vector<int64_t> part(g);
            int64_t ident = 0;
            emu_launch(g, m.threads, [&] {
                pxi_cuda_kreduce_md<md_sum_k, md_targs, int64_t>(a, m, PX_REDUCER_SUM, ident,
                                                                 part.data());
            });
            int64_t sum = 0;
            for (unsigned k = 0; k < g; ++k)
                sum += part[k];
            ck_assert_msg(sum == n * (n + 1) / 2, "rank %d grid %u: sum %lld, expected %lld",
                          c.rank, g, (long long)sum, (long long)(n * (n + 1) / 2));
        }
}
END_TEST

/* ---- team kernels (parex/kernel_cuda_team.h) -------------------------------------------- */

/* Member r of team lr writes its slot of team scratch, meets the team, checks its neighbour's
 * slot, then folds {lr T + r} into the launch value and checks the ordered team fold. */
struct team_order_k {
    static void team(const px_team *t, const args *a, run_value *acc)
    {
        int64_t *s = (int64_t *)t->pxi_scratch;
        const int64_t T = t->pxi_team_size, lr = t->pxi_league_rank, r = t->pxi_team_rank;
        if (threadIdx.x == 0)
            s[r] = lr * T + r;
        __syncthreads();
        const int64_t nb = s[(r + 1) % T];
        run_value e = {lr * T + r, lr * T + r + 1, nb == lr * T + (r + 1) % T};
        run_value tv = pxi_cuda_team_fold(PX_REDUCER_CUSTOM, e);
        if (tv.lo != lr * T || tv.hi != lr * T + T || !tv.ok)
            __atomic_fetch_add(a->cnt, 1, __ATOMIC_RELAXED);
        run_join(acc, &e);
        __syncthreads(); /* scratch is read before the next team writes it */
    }
};

START_TEST(test_emulated_team_reduce_joins_members_and_teams_in_order)
{
    const unsigned shapes[][2] = {{1, 1}, {1, 33}, {4, 7}, {32, 2}, {8, 5}, {2, 48}};
    /* 19 teams: several a block on every grid, unevenly (100 took 18 s for no other path). */
    const int64_t leagues[] = {1, 7, 19};
    const unsigned grids[] = {1, 3, 8};
    for (const auto &sh : shapes)
        for (int64_t L : leagues)
            for (unsigned g : grids) {
                if ((int64_t)g > L)
                    continue;
                int32_t bad = 0;
                args a = {0, &bad, NULL};
                pxi_cuda_team tp;
                memset(&tp, 0, sizeof tp);
                tp.league = L;
                tp.vector_length = sh[0];
                tp.team_size = sh[1];
                tp.scratch_team = 64 * ((sh[1] * 8 + 63) / 64);
                tp.shmem = tp.scratch_team;
                std::vector<run_value> part(g);
                run_value ident = {0, 0, 1};
                emu_launch2(g, sh[0], sh[1], [&] {
                    pxi_cuda_kteam_reduce<team_order_k, args, run_value>(a, tp, PX_REDUCER_CUSTOM,
                                                                         ident, part.data());
                });
                run_value acc = ident;
                for (unsigned b = 0; b < g; ++b)
                    run_join(&acc, &part[b]);
                ck_assert_int_eq(bad, 0);
                ck_assert_int_eq(acc.ok, 1);
                ck_assert_int_eq(acc.lo, 0);
                ck_assert_int_eq(acc.hi, L * (int64_t)sh[1]);
            }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cuda_emulated");
    TCase *tc = tcase_create("device_algorithms");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_emulated_for_visits_every_index_once);
    tcase_add_test(tc, test_emulated_reduce_joins_every_range_in_index_order);
    tcase_add_test(tc, test_emulated_reduce_builtin_sum_is_exact);
    tcase_add_test(tc, test_emulated_scan_writes_exact_exclusive_prefixes);
    tcase_add_test(tc, test_emulated_scan_joins_prefixes_in_index_order);
    tcase_add_test(tc, test_emulated_builtin_joins_match_core_semantics);
    tcase_add_test(tc, test_emulated_md_for_visits_every_point_once_and_reduce_is_exact);
    tcase_add_test(tc, test_emulated_team_reduce_joins_members_and_teams_in_order);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
