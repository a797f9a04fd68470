/* tests/check_policy.c - range-policy validation and chunk arithmetic (pure functions),
 * checked exhaustively over small ranges and at the int64 limits. */
#include <stdint.h>
#include <stdlib.h>

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

START_TEST(test_chunk_size_uses_policy_or_auto)
{
    px_range_policy p = px_range_chunked(0, 1000, 7, PX_SCHEDULE_DYNAMIC);
    ck_assert_int_eq(pxi_range_chunk_size(&p, 4), 7);
    p.chunk_size = 0;
    ck_assert_int_eq(pxi_range_chunk_size(&p, 4), px_range_auto_chunk(1000, 4, p.schedule));
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
    tcase_add_test(tc, test_chunk_size_uses_policy_or_auto);
    tcase_add_test(tc, test_range_chunked_keeps_fields);
    tcase_add_test(tc, test_auto_chunk_odd_inputs);
    tcase_add_test(tc, test_range_check_message_names_label_and_value);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(policy_suite());
}
