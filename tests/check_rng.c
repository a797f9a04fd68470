/* tests/check_rng.c - parex/rng.h: Random123's Philox4x32-10 known-answer vectors through
 * px_rng_at/px_rng_seek, how the stream advances (block order, 64-bit block carry), the same bits
 * from a single-threaded loop, the serial space and the threads space (PX_NUM_THREADS = 1, 2, 3
 * in tests/rng.cmake) with a single-source PX_FOR kernel, and the moments of 10^7 uniform and
 * normal draws within 5 standard errors. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parex/rng.h"
#include "px_test.h"

/* ---- known answers ------------------------------------------------------------------------
 * From Random123's known-answer file, tests/kat_vectors of github.com/DEShawResearch/random123
 * (the three "philox4x32 10" lines; columns: counter words 0..3, key words 0..1, expected
 * output words 0..3):
 *   philox4x32 10 00000000 00000000 00000000 00000000 00000000 00000000
 *                 6627e8d5 e169c58d bc57ac4c 9b00dbd8
 *   philox4x32 10 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff
 *                 408f276d 41c83b0e a20bc7c6 6d5451fd
 *   philox4x32 10 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0
 *                 d16cfe09 94fdcceb 5001e420 24126ea1
 * Under parex's mapping (rng.h), counter words 0,1 are px_rng_at's counter, words 2,3 the block
 * that px_rng_seek selects, and key words 0,1 the seed. */
typedef struct {
    uint32_t ctr[4], key[2], out[4];
} kat;

static const kat kats[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

static uint64_t join64(uint32_t lo, uint32_t hi)
{
    return (uint64_t)lo | (uint64_t)hi << 32;
}

START_TEST(test_known_answer_vectors_of_random123)
{
    const kat *k = &kats[_i];
    px_rng r = px_rng_at(join64(k->key[0], k->key[1]), join64(k->ctr[0], k->ctr[1]));
    px_rng_seek(&r, join64(k->ctr[2], k->ctr[3]));
    for (int w = 0; w < 4; ++w)
        ck_assert_msg(px_rng_u32(&r) == k->out[w], "vector %d word %d", _i, w);
}
END_TEST

START_TEST(test_px_rng_at_is_philox_of_seed_and_counter_block_zero)
{
    /* the first vector needs no seek: px_rng_at(0, 0) is counter {0,0,0,0}, key {0,0} */
    px_rng r = px_rng_at(0, 0);
    for (int w = 0; w < 4; ++w)
        ck_assert_uint_eq(px_rng_u32(&r), kats[0].out[w]);
}
END_TEST

/* Raw Random123 call for counter {c, b} and key seed, to compare stream positions with. */
static void philox_block(uint64_t seed, uint64_t c, uint64_t b, uint32_t out[4])
{
    philox4x32_ctr_t ctr = {{(uint32_t)c, (uint32_t)(c >> 32), (uint32_t)b, (uint32_t)(b >> 32)}};
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    philox4x32_ctr_t o = philox4x32_R(10, ctr, key);
    memcpy(out, o.v, sizeof o.v);
}

START_TEST(test_stream_walks_blocks_in_order_with_64_bit_carry)
{
    const uint64_t seed = 0x0123456789abcdefull, c = 0xfedcba9876543210ull;
    px_rng r = px_rng_at(seed, c);
    for (uint64_t b = 0; b < 5; ++b) {
        uint32_t want[4];
        philox_block(seed, c, b, want);
        for (int w = 0; w < 4; ++w)
            ck_assert_uint_eq(px_rng_u32(&r), want[w]);
    }
    /* block 2^32 - 1 is followed by block 2^32: word 2 wraps, word 3 carries */
    px_rng_seek(&r, 0xffffffffull);
    for (uint64_t b = 0xffffffffull; b < 0x100000002ull; ++b) {
        uint32_t want[4];
        philox_block(seed, c, b, want);
        for (int w = 0; w < 4; ++w)
            ck_assert_uint_eq(px_rng_u32(&r), want[w]);
    }
}
END_TEST

START_TEST(test_uniform_f64_is_53_bits_of_two_words)
{
    for (uint64_t c = 0; c < 1000; ++c) {
        px_rng a = px_rng_at(7, c), b = a;
        uint64_t hi = px_rng_u32(&b), lo = px_rng_u32(&b);
        double want = (double)((hi << 21) | (lo >> 11)) / 9007199254740992.0; /* 2^53 */
        double u = px_rng_uniform_f64(&a);
        ck_assert(u == want);
        ck_assert(u >= 0.0 && u < 1.0);
        float f = px_rng_uniform_f32(&a); /* third word */
        ck_assert(f >= 0.0f && f < 1.0f);
        ck_assert(f == (float)(px_rng_u32(&b) >> 8) / 16777216.0f);
    }
}
END_TEST

START_TEST(test_normal_caches_the_second_of_a_pair)
{
    px_rng r = px_rng_at(11, 3), q = r;
    double z0 = px_rng_normal_f64(&r);
    double z1 = px_rng_normal_f64(&r);
    double u1 = 1.0 - px_rng_uniform_f64(&q), u2 = px_rng_uniform_f64(&q);
    double rho = sqrt(-2.0 * log(u1));
    ck_assert(z0 == rho * cos(6.283185307179586476925286766559 * u2));
    ck_assert(z1 == rho * sin(6.283185307179586476925286766559 * u2));
    /* both normals used one block: the next word is block 1's first */
    ck_assert_uint_eq(px_rng_u32(&r), px_rng_u32(&q));
    /* seek drops a cached normal */
    px_rng s = px_rng_at(11, 3);
    (void)px_rng_normal_f64(&s);
    px_rng_seek(&s, 0);
    ck_assert(px_rng_normal_f64(&s) == z0);
}
END_TEST

/* ---- the same stream everywhere ---------------------------------------------------------- */

#define DRAWS 7 /* values per index: u32, u32, uniform, normal, normal, normal, uniform_f32 */

typedef struct {
    uint64_t seed;
    double *out; /* DRAWS values per index */
} draw_args;

/* The body every space and the plain loop run: index i draws from stream (seed, i). */
static inline void draw_index(uint64_t seed, int64_t i, double *o)
{
    px_rng r = px_rng_at(seed, (uint64_t)i);
    o[0] = px_rng_u32(&r);
    o[1] = px_rng_u32(&r);
    o[2] = px_rng_uniform_f64(&r);
    o[3] = px_rng_normal_f64(&r);
    o[4] = px_rng_normal_f64(&r);
    o[5] = px_rng_normal_f64(&r);
    o[6] = px_rng_uniform_f32(&r);
}

PX_FOR(rng_draws, draw_args, i, a)
{
    draw_index(a->seed, i, a->out + i * DRAWS);
}

#define NIDX 100003

static void check_space_matches_loop(const char *space_name, px_schedule sched, int64_t chunk)
{
    const uint64_t seed = 0x5eed;
    double *want = malloc(sizeof(double) * DRAWS * NIDX);
    double *got = malloc(sizeof(double) * DRAWS * NIDX);
    ck_assert_ptr_nonnull(want);
    ck_assert_ptr_nonnull(got);
    for (int64_t i = 0; i < NIDX; ++i)
        draw_index(seed, i, want + i * DRAWS);
    memset(got, 0xff, sizeof(double) * DRAWS * NIDX);
    px_space *s = px_space_by_name(space_name);
    ck_assert_ptr_nonnull(s);
    draw_args a = {seed, got};
    int rc = px_parallel_for(s, "rng_draws", px_range_chunked(0, NIDX, chunk, sched), &rng_draws,
                             &a, sizeof a);
    ck_assert_int_eq(rc, PX_OK);
    ck_assert_msg(memcmp(want, got, sizeof(double) * DRAWS * NIDX) == 0,
                  "%s: the stream differs from the single-threaded loop", space_name);
    free(want);
    free(got);
}

START_TEST(test_serial_space_gives_the_loop_bits)
{
    check_space_matches_loop("serial", PX_SCHEDULE_STATIC, 0);
}
END_TEST

START_TEST(test_threads_space_gives_the_loop_bits_static)
{
    check_space_matches_loop("threads", PX_SCHEDULE_STATIC, 0);
}
END_TEST

START_TEST(test_threads_space_gives_the_loop_bits_dynamic)
{
    check_space_matches_loop("threads", PX_SCHEDULE_DYNAMIC, 7);
}
END_TEST

/* ---- moments ------------------------------------------------------------------------------ */

#define NMOM 10000000

/* |got - want| within 5 standard errors, se = sqrt(var_of_term / n). */
static void within_5_sigma(const char *what, double got, double want, double var_term, double n)
{
    double se = sqrt(var_term / n);
    ck_assert_msg(fabs(got - want) <= 5.0 * se, "%s = %.8g, expected %.8g +- 5 * %.3g", what, got,
                  want, se);
}

START_TEST(test_uniform_moments_over_1e7_draws)
{
    /* one draw per stream (seed, i): also checks that neighbouring counters are independent */
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
    for (int64_t i = 0; i < NMOM; ++i) {
        px_rng r = px_rng_at(2024, (uint64_t)i);
        double x = px_rng_uniform_f64(&r) - 0.5;
        double x2 = x * x;
        s1 += x;
        s2 += x2;
        s3 += x2 * x;
        s4 += x2 * x2;
    }
    double n = NMOM;
    /* central moments of U(0,1): mu2 = 1/12, mu3 = 0, mu4 = 1/80, mu6 = 1/448, mu8 = 1/2304 */
    within_5_sigma("uniform mean - 1/2", s1 / n, 0.0, 1.0 / 12, n);
    within_5_sigma("uniform E(x-1/2)^2", s2 / n, 1.0 / 12, 1.0 / 80 - 1.0 / 144, n);
    within_5_sigma("uniform E(x-1/2)^3", s3 / n, 0.0, 1.0 / 448, n);
    within_5_sigma("uniform E(x-1/2)^4", s4 / n, 1.0 / 80, 1.0 / 2304 - 1.0 / 6400, n);
}
END_TEST

START_TEST(test_normal_moments_over_1e7_draws)
{
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
    for (int64_t i = 0; i < NMOM / 2; ++i) {
        px_rng r = px_rng_at(99, (uint64_t)i);
        for (int k = 0; k < 2; ++k) {
            double x = px_rng_normal_f64(&r), x2 = x * x;
            s1 += x;
            s2 += x2;
            s3 += x2 * x;
            s4 += x2 * x2;
        }
    }
    double n = NMOM;
    /* N(0,1): E x^2 = 1, E x^4 = 3, E x^6 = 15, E x^8 = 105 */
    within_5_sigma("normal mean", s1 / n, 0.0, 1.0, n);
    within_5_sigma("normal E x^2", s2 / n, 1.0, 3.0 - 1.0, n);
    within_5_sigma("normal E x^3", s3 / n, 0.0, 15.0, n);
    within_5_sigma("normal E x^4", s4 / n, 3.0, 105.0 - 9.0, n);
}
END_TEST

START_TEST(test_u32_bits_are_balanced)
{
    /* each of the 32 bits is set with probability 1/2 over 4 * 10^6 words */
    const int64_t n = 4000000;
    int64_t ones[32] = {0};
    px_rng r = px_rng_at(5, 6);
    for (int64_t k = 0; k < n; ++k) {
        uint32_t u = px_rng_u32(&r);
        for (int b = 0; b < 32; ++b)
            ones[b] += (u >> b) & 1u;
    }
    for (int b = 0; b < 32; ++b)
        within_5_sigma("bit frequency", (double)ones[b] / (double)n, 0.5, 0.25, (double)n);
}
END_TEST

static Suite *rng_suite(void)
{
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("philox");
    tcase_add_loop_test(tc, test_known_answer_vectors_of_random123, 0,
                        (int)(sizeof kats / sizeof kats[0]));
    tcase_add_test(tc, test_px_rng_at_is_philox_of_seed_and_counter_block_zero);
    tcase_add_test(tc, test_stream_walks_blocks_in_order_with_64_bit_carry);
    tcase_add_test(tc, test_uniform_f64_is_53_bits_of_two_words);
    tcase_add_test(tc, test_normal_caches_the_second_of_a_pair);
    suite_add_tcase(s, tc);
    tc = tcase_create("spaces");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_serial_space_gives_the_loop_bits);
    tcase_add_test(tc, test_threads_space_gives_the_loop_bits_static);
    tcase_add_test(tc, test_threads_space_gives_the_loop_bits_dynamic);
    suite_add_tcase(s, tc);
    tc = tcase_create("moments");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_uniform_moments_over_1e7_draws);
    tcase_add_test(tc, test_normal_moments_over_1e7_draws);
    tcase_add_test(tc, test_u32_bits_are_balanced);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(rng_suite());
}
