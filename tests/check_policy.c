/* tests/check_policy.c - range-policy validation and chunk arithmetic (pure functions),
 * checked exhaustively over small ranges and at the int64 limits. */
#include <stdint.h>
#include <stdlib.h>

#include "policy/plan.h"
#include "policy/range.h"
#include "px_test.h"

/* In the exhaustive loops, Check's asserts are only reached on failure: each passing
 * ck_assert records a mark point through the fork pipe, which made these loops dominate the
 * sanitizer runs. */
#define LOOP_CHECK(c)                                                                              \
    do {                                                                                           \
        if (!(c))                                                                                  \
            ck_assert_msg(0, "%s", #c);                                                            \
    } while (0)

START_TEST(test_range_defaults_static_auto_chunk)
{
    px_range_policy p = px_range(3, 10);
    ck_assert_int_eq(p.begin, 3);
    ck_assert_int_eq(p.end, 10);
    ck_assert_int_eq(p.chunk_size, 0);
    ck_assert_int_eq(p.schedule, PX_SCHEDULE_STATIC);
    ck_assert_int_eq(px_range_validate(p), PX_OK);
}
END_TEST

START_TEST(test_range_begin_after_end_is_einval)
{
    ck_assert_int_eq(px_range_validate(px_range(5, 4)), PX_EINVAL);
    px_range_policy p = px_range(5, 4);
    ck_assert_int_eq(pxi_range_check(&p, "test"), PX_EINVAL);
}
END_TEST

START_TEST(test_range_empty_is_valid)
{
    ck_assert_int_eq(px_range_validate(px_range(7, 7)), PX_OK);
    ck_assert_int_eq(px_range_validate(px_range(INT64_MIN, INT64_MIN)), PX_OK);
}
END_TEST

START_TEST(test_range_negative_chunk_is_einval)
{
    ck_assert_int_eq(px_range_validate(px_range_chunked(0, 10, -1, PX_SCHEDULE_STATIC)), PX_EINVAL);
    ck_assert_int_eq(px_range_validate(px_range_chunked(0, 10, INT64_MIN, PX_SCHEDULE_DYNAMIC)),
                     PX_EINVAL);
}
END_TEST

START_TEST(test_range_unknown_schedule_is_einval)
{
    px_range_policy p = px_range(0, 10);
    p.schedule = (px_schedule)7;
    ck_assert_int_eq(px_range_validate(p), PX_EINVAL);
    ck_assert_int_eq(pxi_range_check(&p, "test"), PX_EINVAL);
}
END_TEST

START_TEST(test_range_size_overflow_is_einval)
{
    ck_assert_int_eq(px_range_validate(px_range(INT64_MIN, INT64_MAX)), PX_EINVAL);
    ck_assert_int_eq(px_range_validate(px_range(-1, INT64_MAX)), PX_EINVAL);
    ck_assert_int_eq(px_range_validate(px_range(INT64_MIN, 1)), PX_EINVAL);
    /* the largest sizes that fit */
    ck_assert_int_eq(px_range_validate(px_range(0, INT64_MAX)), PX_OK);
    ck_assert_int_eq(px_range_validate(px_range(INT64_MIN, 0)), PX_EINVAL);
    ck_assert_int_eq(px_range_validate(px_range(INT64_MIN + 1, 0)), PX_OK);
    px_range_policy p = px_range(INT64_MIN, INT64_MAX);
    ck_assert_int_eq(pxi_range_check(&p, "test"), PX_EINVAL);
}
END_TEST

START_TEST(test_auto_chunk_bounds)
{
    ck_assert_int_eq(px_range_auto_chunk(0, 4, PX_SCHEDULE_DYNAMIC), 1);
    ck_assert_int_eq(px_range_auto_chunk(1000, 4, PX_SCHEDULE_STATIC), 1);
    ck_assert_int_eq(px_range_auto_chunk(10, 4, PX_SCHEDULE_DYNAMIC), 1);
    ck_assert_int_eq(px_range_auto_chunk(3200, 4, PX_SCHEDULE_DYNAMIC), 100);
    ck_assert_int_eq(px_range_auto_chunk(INT64_MAX, 1, PX_SCHEDULE_DYNAMIC), 65536);
    ck_assert_int_eq(px_range_auto_chunk(3200, 0, PX_SCHEDULE_DYNAMIC), 400);
    ck_assert_int_eq(px_range_auto_chunk(3200, -5, PX_SCHEDULE_DYNAMIC), 400);
    for (int64_t n = 0; n < 5000; n += 7)
        for (int w = 1; w <= 9; ++w) {
            int64_t c = px_range_auto_chunk(n, w, PX_SCHEDULE_DYNAMIC);
            LOOP_CHECK(c >= 1 && c <= 65536);
        }
}
END_TEST

START_TEST(test_num_chunks_is_ceiling)
{
    ck_assert_int_eq(pxi_range_num_chunks(0, 1), 0);
    ck_assert_int_eq(pxi_range_num_chunks(1, 1), 1);
    ck_assert_int_eq(pxi_range_num_chunks(7, 7), 1);
    ck_assert_int_eq(pxi_range_num_chunks(8, 7), 2);
    ck_assert_int_eq(pxi_range_num_chunks(INT64_MAX, 1), INT64_MAX);
    ck_assert_int_eq(pxi_range_num_chunks(INT64_MAX, 2), INT64_MAX / 2 + 1);
    ck_assert_int_eq(pxi_range_num_chunks(INT64_MAX, INT64_MAX), 1);
}
END_TEST

/* Every index of [begin, end) is in exactly one chunk, chunks are ascending and contiguous. */
START_TEST(test_chunks_cover_range_exactly_once)
{
    const int64_t begins[] = {0, 13, -50};
    for (int bi = 0; bi < 3; ++bi)
        for (int64_t n = 0; n <= 130; ++n)
            for (int64_t c = 1; c <= 70; ++c) {
                int64_t begin = begins[bi], end = begin + n;
                int64_t nc = pxi_range_num_chunks(n, c);
                int64_t next = begin;
                for (int64_t k = 0; k < nc; ++k) {
                    int64_t b, e;
                    pxi_range_chunk_bounds(begin, end, c, k, &b, &e);
                    LOOP_CHECK(b == next);
                    LOOP_CHECK(e > b && e - b <= c);
                    LOOP_CHECK((b - begin) % c == 0);
                    next = e;
                }
                LOOP_CHECK(next == end);
            }
}
END_TEST

/* Static blocks: ascending by rank, contiguous, chunk-aligned, balanced to within one chunk. */
START_TEST(test_static_blocks_partition_range)
{
    const int64_t sizes[] = {0, 1, 2, 3, 7, 8, 63, 64, 65, 1000, 1001, 100003};
    const int64_t chunks[] = {1, 7, 64, 1000};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si)
        for (size_t ci = 0; ci < sizeof chunks / sizeof *chunks; ++ci)
            for (int P = 1; P <= 17; ++P) {
                int64_t begin = 13, end = begin + sizes[si], c = chunks[ci];
                int64_t next = begin, nc = pxi_range_num_chunks(sizes[si], c);
                int64_t min_chunks = INT64_MAX, max_chunks = 0;
                for (int r = 0; r < P; ++r) {
                    int64_t b, e, k0, k1;
                    pxi_range_static_block(begin, end, c, r, P, &b, &e);
                    pxi_range_static_chunks(nc, r, P, &k0, &k1);
                    LOOP_CHECK(b <= e);
                    if (b < e) {
                        LOOP_CHECK(b == next);
                        LOOP_CHECK((b - begin) % c == 0);
                        next = e;
                    }
                    int64_t cnt = k1 - k0;
                    min_chunks = cnt < min_chunks ? cnt : min_chunks;
                    max_chunks = cnt > max_chunks ? cnt : max_chunks;
                }
                LOOP_CHECK(next == end);
                LOOP_CHECK(max_chunks - min_chunks <= 1);
            }
}
END_TEST

START_TEST(test_static_block_at_int64_limits)
{
    int64_t b, e;
    pxi_range_static_block(INT64_MAX - 10, INT64_MAX, 3, 1, 2, &b, &e);
    ck_assert_int_eq(e, INT64_MAX);
    ck_assert_int_eq((b - (INT64_MAX - 10)) % 3, 0);
    pxi_range_static_block(0, INT64_MAX, 1, 3, 4, &b, &e);
    ck_assert_int_eq(e, INT64_MAX);
}
END_TEST

START_TEST(test_plan_chunk_uses_policy_or_auto)
{
    px_range_policy p = px_range_chunked(0, 1000, 7, PX_SCHEDULE_DYNAMIC);
    pxi_range_plan pl = pxi_plan_range(&p, PX_KERNEL_FOR, 4, PXI_PLAN_POOL);
    ck_assert_int_eq(pl.chunk, 7);
    ck_assert_int_eq(pl.call_chunk, 7);
    ck_assert_int_eq(pl.dynamic, 1);
    p.chunk_size = 0;
    pl = pxi_plan_range(&p, PX_KERNEL_FOR, 4, PXI_PLAN_POOL);
    ck_assert_int_eq(pl.chunk, px_range_auto_chunk(1000, 4, PX_SCHEDULE_DYNAMIC));
    /* A scan is static whatever the schedule: chunk 1, one call per rank block. */
    pl = pxi_plan_range(&p, PX_KERNEL_SCAN, 4, PXI_PLAN_POOL);
    ck_assert_int_eq(pl.dynamic, 0);
    ck_assert_int_eq(pl.chunk, 1);
    ck_assert_int_eq(pl.call_chunk, INT64_MAX);
    /* Serial: one rank, static, whatever nranks and schedule say. */
    pl = pxi_plan_range(&p, PX_KERNEL_REDUCE, 4, PXI_PLAN_SERIAL);
    ck_assert_int_eq(pl.nranks, 1);
    ck_assert_int_eq(pl.dynamic, 0);
    ck_assert_int_eq(pl.call_chunk, INT64_MAX);
    /* Device: one index per device thread, chunk and schedule do not apply. */
    p.chunk_size = 13;
    pl = pxi_plan_range(&p, PX_KERNEL_FOR, 4096, PXI_PLAN_DEVICE);
    ck_assert_int_eq(pl.dynamic, 0);
    ck_assert_int_eq(pl.chunk, 1);
    ck_assert_int_eq(pl.call_chunk, 1);
    ck_assert_int_eq(pl.begin, 0);
    ck_assert_int_eq(pl.end, 1000);
}
END_TEST

/* --- the plan, exhaustively ----------------------------------------------------------------
 * Every small (begin, n, chunk, nranks, schedule, kind, space) combination: run the plan the way
 * a backend does, count the visits of every index and check the plan's invariants. */

/* The loops below make millions of checks: a Check assertion per check would dominate (each
 * one records its location), so only a failing check reaches Check. */
#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #cond);                                  \
    } while (0)

#define PLAN_MAX_N 40
static int visits[PLAN_MAX_N];
static int64_t plan_calls;

/* Cut piece [b, e) into calls as a backend does and record them; every call is non-empty, at
 * most call_chunk long and, with an explicit chunk, exactly one chunk of the range. */
static void run_piece(const pxi_range_plan *pl, int64_t chunk_size, int64_t b, int64_t e)
{
    for (int64_t t; b < e; b = t) {
        t = pxi_plan_call_end(pl, b, e);
        REQUIRE((t) > (b));
        REQUIRE((t - b) <= (pl->call_chunk));
        if (chunk_size > 0) {
            REQUIRE(((b - pl->begin) % chunk_size) == (0));
            REQUIRE(t - b == chunk_size || t == pl->end);
        }
        for (int64_t i = b; i < t; ++i)
            ++visits[i - pl->begin];
        ++plan_calls;
    }
}

static void check_plan(int64_t begin, int64_t n, int64_t chunk_size, int nranks, px_schedule sched,
                       px_kernel_kind kind, pxi_plan_space space)
{
    px_range_policy p = px_range_chunked(begin, begin + n, chunk_size, sched);
    pxi_range_plan pl = pxi_plan_range(&p, kind, nranks, space);
    REQUIRE((pl.begin) == (begin));
    REQUIRE((pl.end) == (begin + n));
    REQUIRE((pl.nranks) == (space == PXI_PLAN_SERIAL ? 1 : nranks));
    REQUIRE((pl.chunk) >= (1));
    REQUIRE((pl.nchunks) == (pxi_range_num_chunks(n, pl.chunk)));
    int dyn = space == PXI_PLAN_POOL && sched == PX_SCHEDULE_DYNAMIC && kind != PX_KERNEL_SCAN;
    REQUIRE((pl.dynamic) == (dyn));
    if (chunk_size > 0)
        REQUIRE((pl.chunk) == (chunk_size));
    else
        REQUIRE((pl.chunk) == (px_range_auto_chunk(n, pl.nranks, dyn ? sched : 0)));
    for (int64_t i = 0; i < n; ++i)
        visits[i] = 0;
    plan_calls = 0;
    if (dyn) {
        REQUIRE((pl.call_chunk) == (pl.chunk));
        REQUIRE((pl.claim % pl.chunk) == (0));
        REQUIRE((pl.nclaims) == (pxi_range_num_chunks(n, pl.claim)));
        REQUIRE((pl.nclaims) <= (PXI_PLAN_MAX_UNITS));
        /* Each rank's own share of units, in rank order, together every unit once. */
        int64_t next = 0;
        for (int r = 0; r < pl.nranks; ++r) {
            int64_t u0, u1;
            pxi_plan_claims_of_rank(&pl, r, &u0, &u1);
            REQUIRE((u0) == (next));
            REQUIRE((u1 - u0) <= (pl.nclaims / pl.nranks + 1));
            next = u1;
        }
        REQUIRE((next) == (pl.nclaims));
        for (int64_t u = pl.nclaims - 1; u >= 0; --u) { /* claim order does not matter */
            int64_t b, e;
            pxi_plan_claim_bounds(&pl, u, &b, &e);
            REQUIRE((b) == (begin + u * pl.claim));
            run_piece(&pl, pl.chunk, b, e);
        }
    } else {
        REQUIRE((pl.call_chunk) == (chunk_size > 0 ? chunk_size : INT64_MAX));
        /* Blocks are contiguous in rank order, chunk-aligned, and (static) within one chunk of
         * each other; with the automatic size each non-empty block is one call. */
        int64_t next = begin, lo = INT64_MAX, hi = 0;
        for (int r = 0; r < pl.nranks; ++r) {
            int64_t b, e;
            if (kind == PX_KERNEL_SCAN)
                pxi_plan_scan_block(&pl, r, &b, &e);
            else
                pxi_plan_static_block(&pl, r, &b, &e);
            if (kind != PX_KERNEL_SCAN) {
                /* The plan's deal (inline for one rank, from the plan's chunk count otherwise)
                 * is the range arithmetic's, policy/range.h. */
                int64_t rb, re;
                pxi_range_static_block(begin, begin + n, pl.chunk, r, pl.nranks, &rb, &re);
                REQUIRE((b) == (rb));
                REQUIRE((e) == (re));
            }
            if (b == e)
                continue;
            REQUIRE((b) == (next));
            REQUIRE(((b - begin) % pl.chunk) == (0));
            int64_t chunks = pxi_range_num_chunks(e - b, pl.chunk);
            lo = chunks < lo ? chunks : lo;
            hi = chunks > hi ? chunks : hi;
            int64_t before = plan_calls;
            run_piece(&pl, chunk_size, b, e);
            if (chunk_size == 0)
                REQUIRE((plan_calls - before) == (1));
            next = e;
        }
        REQUIRE((next) == (begin + n));
        if (kind != PX_KERNEL_SCAN && hi > 0 && pl.nchunks >= pl.nranks)
            REQUIRE((hi - lo) <= (1));
    }
    for (int64_t i = 0; i < n; ++i)
        if (visits[i] != 1)
            ck_abort_msg("begin %lld n %lld chunk %lld ranks %d sched %d kind %d space %d: index "
                         "%lld visited %d times",
                         (long long)begin, (long long)n, (long long)chunk_size, nranks, (int)sched,
                         (int)kind, (int)space, (long long)(begin + i), visits[i]);
}

START_TEST(test_plan_visits_every_index_once_for_every_small_policy)
{
    static const int64_t begins[] = {-7, 0, 5};
    static const int64_t chunks[] = {0, 1, 2, 3, 4, 5, 7, 9, 16, 41};
    static const px_kernel_kind kinds[] = {PX_KERNEL_FOR, PX_KERNEL_REDUCE, PX_KERNEL_SCAN};
    static const pxi_plan_space spaces[] = {PXI_PLAN_SERIAL, PXI_PLAN_POOL};
    for (size_t bi = 0; bi < sizeof begins / sizeof *begins; ++bi)
        for (int64_t n = 0; n <= PLAN_MAX_N; ++n)
            for (size_t ci = 0; ci < sizeof chunks / sizeof *chunks; ++ci)
                for (int nranks = 1; nranks <= 9; ++nranks)
                    for (int sched = 0; sched <= 1; ++sched)
                        for (size_t ki = 0; ki < 3; ++ki)
                            for (size_t si = 0; si < 2; ++si)
                                check_plan(begins[bi], n, chunks[ci], nranks, (px_schedule)sched,
                                           kinds[ki], spaces[si]);
}
END_TEST

/* A dynamic reduce over many chunks groups them into at most PXI_PLAN_MAX_UNITS units of whole
 * chunks; a dynamic for claims one chunk at a time. */
START_TEST(test_plan_dynamic_reduce_caps_its_units)
{
    px_range_policy p =
        px_range_chunked(3, 3 + 3 * PXI_PLAN_MAX_UNITS + 17, 1, PX_SCHEDULE_DYNAMIC);
    pxi_range_plan pl = pxi_plan_range(&p, PX_KERNEL_REDUCE, 2, PXI_PLAN_POOL);
    ck_assert_int_eq(pl.claim, 4);
    ck_assert_int_le(pl.nclaims, PXI_PLAN_MAX_UNITS);
    ck_assert_int_eq(pl.call_chunk, 1);
    int64_t b, e;
    pxi_plan_claim_bounds(&pl, pl.nclaims - 1, &b, &e);
    ck_assert_int_eq(e, p.end);
    pl = pxi_plan_range(&p, PX_KERNEL_FOR, 2, PXI_PLAN_POOL);
    ck_assert_int_eq(pl.claim, 1);
    ck_assert_int_eq(pl.nclaims, p.end - p.begin);
}
END_TEST

/* Huge ranges: no overflow in chunk counts, blocks or claims. */
START_TEST(test_plan_at_int64_limits)
{
    px_range_policy p = px_range_chunked(0, INT64_MAX, 0, PX_SCHEDULE_DYNAMIC);
    pxi_range_plan pl = pxi_plan_range(&p, PX_KERNEL_REDUCE, 3, PXI_PLAN_POOL);
    ck_assert_int_le(pl.nclaims, PXI_PLAN_MAX_UNITS);
    int64_t b, e;
    pxi_plan_claim_bounds(&pl, pl.nclaims - 1, &b, &e);
    ck_assert_int_eq(e, INT64_MAX);
    ck_assert_int_lt(b, e);
    p.schedule = PX_SCHEDULE_STATIC;
    pl = pxi_plan_range(&p, PX_KERNEL_SCAN, 3, PXI_PLAN_POOL);
    pxi_plan_scan_block(&pl, 2, &b, &e);
    ck_assert_int_eq(e, INT64_MAX);
    pxi_plan_scan_block(&pl, 0, &b, &e);
    ck_assert_int_eq(b, 0);
    p = px_range_chunked(INT64_MIN / 2, INT64_MAX / 2, 1000, PX_SCHEDULE_STATIC);
    pl = pxi_plan_range(&p, PX_KERNEL_FOR, 7, PXI_PLAN_POOL);
    pxi_plan_static_block(&pl, 6, &b, &e);
    ck_assert_int_eq(e, INT64_MAX / 2);
    ck_assert_int_eq(pxi_plan_call_end(&pl, b, e) - b, 1000);
}
END_TEST

START_TEST(test_range_chunked_keeps_fields)
{
    px_range_policy p = px_range_chunked(-4, 99, 7, PX_SCHEDULE_DYNAMIC);
    ck_assert_int_eq(p.begin, -4);
    ck_assert_int_eq(p.end, 99);
    ck_assert_int_eq(p.chunk_size, 7);
    ck_assert_int_eq(p.schedule, PX_SCHEDULE_DYNAMIC);
    ck_assert_int_eq(px_range_validate(p), PX_OK);
}
END_TEST

/* px_range_auto_chunk is total: odd inputs give a usable chunk, never 0 or a negative. */
START_TEST(test_auto_chunk_odd_inputs)
{
    ck_assert_int_eq(px_range_auto_chunk(-5, 4, PX_SCHEDULE_DYNAMIC), 1);
    ck_assert_int_eq(px_range_auto_chunk(INT64_MIN, 4, PX_SCHEDULE_DYNAMIC), 1);
    ck_assert_int_eq(px_range_auto_chunk(1000000, 4, (px_schedule)9), 1);
    ck_assert_int_eq(px_range_auto_chunk(INT64_MAX, INT32_MAX, PX_SCHEDULE_DYNAMIC), 65536);
}
END_TEST

/* The launch-side check names the kernel label and the bad value in its message. */
/* pxi_plan_md: tile numbers dealt like a 1-D range; a pool plan has at least 8 tiles per rank
 * where the box allows, static blocks partition [0, total) in rank order, dynamic claims cover
 * it once, and the tiling does not depend on the kind (for and reduce see the same tiles). */
START_TEST(test_plan_md_deals_tiles_like_a_range)
{
    int64_t hi[3] = {64, 64, 64};
    for (int nranks = 1; nranks <= 8; ++nranks) {
        for (int dyn = 0; dyn < 2; ++dyn) {
            px_mdrange_policy p = px_mdrange(3, NULL, hi);
            p = px_mdrange_set_schedule(p, dyn ? PX_SCHEDULE_DYNAMIC : PX_SCHEDULE_STATIC);
            pxi_md_hint h = {.l2_bytes = 1 << 20};
            pxi_md_plan a = pxi_plan_md(&p, PX_KERNEL_FOR, nranks, PXI_PLAN_POOL, &h);
            pxi_md_plan b = pxi_plan_md(&p, PX_KERNEL_REDUCE, nranks, PXI_PLAN_POOL, &h);
            ck_assert_int_ge(a.tiling.total, 8 * nranks);
            ck_assert_int_eq(a.tiling.total, b.tiling.total);
            for (int d = 0; d < 3; ++d)
                ck_assert_int_eq(a.tiling.tile[d], b.tiling.tile[d]);
            const pxi_range_plan *tp = &a.tiles;
            ck_assert_int_eq(tp->begin, 0);
            ck_assert_int_eq(tp->end, a.tiling.total);
            ck_assert_int_eq(tp->dynamic, dyn);
            int64_t next = 0;
            if (!dyn) {
                for (int r = 0; r < nranks; ++r) {
                    int64_t bb, ee;
                    pxi_plan_static_block(tp, r, &bb, &ee);
                    ck_assert_int_eq(bb, next);
                    next = ee;
                }
            } else {
                for (int64_t u = 0; u < tp->nclaims; ++u) {
                    int64_t bb, ee;
                    pxi_plan_claim_bounds(tp, u, &bb, &ee);
                    ck_assert_int_eq(bb, next);
                    ck_assert_int_lt(bb, ee);
                    next = ee;
                }
            }
            ck_assert_int_eq(next, a.tiling.total);
        }
    }
    /* Serial ignores the schedule and asks for no tile minimum. */
    px_mdrange_policy p = px_mdrange_set_schedule(px_mdrange(3, NULL, hi), PX_SCHEDULE_DYNAMIC);
    pxi_md_plan s = pxi_plan_md(&p, PX_KERNEL_FOR, 4, PXI_PLAN_SERIAL, NULL);
    ck_assert_int_eq(s.tiles.dynamic, 0);
    ck_assert_int_eq(s.tiles.nranks, 1);
    /* A device plan takes its tile minimum from the hint. */
    pxi_md_hint dh = {.l2_bytes = 128 * 1024, .min_tiles = 1000};
    pxi_md_plan dv = pxi_plan_md(&p, PX_KERNEL_FOR, 1, PXI_PLAN_DEVICE, &dh);
    ck_assert_int_ge(dv.tiling.total, 1000);
}
END_TEST

START_TEST(test_range_check_message_names_label_and_value)
{
    px_test_log_capture();
    px_range_policy p = px_range(5, 4);
    ck_assert_int_eq(pxi_range_check(&p, "my_kernel"), PX_EINVAL);
    ck_assert(px_test_log_contains("my_kernel"));
    ck_assert(px_test_log_contains("5"));
    px_test_log_clear();
    p = px_range_chunked(0, 10, -3, PX_SCHEDULE_STATIC);
    ck_assert_int_eq(pxi_range_check(&p, "k2"), PX_EINVAL);
    ck_assert(px_test_log_contains("-3"));
    px_test_log_clear();
    p = px_range(0, 10);
    ck_assert_int_eq(pxi_range_check(&p, "k3"), PX_OK);
    ck_assert_str_eq(px_test_log_text(), "");
    px_log_set_handler(NULL, NULL);
}
END_TEST

/* Team leagues (pxi_plan_team): static blocks and dynamic runs cover every team once, in league
 * order; team size and vector length 0 take the limits' defaults; scratch rounds to 64 bytes. */
START_TEST(test_plan_team_covers_the_league_once_for_every_size_and_schedule)
{
    static const int64_t leagues[] = {0, 1, 7, 1000, 12345, 1000003};
    const pxi_team_limits lim = {8, 2, 32, 1, (size_t)1 << 30, "test"};
    for (size_t li = 0; li < sizeof leagues / sizeof leagues[0]; ++li) {
        for (int nranks = 1; nranks <= 9; ++nranks) {
            for (int ts = 0; ts <= nranks; ++ts) {
                for (int sched = 0; sched < 2; ++sched) {
                    for (int kind = PX_KERNEL_FOR; kind <= PX_KERNEL_REDUCE; ++kind) {
                        px_team_policy p = px_team_policy_make(leagues[li], ts, 0);
                        p.schedule = (px_schedule)sched;
                        pxi_team_plan pl =
                            pxi_plan_team(&p, (px_kernel_kind)kind, nranks, &lim, PXI_PLAN_POOL);
                        int want_ts = ts ? ts : lim.default_team_size;
                        ck_assert_int_eq(pl.team_size, want_ts);
                        ck_assert_int_eq(pl.vector_length, 1);
                        ck_assert_int_eq(pl.ngroups, nranks / want_ts > 0 ? nranks / want_ts : 1);
                        int64_t next = 0;
                        if (pl.dynamic) {
                            ck_assert_int_eq(sched, 1);
                            ck_assert_int_ge(pl.claim, 1);
                            if (kind == PX_KERNEL_REDUCE)
                                ck_assert_int_le(pl.nclaims, PXI_PLAN_MAX_UNITS);
                            for (int64_t u = 0; u < pl.nclaims; ++u) {
                                int64_t b, e;
                                pxi_plan_team_claim_bounds(&pl, u, &b, &e);
                                ck_assert_int_eq(b, next);
                                ck_assert_int_gt(e, b);
                                next = e;
                            }
                        } else {
                            int64_t lo = INT64_MAX, hi = 0;
                            for (int g = 0; g < pl.ngroups; ++g) {
                                int64_t b, e;
                                pxi_plan_team_block(&pl, g, &b, &e);
                                ck_assert_int_eq(b, next);
                                ck_assert_int_ge(e, b);
                                lo = e - b < lo ? e - b : lo;
                                hi = e - b > hi ? e - b : hi;
                                next = e;
                            }
                            ck_assert_int_le(hi - lo, 1);
                        }
                        ck_assert_int_eq(next, leagues[li]);
                    }
                }
            }
        }
    }
    /* Serial and device plans: one group, static, whatever the schedule. */
    px_team_policy p = px_team_policy_schedule(px_team_policy_make(100, 0, 0), PX_SCHEDULE_DYNAMIC);
    p = px_team_policy_scratch(p, 1, 65);
    pxi_team_plan pl = pxi_plan_team(&p, PX_KERNEL_FOR, 4, &lim, PXI_PLAN_SERIAL);
    ck_assert_int_eq(pl.ngroups, 1);
    ck_assert_int_eq(pl.dynamic, 0);
    ck_assert_uint_eq(pl.scratch_team, 64);
    ck_assert_uint_eq(pl.scratch_thread, 128);
    ck_assert_uint_eq(pl.scratch_group, 64 + 2 * 128);
}
END_TEST

static Suite *policy_suite(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("range");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_range_defaults_static_auto_chunk);
    tcase_add_test(tc, test_range_begin_after_end_is_einval);
    tcase_add_test(tc, test_range_empty_is_valid);
    tcase_add_test(tc, test_range_negative_chunk_is_einval);
    tcase_add_test(tc, test_range_unknown_schedule_is_einval);
    tcase_add_test(tc, test_range_size_overflow_is_einval);
    tcase_add_test(tc, test_auto_chunk_bounds);
    tcase_add_test(tc, test_num_chunks_is_ceiling);
    tcase_add_test(tc, test_chunks_cover_range_exactly_once);
    tcase_add_test(tc, test_static_blocks_partition_range);
    tcase_add_test(tc, test_static_block_at_int64_limits);
    tcase_add_test(tc, test_plan_chunk_uses_policy_or_auto);
    tcase_add_test(tc, test_plan_visits_every_index_once_for_every_small_policy);
    tcase_add_test(tc, test_plan_dynamic_reduce_caps_its_units);
    tcase_add_test(tc, test_plan_at_int64_limits);
    tcase_add_test(tc, test_range_chunked_keeps_fields);
    tcase_add_test(tc, test_auto_chunk_odd_inputs);
    tcase_add_test(tc, test_plan_md_deals_tiles_like_a_range);
    tcase_add_test(tc, test_range_check_message_names_label_and_value);
    tcase_add_test(tc, test_plan_team_covers_the_league_once_for_every_size_and_schedule);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(policy_suite());
}
