/* tests/check_mdrange.c - MDRange policies: validation, automatic tiles and the tile arithmetic
 * of policy/mdrange.c (pure functions), checked exhaustively over small boxes of every rank and
 * at the int64 limits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/mdrange.h"
#include "px_test.h"

/* Exhaustive loops assert only on failure (a passing ck_assert costs a pipe write). */
#define LOOP_CHECK(c)                                                                              \
    do {                                                                                           \
        if (!(c))                                                                                  \
            ck_assert_msg(0, "%s", #c);                                                            \
    } while (0)

static px_mdrange_policy box2(int64_t l0, int64_t u0, int64_t l1, int64_t u1)
{
    int64_t lo[2] = {l0, l1}, up[2] = {u0, u1};
    return px_mdrange(2, lo, up);
}

START_TEST(test_mdrange_defaults_right_auto_tiles)
{
    int64_t up[3] = {4, 5, 6};
    px_mdrange_policy p = px_mdrange(3, NULL, up);
    ck_assert_int_eq(p.rank, 3);
    ck_assert_int_eq(p.iterate, PX_ITERATE_RIGHT);
    for (int d = 0; d < 3; ++d) {
        ck_assert_int_eq(p.lower[d], 0);
        ck_assert_int_eq(p.upper[d], up[d]);
        ck_assert_int_eq(p.tile[d], 0);
    }
    for (int d = 3; d < PX_MAX_RANK; ++d)
        ck_assert_int_eq(p.upper[d], 0);
    ck_assert_int_eq(px_mdrange_validate(p), PX_OK);
    p = px_mdrange_set_iterate(p, PX_ITERATE_LEFT);
    ck_assert_int_eq(p.iterate, PX_ITERATE_LEFT);
    int64_t t[3] = {1, 2, 3};
    p = px_mdrange_tiled(3, NULL, up, t);
    ck_assert_int_eq(p.tile[2], 3);
}
END_TEST

START_TEST(test_mdrange_rank_outside_2_to_6_is_einval)
{
    int64_t up[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    char msg[192];
    const int bad[] = {-1, 0, 1, 7, 100};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        px_mdrange_policy p = px_mdrange(bad[i], NULL, up);
        ck_assert_int_eq(px_mdrange_validate(p), PX_EINVAL);
        ck_assert_int_eq(pxi_mdrange_explain(&p, msg, sizeof msg), PX_EINVAL);
        ck_assert_ptr_nonnull(strstr(msg, "rank"));
    }
    for (int r = 2; r <= 6; ++r)
        ck_assert_int_eq(px_mdrange_validate(px_mdrange(r, NULL, up)), PX_OK);
    /* a NULL upper gives rank 0 */
    ck_assert_int_eq(px_mdrange(3, NULL, NULL).rank, 0);
    ck_assert_int_eq(px_mdrange_validate(px_mdrange(3, NULL, NULL)), PX_EINVAL);
}
END_TEST

START_TEST(test_mdrange_lower_above_upper_is_einval_naming_dimension)
{
    char msg[192];
    for (int r = 2; r <= 6; ++r)
        for (int bad = 0; bad < r; ++bad) {
            int64_t lo[6] = {0}, up[6] = {3, 3, 3, 3, 3, 3};
            lo[bad] = 4;
            px_mdrange_policy p = px_mdrange(r, lo, up);
            LOOP_CHECK(px_mdrange_validate(p) == PX_EINVAL);
            LOOP_CHECK(pxi_mdrange_explain(&p, msg, sizeof msg) == PX_EINVAL);
            char want[32];
            snprintf(want, sizeof want, "dimension %d", bad);
            LOOP_CHECK(strstr(msg, want) != NULL);
            LOOP_CHECK(strstr(msg, "lower 4 > upper 3") != NULL);
        }
}
END_TEST

START_TEST(test_mdrange_negative_tile_is_einval)
{
    int64_t up[3] = {3, 3, 3}, t[3] = {1, -1, 0};
    char msg[192];
    px_mdrange_policy p = px_mdrange_tiled(3, NULL, up, t);
    ck_assert_int_eq(px_mdrange_validate(p), PX_EINVAL);
    ck_assert_int_eq(pxi_mdrange_explain(&p, msg, sizeof msg), PX_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "dimension 1"));
    ck_assert_ptr_nonnull(strstr(msg, "negative tile -1"));
    t[1] = INT64_MIN;
    ck_assert_int_eq(px_mdrange_validate(px_mdrange_tiled(3, NULL, up, t)), PX_EINVAL);
}
END_TEST

START_TEST(test_mdrange_unknown_iterate_is_einval)
{
    px_mdrange_policy p = px_mdrange_set_iterate(box2(0, 2, 0, 2), (px_iterate)5);
    ck_assert_int_eq(px_mdrange_validate(p), PX_EINVAL);
}
END_TEST

START_TEST(test_mdrange_extent_overflow_is_einval)
{
    char msg[192];
    px_mdrange_policy p = box2(0, 1, INT64_MIN, INT64_MAX);
    ck_assert_int_eq(pxi_mdrange_explain(&p, msg, sizeof msg), PX_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "dimension 1"));
    ck_assert_int_eq(px_mdrange_validate(box2(-1, INT64_MAX, 0, 1)), PX_EINVAL);
    /* the largest extents that fit */
    ck_assert_int_eq(px_mdrange_validate(box2(0, INT64_MAX, 0, 1)), PX_OK);
    ck_assert_int_eq(px_mdrange_validate(box2(INT64_MIN + 1, 0, 5, 6)), PX_OK);
}
END_TEST

START_TEST(test_mdrange_product_overflow_is_einval_naming_dimension)
{
    char msg[192];
    int64_t up[3] = {INT64_C(1) << 32, INT64_C(1) << 30, 4};
    px_mdrange_policy p = px_mdrange(3, NULL, up);
    ck_assert_int_eq(pxi_mdrange_explain(&p, msg, sizeof msg), PX_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "dimension 2"));
    /* 2^32 * 2^31 = 2^63 already overflows at dimension 1 */
    up[1] = INT64_C(1) << 31;
    up[2] = 1;
    up[0] = INT64_C(1) << 32;
    p = px_mdrange(3, NULL, up);
    ck_assert_int_eq(pxi_mdrange_explain(&p, msg, sizeof msg), PX_EINVAL);
    ck_assert_ptr_nonnull(strstr(msg, "dimension 1"));
    /* 2^31 * 2^31 = 2^62 fits */
    up[0] = INT64_C(1) << 31;
    ck_assert_int_eq(px_mdrange_validate(px_mdrange(3, NULL, up)), PX_OK);
    /* tile counts: tile 1 gives as many tiles as points, so the same bound covers them; an
     * empty dimension does not excuse the others */
    int64_t up6[6] = {0, INT64_C(1) << 40, INT64_C(1) << 40, 1, 1, 1}, one[6] = {1, 1, 1, 1, 1, 1};
    ck_assert_int_eq(px_mdrange_validate(px_mdrange_tiled(6, NULL, up6, one)), PX_EINVAL);
    up6[2] = INT64_C(1) << 22;
    ck_assert_int_eq(px_mdrange_validate(px_mdrange_tiled(6, NULL, up6, one)), PX_OK);
}
END_TEST

START_TEST(test_mdrange_check_logs_label_and_message)
{
    px_test_log_capture();
    px_mdrange_policy p = box2(5, 4, 0, 1);
    ck_assert_int_eq(pxi_mdrange_check(&p, "my_stencil"), PX_EINVAL);
    ck_assert(px_test_log_contains("my_stencil"));
    ck_assert(px_test_log_contains("dimension 0"));
    px_test_log_clear();
    p = box2(0, 4, 0, 1);
    ck_assert_int_eq(pxi_mdrange_check(&p, "ok"), PX_OK);
    ck_assert(!px_test_log_contains("ok"));
}
END_TEST

/* --- exhaustive tiling ---------------------------------------------------------------------- */

/* Lexicographic compare of tile coordinates in iterate order: slowest dimension first. */
static int coords_cmp(const pxi_md_tiling *t, const int64_t *a, const int64_t *b)
{
    for (int i = 0; i < t->rank; ++i) {
        int d = (t->iterate == PX_ITERATE_LEFT) ? t->rank - 1 - i : i;
        if (a[d] != b[d])
            return a[d] < b[d] ? -1 : 1;
    }
    return 0;
}

/* Tiles the box, checks each point is covered once, boxes are non-empty, inside the box, at
 * most tile wide, in increasing tile-coordinate order, and that tile_next walks the same
 * sequence. Returns the number of points. */
static int64_t check_tiling(const px_mdrange_policy *p, const pxi_md_hint *h)
{
    LOOP_CHECK(px_mdrange_validate(*p) == PX_OK);
    pxi_md_tiling t;
    pxi_mdrange_tiling_init(&t, p, h);
    int64_t ext[PX_MAX_RANK], mult[PX_MAX_RANK], npts = 1;
    for (int d = 0; d < p->rank; ++d) {
        ext[d] = p->upper[d] - p->lower[d];
        npts *= ext[d];
        LOOP_CHECK(t.tile[d] >= 1);
        LOOP_CHECK(t.tile[d] <= (ext[d] > 0 ? ext[d] : 1));
        if (p->tile[d] > 0)
            LOOP_CHECK(t.tile[d] == (p->tile[d] < ext[d] ? p->tile[d] : (ext[d] ? ext[d] : 1)));
    }
    LOOP_CHECK(t.points == npts);
    int64_t m = 1;
    for (int d = p->rank - 1; d >= 0; --d) {
        mult[d] = m;
        m *= ext[d] > 0 ? ext[d] : 1;
    }
    unsigned char *count = calloc((size_t)(npts > 0 ? npts : 1), 1);
    ck_assert_ptr_nonnull(count);
    int64_t expect_total = 1;
    for (int d = 0; d < p->rank; ++d)
        expect_total *= (ext[d] + t.tile[d] - 1) / t.tile[d];
    LOOP_CHECK(t.total == expect_total);
    int64_t prev[PX_MAX_RANK], cur[PX_MAX_RANK], walk[PX_MAX_RANK];
    int64_t lo[PX_MAX_RANK], hi[PX_MAX_RANK], wlo[PX_MAX_RANK], whi[PX_MAX_RANK];
    for (int64_t k = 0; k < t.total; ++k) {
        pxi_mdrange_tile_coords(&t, k, cur);
        if (k == 0) {
            memcpy(walk, cur, sizeof cur);
        } else {
            LOOP_CHECK(coords_cmp(&t, prev, cur) < 0);
            LOOP_CHECK(pxi_mdrange_tile_next(&t, walk, wlo, whi) == 1);
            LOOP_CHECK(memcmp(walk, cur, sizeof(int64_t) * (size_t)t.rank) == 0);
        }
        memcpy(prev, cur, sizeof cur);
        pxi_mdrange_tile_box(&t, k, lo, hi);
        if (k > 0)
            for (int d = 0; d < t.rank; ++d)
                LOOP_CHECK(wlo[d] == lo[d] && whi[d] == hi[d]);
        int64_t idx[PX_MAX_RANK];
        for (int d = 0; d < t.rank; ++d) {
            LOOP_CHECK(p->lower[d] <= lo[d] && lo[d] < hi[d] && hi[d] <= p->upper[d]);
            LOOP_CHECK(hi[d] - lo[d] <= t.tile[d]);
            idx[d] = lo[d];
        }
        /* odometer over the tile box */
        for (;;) {
            int64_t off = 0;
            for (int d = 0; d < t.rank; ++d)
                off += (idx[d] - p->lower[d]) * mult[d];
            count[off]++;
            int d = t.rank - 1;
            for (; d >= 0; --d) {
                if (++idx[d] < hi[d])
                    break;
                idx[d] = lo[d];
            }
            if (d < 0)
                break;
        }
    }
    if (t.total > 0) {
        int64_t last[PX_MAX_RANK];
        memcpy(last, prev, sizeof prev);
        LOOP_CHECK(pxi_mdrange_tile_next(&t, last, wlo, whi) == 0);
        LOOP_CHECK(memcmp(last, prev, sizeof(int64_t) * (size_t)t.rank) == 0);
    }
    for (int64_t i = 0; i < npts; ++i)
        LOOP_CHECK(count[i] == 1);
    free(count);
    return npts;
}

/* Every rank 2..6, extents from a small set (0, 1, odd, even), negative and positive lower
 * bounds, tiles 0 (auto), 1, 2, 3 and larger than the extent, both iterate orders. */
START_TEST(test_mdrange_tiles_cover_every_point_once_in_order)
{
    const int64_t extents[] = {0, 1, 2, 3, 5};
    const int64_t lowers[] = {-3, 0, 7};
    const int64_t tiles[] = {0, 1, 2, 3, 9};
    const int nx = 5, nl = 3, nt = 5;
    int64_t checked = 0;
    for (int r = 2; r <= 6; ++r) {
        /* Walk a mixed-radix counter over (extent, lower, tile) choices per dimension, but
         * keep the run short for high ranks: dimension d uses choice (seed + d * stride). */
        int combos = (r <= 3) ? nx * nl * nt : 40;
        for (int c = 0; c < combos; ++c)
            for (int itr = 0; itr < 2; ++itr) {
                int64_t lo[6], up[6], tl[6];
                for (int d = 0; d < r; ++d) {
                    int s = (r <= 3) ? c : c * 7 + d * 13;
                    int xi = (s / (d == 0 ? 1 : 3)) % nx;
                    if (r > 3 && xi == 0 && (c % 5) != 0)
                        xi = 1 + (s % 4); /* mostly non-empty boxes at high ranks */
                    lo[d] = lowers[(s + d) % nl];
                    up[d] = lo[d] + extents[xi];
                    tl[d] = tiles[(s / 2 + d) % nt];
                }
                px_mdrange_policy p = px_mdrange_tiled(r, lo, up, tl);
                p = px_mdrange_set_iterate(p, itr ? PX_ITERATE_LEFT : PX_ITERATE_RIGHT);
                checked += check_tiling(&p, NULL);
                pxi_md_hint small = {8, 256, 16, 4}; /* tiny L2: forces small automatic tiles */
                checked += check_tiling(&p, &small);
            }
    }
    ck_assert_int_gt(checked, 10000);
}
END_TEST

/* Full cross product for rank 2: every extent pair and tile pair, both orders. */
START_TEST(test_mdrange_rank2_every_extent_and_tile)
{
    for (int64_t e0 = 0; e0 <= 7; ++e0)
        for (int64_t e1 = 0; e1 <= 7; ++e1)
            for (int64_t t0 = 0; t0 <= 8; ++t0)
                for (int64_t t1 = 0; t1 <= 8; ++t1)
                    for (int itr = 0; itr < 2; ++itr) {
                        int64_t lo[2] = {-2, 3}, up[2] = {-2 + e0, 3 + e1}, tl[2] = {t0, t1};
                        px_mdrange_policy p = px_mdrange_tiled(2, lo, up, tl);
                        p.iterate = itr ? PX_ITERATE_LEFT : PX_ITERATE_RIGHT;
                        (void)check_tiling(&p, NULL);
                    }
}
END_TEST

START_TEST(test_mdrange_one_point_and_empty_boxes)
{
    for (int r = 2; r <= 6; ++r) {
        int64_t lo[6] = {-5, -4, -3, -2, -1, 0}, up[6];
        for (int d = 0; d < r; ++d)
            up[d] = lo[d] + 1;
        px_mdrange_policy p = px_mdrange(r, lo, up);
        pxi_md_tiling t;
        pxi_mdrange_tiling_init(&t, &p, NULL);
        ck_assert_int_eq(t.total, 1);
        ck_assert_int_eq(t.points, 1);
        ck_assert_int_eq(check_tiling(&p, NULL), 1);
        up[r - 1] = lo[r - 1]; /* empty */
        p = px_mdrange(r, lo, up);
        pxi_mdrange_tiling_init(&t, &p, NULL);
        ck_assert_int_eq(t.total, 0);
        ck_assert_int_eq(t.points, 0);
    }
}
END_TEST

/* Boxes at the ends of int64: tile boxes are clipped without forming lower + tile. */
START_TEST(test_mdrange_boxes_at_int64_limits)
{
    int64_t lo[2] = {INT64_MAX - 5, INT64_MIN}, up[2] = {INT64_MAX, INT64_MIN + 4};
    int64_t tl[2] = {INT64_MAX, 3};
    px_mdrange_policy p = px_mdrange_tiled(2, lo, up, tl);
    ck_assert_int_eq(check_tiling(&p, NULL), 20);
    pxi_md_tiling t;
    pxi_mdrange_tiling_init(&t, &p, NULL);
    ck_assert_int_eq(t.tile[0], 5);
    ck_assert_int_eq(t.ntiles[1], 2);
    int64_t blo[2], bhi[2];
    pxi_mdrange_tile_box(&t, 1, blo, bhi);
    ck_assert_int_eq(bhi[1], INT64_MIN + 4);
    ck_assert_int_eq(bhi[0], INT64_MAX);
}
END_TEST

/* --- automatic tile ------------------------------------------------------------------------- */

START_TEST(test_auto_tile_whole_fast_dimension_when_it_fits)
{
    /* 256^3 doubles, two arrays (16 bytes a point), 1 MiB L2: budget 32768 points */
    int64_t n[3] = {256, 256, 256}, t[3] = {0, 0, 0};
    px_mdrange_auto_tile(3, n, PX_ITERATE_RIGHT, 16, 1 << 20, 32, 0, t);
    ck_assert_int_eq(t[2], 256);
    ck_assert_int_eq(t[1], 128);
    ck_assert_int_eq(t[0], 1);
    int64_t u[3] = {0, 0, 0};
    px_mdrange_auto_tile(3, n, PX_ITERATE_LEFT, 16, 1 << 20, 32, 0, u);
    ck_assert_int_eq(u[0], 256);
    ck_assert_int_eq(u[1], 128);
    ck_assert_int_eq(u[2], 1);
}
END_TEST

START_TEST(test_auto_tile_long_fast_dimension_is_vector_multiple_within_l2)
{
    int64_t n[2] = {100, 1000000}, t[2] = {0, 0};
    px_mdrange_auto_tile(2, n, PX_ITERATE_RIGHT, 8, 1 << 20, 64, 0, t);
    ck_assert_int_eq(t[1] % 8, 0);
    ck_assert_int_le(t[1] * 8, (1 << 20) / 2);
    ck_assert_int_ge(t[1], 32); /* four cache lines of doubles */
    ck_assert_int_eq(t[0], 1);
    /* a tiny L2 never shrinks the fast dimension below four cache lines */
    int64_t s[2] = {0, 0};
    px_mdrange_auto_tile(2, n, PX_ITERATE_RIGHT, 8, 128, 64, 0, s);
    ck_assert_int_eq(s[1], 32);
    ck_assert_int_eq(s[0], 1);
}
END_TEST

START_TEST(test_auto_tile_keeps_explicit_and_fills_zeros_in_range)
{
    for (int r = 1; r <= 6; ++r)
        for (int64_t e = 0; e <= 40; e += 3)
            for (int itr = 0; itr < 2; ++itr) {
                int64_t n[6], t[6];
                for (int d = 0; d < r; ++d) {
                    n[d] = e + d;
                    t[d] = (d == 1) ? 2 : 0;
                }
                px_mdrange_auto_tile(r, n, itr ? PX_ITERATE_LEFT : PX_ITERATE_RIGHT, 0, 4096, 0, 16,
                                     t);
                for (int d = 0; d < r; ++d) {
                    LOOP_CHECK(t[d] >= 1 && t[d] <= (n[d] > 0 ? n[d] : 1));
                    if (d == 1)
                        LOOP_CHECK(t[d] == (n[d] < 2 ? (n[d] ? n[d] : 1) : 2));
                }
            }
}
END_TEST

START_TEST(test_auto_tile_min_tiles_gives_parallelism)
{
    /* 512^2 doubles in a 1 MiB L2: without min_tiles 512x128 tiles, only 4 of them */
    int64_t n[2] = {512, 512}, t[2] = {0, 0};
    px_mdrange_auto_tile(2, n, PX_ITERATE_RIGHT, 8, 1 << 20, 32, 0, t);
    ck_assert_int_eq(t[1], 512);
    ck_assert_int_eq(t[0], 128);
    int64_t u[2] = {0, 0};
    px_mdrange_auto_tile(2, n, PX_ITERATE_RIGHT, 8, 1 << 20, 32, 64, u);
    ck_assert_int_eq(u[1], 512);
    ck_assert_int_le(u[0], 8);
    ck_assert_int_ge((512 / u[0]) * (512 / u[1]), 64);
    /* impossible demand stops at one row per tile and a four-line fast tile */
    int64_t v[2] = {0, 0};
    px_mdrange_auto_tile(2, n, PX_ITERATE_RIGHT, 8, 1 << 20, 32, INT64_MAX, v);
    ck_assert_int_eq(v[0], 1);
    ck_assert_int_eq(v[1], 32);
}
END_TEST

START_TEST(test_auto_tile_bad_rank_writes_nothing)
{
    int64_t n[7] = {4, 4, 4, 4, 4, 4, 4}, t[7] = {0};
    px_mdrange_auto_tile(0, n, PX_ITERATE_RIGHT, 8, 0, 0, 0, t);
    px_mdrange_auto_tile(7, n, PX_ITERATE_RIGHT, 8, 0, 0, 0, t);
    for (int d = 0; d < 7; ++d)
        ck_assert_int_eq(t[d], 0);
}
END_TEST

/* --- CUDA mapping --------------------------------------------------------------------------- */

START_TEST(test_cuda_map_fast_dimension_on_x_whole_warps)
{
    for (int r = 2; r <= 6; ++r)
        for (int itr = 0; itr < 2; ++itr)
            for (int64_t tf = 1; tf <= 300; tf += 7)
                for (int maxt = 1; maxt <= 1024; maxt *= 4) {
                    int64_t up[6] = {50, 50, 50, 50, 50, 50}, tl[6] = {3, 5, 70, 2, 2, 2};
                    px_mdrange_policy p = px_mdrange_tiled(r, NULL, up, tl);
                    p.iterate = itr ? PX_ITERATE_LEFT : PX_ITERATE_RIGHT;
                    int f = itr ? 0 : r - 1;
                    p.upper[f] = 400;
                    p.tile[f] = tf;
                    pxi_md_tiling t;
                    pxi_mdrange_tiling_init(&t, &p, NULL);
                    pxi_md_cuda_map m;
                    pxi_mdrange_cuda_map(&t, maxt, &m);
                    LOOP_CHECK(m.dim[0] == f);
                    LOOP_CHECK(m.dim[1] == (itr ? 1 : r - 2));
                    LOOP_CHECK(m.dim[2] == (r == 2 ? -1 : (itr ? 2 : r - 3)));
                    LOOP_CHECK((int64_t)m.block[0] * m.block[1] * m.block[2] <= maxt);
                    LOOP_CHECK(m.block[0] >= 1 && m.block[1] >= 1 && m.block[2] >= 1);
                    LOOP_CHECK(m.block[2] <= 64);
                    LOOP_CHECK(m.block[0] <= tf);
                    if (tf >= 32 && maxt >= 32)
                        LOOP_CHECK(m.block[0] % 32 == 0);
                    LOOP_CHECK(m.grid == t.total);
                }
}
END_TEST

START_TEST(test_cuda_map_grid_is_capped)
{
    int64_t up[2] = {INT64_C(1) << 20, INT64_C(1) << 20}, tl[2] = {1, 1};
    px_mdrange_policy p = px_mdrange_tiled(2, NULL, up, tl);
    pxi_md_tiling t;
    pxi_mdrange_tiling_init(&t, &p, NULL);
    pxi_md_cuda_map m;
    pxi_mdrange_cuda_map(&t, 0, &m);
    ck_assert_int_eq(m.grid, INT32_MAX);
    ck_assert_int_eq(m.block[0] * m.block[1] * m.block[2], 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mdrange");
    TCase *tc = tcase_create("policy");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_mdrange_defaults_right_auto_tiles);
    tcase_add_test(tc, test_mdrange_rank_outside_2_to_6_is_einval);
    tcase_add_test(tc, test_mdrange_lower_above_upper_is_einval_naming_dimension);
    tcase_add_test(tc, test_mdrange_negative_tile_is_einval);
    tcase_add_test(tc, test_mdrange_unknown_iterate_is_einval);
    tcase_add_test(tc, test_mdrange_extent_overflow_is_einval);
    tcase_add_test(tc, test_mdrange_product_overflow_is_einval_naming_dimension);
    tcase_add_test(tc, test_mdrange_check_logs_label_and_message);
    suite_add_tcase(s, tc);
    tc = tcase_create("tiles");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_mdrange_tiles_cover_every_point_once_in_order);
    tcase_add_test(tc, test_mdrange_rank2_every_extent_and_tile);
    tcase_add_test(tc, test_mdrange_one_point_and_empty_boxes);
    tcase_add_test(tc, test_mdrange_boxes_at_int64_limits);
    suite_add_tcase(s, tc);
    tc = tcase_create("auto_tile");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_auto_tile_whole_fast_dimension_when_it_fits);
    tcase_add_test(tc, test_auto_tile_long_fast_dimension_is_vector_multiple_within_l2);
    tcase_add_test(tc, test_auto_tile_keeps_explicit_and_fills_zeros_in_range);
    tcase_add_test(tc, test_auto_tile_min_tiles_gives_parallelism);
    tcase_add_test(tc, test_auto_tile_bad_rank_writes_nothing);
    tcase_add_test(tc, test_cuda_map_fast_dimension_on_x_whole_warps);
    tcase_add_test(tc, test_cuda_map_grid_is_capped);
    suite_add_tcase(s, tc);
    return px_test_run(s);
}
