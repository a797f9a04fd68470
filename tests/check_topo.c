/* tests/check_topo.c - Threads topology and binding (spaces/threads/topo*.c): rank-to-PU
 * mapping for close / spread / none on hwloc synthetic machines (2 packages x 4 cores x 2 PUs
 * and others), simulated process restrictions (taskset 0-3, a cpuset that splits a core),
 * bad strings, this machine's load and binding, and the printed table.
 *
 * Built twice when hwloc is available: check_topo against the hwloc build, and
 * check_topo_nohwloc with topo.c and topo_nohwloc.c compiled in (PXI_TOPO_NO_HWLOC), which checks
 * the fallback the library uses on machines without hwloc. No px_initialize: topo.c is pure apart
 * from logging, which works before initialize. */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/os.h"
#include "parex/config.h"
#include "px_test.h"
#include "spaces/threads/topo.h"

#if PX_HAVE_HWLOC && !defined(PXI_TOPO_NO_HWLOC)
#define TOPO_HWLOC 1
#include <hwloc.h>
#else
#define TOPO_HWLOC 0
#endif

#define MAXR 64

/* Everything pxi_topo_print writes, read back through a tmpfile (ISO C only); the text lives
 * until the next call. */
static const char *print_to_string(const pxi_topo *t, const int *pu, int n)
{
    static char *text;
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    pxi_topo_print(t, f, pu, n);
    rewind(f);
    free(text);
    text = px_test_read_stream(f, NULL);
    fclose(f);
    ck_assert_ptr_nonnull(text);
    return text;
}

static void check_lines_indented(const char *text)
{
    const char *line = text;
    while (*line != '\0') {
        ck_assert_msg(strncmp(line, "  ", 2) == 0 && line[2] != ' ',
                      "line not indented by two spaces: %s", line);
        const char *nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        line = nl + 1;
    }
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text != '\0'; text++)
        n += *text == '\n';
    return n;
}

#if TOPO_HWLOC

static pxi_topo *load_ok(const char *synthetic, const char *restrict_cpuset)
{
    pxi_topo *t = NULL;
    int st = pxi_topo_load(&t, synthetic, restrict_cpuset);
    ck_assert_msg(st == PX_OK, "load(\"%s\", \"%s\"): %s", synthetic ? synthetic : "NULL",
                  restrict_cpuset ? restrict_cpuset : "NULL", px_strerror(st));
    ck_assert_ptr_nonnull(t);
    return t;
}

/* Map n ranks and compare with the expected PU list. */
static void expect_map(const pxi_topo *t, const char *bind, int n, const int *want)
{
    int got[MAXR];
    ck_assert_int_le(n, MAXR);
    ck_assert_int_eq(pxi_topo_map(t, n, bind, got), PX_OK);
    for (int r = 0; r < n; r++)
        ck_assert_msg(got[r] == want[r], "bind %s, %d ranks: rank %d on PU %d, expected %d",
                      bind ? bind : "NULL", n, r, got[r], want[r]);
}

#define EXPECT(t, bind, ...)                                                                       \
    do {                                                                                           \
        static const int want_[] = {__VA_ARGS__};                                                  \
        expect_map((t), (bind), (int)(sizeof want_ / sizeof want_[0]), want_);                     \
    } while (0)

#define S2x4x2 "pack:2 core:4 pu:2"

/* ---- the 2 packages x 4 cores x 2 PUs machine: PUs 2c and 2c+1 on core c, cores 0-3 on
 * package 0, cores 4-7 on package 1. ---- */

START_TEST(test_synthetic_2x4x2_counts_cores_and_pus)
{
    pxi_topo *t = load_ok(S2x4x2, NULL);
    ck_assert_int_eq(pxi_topo_num_cores(t), 8);
    ck_assert_int_eq(pxi_topo_num_pus(t), 16);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_close_puts_ranks_on_consecutive_cores_first_pu)
{
    pxi_topo *t = load_ok(S2x4x2, NULL);
    EXPECT(t, "close", 0);
    EXPECT(t, "close", 0, 2);
    EXPECT(t, "close", 0, 2, 4);
    EXPECT(t, "close", 0, 2, 4, 6);
    EXPECT(t, "close", 0, 2, 4, 6, 8, 10, 12, 14);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_close_oversubscribed_takes_second_pus_then_wraps)
{
    pxi_topo *t = load_ok(S2x4x2, NULL);
    px_test_log_capture();
    EXPECT(t, "close", 0, 2, 4, 6, 8, 10, 12, 14, 1);
    ck_assert_msg(px_test_log_contains("9 ranks on 8 cores"), "log: %s", px_test_log_text());
    ck_assert(px_test_log_contains("oversubscribed"));
    EXPECT(t, "close", 0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    px_test_log_clear();
    EXPECT(t, "close", 0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0);
    ck_assert(px_test_log_contains("17 ranks on 8 cores (16 PUs)"));
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_close_within_cores_does_not_warn)
{
    pxi_topo *t = load_ok(S2x4x2, NULL);
    px_test_log_capture();
    int pu[8];
    ck_assert_int_eq(pxi_topo_map(t, 8, "close", pu), PX_OK);
    ck_assert_int_eq(pxi_topo_map(t, 8, "spread", pu), PX_OK);
    ck_assert_msg(!px_test_log_contains("oversubscribed"), "log: %s", px_test_log_text());
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_spread_splits_ranks_over_packages_then_cores)
{
    pxi_topo *t = load_ok(S2x4x2, NULL);
    EXPECT(t, "spread", 0);
    EXPECT(t, "spread", 0, 8);        /* one per package */
    EXPECT(t, "spread", 0, 4, 8);     /* package 0 takes the surplus rank */
    EXPECT(t, "spread", 0, 4, 8, 12); /* cores 0, 2 | 4, 6 */
    EXPECT(t, "spread", 0, 2, 4, 6, 8, 10, 12, 14);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_spread_oversubscribed_fills_like_close)
{
    pxi_topo *t = load_ok(S2x4x2, NULL);
    px_test_log_capture();
    EXPECT(t, "spread", 0, 2, 4, 6, 8, 10, 12, 14, 1);
    EXPECT(t, "spread", 0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    EXPECT(t, "spread", 0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0);
    ck_assert(px_test_log_contains("oversubscribed"));
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_none_leaves_every_rank_unbound)
{
    pxi_topo *t = load_ok(S2x4x2, NULL);
    static const int ns[] = {1, 2, 3, 4, 8, 9, 16, 17};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        int pu[MAXR];
        for (int r = 0; r < MAXR; r++)
            pu[r] = 12345;
        ck_assert_int_eq(pxi_topo_map(t, ns[i], "none", pu), PX_OK);
        for (int r = 0; r < ns[i]; r++)
            ck_assert_int_eq(pu[r], -1);
        ck_assert_int_eq(pu[ns[i]], 12345); /* nothing written past nranks */
    }
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_null_bind_means_close)
{
    pxi_topo *t = load_ok(S2x4x2, NULL);
    EXPECT(t, NULL, 0, 2, 4);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_spread_follows_cache_levels_between_package_and_core)
{
    /* 2 packages x 2 L3 x 2 cores x 2 PUs: 4 ranks take one core under each L3. */
    pxi_topo *t = load_ok("pack:2 l3:2 core:2 pu:2", NULL);
    EXPECT(t, "spread", 0, 8);
    EXPECT(t, "spread", 0, 4, 8);
    EXPECT(t, "spread", 0, 4, 8, 12);
    EXPECT(t, "close", 0, 2, 4, 6);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_spread_skips_packages_evenly)
{
    /* 4 packages x 2 cores: 2 ranks land on packages 0 and 2. */
    pxi_topo *t = load_ok("pack:4 core:2 pu:1", NULL);
    EXPECT(t, "spread", 0, 4);
    EXPECT(t, "spread", 0, 2, 4, 6);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_topology_without_cores_treats_pus_as_cores)
{
    pxi_topo *t = load_ok("pack:2 pu:3", NULL);
    ck_assert_int_eq(pxi_topo_num_cores(t), 6);
    ck_assert_int_eq(pxi_topo_num_pus(t), 6);
    EXPECT(t, "close", 0, 1, 2, 3);
    EXPECT(t, "spread", 0, 3);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_single_pu_machine_wraps_every_rank)
{
    pxi_topo *t = load_ok("pu:1", NULL);
    ck_assert_int_eq(pxi_topo_num_cores(t), 1);
    EXPECT(t, "close", 0);
    EXPECT(t, "spread", 0, 0, 0);
    pxi_topo_destroy(t);
}
END_TEST

/* Invariants over many shapes and restrictions: every PU is in the cpuset, ranks up to the
 * core count get distinct cores (close and spread), ranks up to the PU count get distinct
 * PUs, and spread never gives a package more than its share rounded up. */
START_TEST(test_mapping_invariants_over_many_shapes)
{
    static const char *shapes[] = {"pack:2 core:4 pu:2", "pack:3 core:5 pu:1",
                                   "pack:2 l3:3 core:2 pu:4", "pack:1 core:7 pu:2",
                                   "pack:4 l2:2 core:3 pu:1"};
    static const char *restricts[] = {NULL, "0-5", "1,3,5,7,9", "2-9,13"};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (size_t q = 0; q < sizeof restricts / sizeof restricts[0]; q++) {
            pxi_topo *t = load_ok(shapes[s], restricts[q]);
            int nc = pxi_topo_num_cores(t), np = pxi_topo_num_pus(t);
            ck_assert_int_ge(nc, 1);
            ck_assert_int_ge(np, nc);
            int full[MAXR];
            ck_assert_int_le(np, MAXR);
            ck_assert_int_eq(pxi_topo_map(t, np, "close", full), PX_OK);
            for (int n = 1; n <= np + 3 && n <= MAXR; n++) {
                for (int b = 0; b < 2; b++) {
                    int pu[MAXR];
                    ck_assert_int_eq(pxi_topo_map(t, n, b ? "spread" : "close", pu), PX_OK);
                    for (int r = 0; r < n; r++) {
                        int in = 0;
                        for (int k = 0; k < np; k++)
                            in |= full[k] == pu[r];
                        ck_assert_msg(in, "%s / %s: PU %d outside the cpuset", shapes[s],
                                      restricts[q] ? restricts[q] : "-", pu[r]);
                        for (int r2 = 0; r2 < r && n <= np; r2++)
                            ck_assert_msg(pu[r2] != pu[r], "%s / %s, %d ranks: PU %d twice",
                                          shapes[s], restricts[q] ? restricts[q] : "-", n, pu[r]);
                    }
                    if (n <= nc) {
                        /* the first nc entries of the full close map are the cores' first
                         * PUs: every rank must sit on one of them (distinct cores) */
                        for (int r = 0; r < n; r++) {
                            int first = 0;
                            for (int k = 0; k < nc; k++)
                                first |= full[k] == pu[r];
                            ck_assert_msg(first, "%s / %s, %d ranks: PU %d not a core's first",
                                          shapes[s], restricts[q] ? restricts[q] : "-", n, pu[r]);
                        }
                    }
                }
            }
            pxi_topo_destroy(t);
        }
    }
}
END_TEST

/* ---- simulated process restrictions ---- */

START_TEST(test_restrict_like_taskset_0_3_keeps_two_cores)
{
    pxi_topo *t = load_ok(S2x4x2, "0-3");
    ck_assert_int_eq(pxi_topo_num_cores(t), 2);
    ck_assert_int_eq(pxi_topo_num_pus(t), 4);
    EXPECT(t, "close", 0, 2);
    EXPECT(t, "spread", 0, 2);
    px_test_log_capture();
    EXPECT(t, "close", 0, 2, 1);
    ck_assert(px_test_log_contains("3 ranks on 2 cores"));
    EXPECT(t, "close", 0, 2, 1, 3, 0);
    EXPECT(t, "spread", 0, 2, 1, 3);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_restrict_splitting_a_core_counts_it_once)
{
    /* PUs 1-4: core 0 keeps PU 1, core 1 both PUs 2-3, core 2 keeps PU 4. */
    pxi_topo *t = load_ok(S2x4x2, "1-4");
    ck_assert_int_eq(pxi_topo_num_cores(t), 3);
    ck_assert_int_eq(pxi_topo_num_pus(t), 4);
    EXPECT(t, "close", 1, 2, 4);
    EXPECT(t, "close", 1, 2, 4, 3, 1);
    EXPECT(t, "spread", 1, 2);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_restrict_across_packages_spreads_over_both)
{
    /* PUs 0 and 3 (cores 0 and 1, package 0), 9 and 12 (cores 4 and 6, package 1). */
    pxi_topo *t = load_ok(S2x4x2, "0,3,9,12");
    ck_assert_int_eq(pxi_topo_num_cores(t), 4);
    EXPECT(t, "spread", 0, 9);
    EXPECT(t, "close", 0, 3, 9, 12);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_restrict_to_one_pu)
{
    pxi_topo *t = load_ok(S2x4x2, "13");
    ck_assert_int_eq(pxi_topo_num_cores(t), 1);
    ck_assert_int_eq(pxi_topo_num_pus(t), 1);
    EXPECT(t, "spread", 13, 13);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_empty_restrict_string_means_no_restriction)
{
    pxi_topo *t = load_ok(S2x4x2, "");
    ck_assert_int_eq(pxi_topo_num_cores(t), 8);
    pxi_topo_destroy(t);
}
END_TEST

/* ---- bad input ---- */

START_TEST(test_bad_synthetic_string_is_einval)
{
    static const char *bad[] = {
        "", "foo", "pack:2 core:x", "pack:0 pu:2", "pack:2 core:4 pu:2 extra", "core:-1 pu:2"};
    px_test_log_capture();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pxi_topo *t = (pxi_topo *)&t; /* must be reset to NULL */
        ck_assert_int_eq(pxi_topo_load(&t, bad[i], NULL), PX_EINVAL);
        ck_assert_ptr_null(t);
    }
    ck_assert_msg(px_test_log_contains("invalid hwloc synthetic topology \"foo\""), "log: %s",
                  px_test_log_text());
}
END_TEST

START_TEST(test_bad_restrict_string_is_einval)
{
    static const char *bad[] = {"abc", "0-3x", ",",    "-",  "1--2", "5-2",
                                "0-",  "-1",   "0,,1", "0,", " 1",   "99999999999"};
    px_test_log_capture();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pxi_topo *t = NULL;
        ck_assert_msg(pxi_topo_load(&t, S2x4x2, bad[i]) == PX_EINVAL, "restrict \"%s\"", bad[i]);
        ck_assert_ptr_null(t);
    }
    ck_assert(px_test_log_contains("invalid cpuset restriction \"1--2\""));
}
END_TEST

START_TEST(test_restrict_outside_the_machine_is_einval)
{
    px_test_log_capture();
    pxi_topo *t = NULL;
    ck_assert_int_eq(pxi_topo_load(&t, S2x4x2, "16-31"), PX_EINVAL);
    ck_assert_ptr_null(t);
    ck_assert(px_test_log_contains("leaves no PU"));
}
END_TEST

START_TEST(test_load_null_out_is_efault)
{
    px_test_log_capture();
    ck_assert_int_eq(pxi_topo_load(NULL, S2x4x2, NULL), PX_EFAULT);
    ck_assert(px_test_log_contains("out is NULL"));
}
END_TEST

START_TEST(test_load_out_of_memory_is_enomem_and_leaks_nothing)
{
    /* Fail each of our allocations in turn until the load needs no more of them. */
    int failures = 0;
    for (uint64_t k = 1; k < 64; k++) {
        pxi_topo *t = (pxi_topo *)&t;
        pxi_alloc_fail_at(k);
        int st = pxi_topo_load(&t, S2x4x2, "0-5");
        pxi_alloc_fail_at(0);
        if (st == PX_OK) {
            ck_assert_int_eq(pxi_topo_num_cores(t), 3);
            pxi_topo_destroy(t);
            break;
        }
        ck_assert_int_eq(st, PX_ENOMEM);
        ck_assert_ptr_null(t);
        failures++;
    }
    ck_assert_int_ge(failures, 3);
}
END_TEST

START_TEST(test_map_bad_arguments)
{
    pxi_topo *t = load_ok(S2x4x2, NULL);
    int pu[4];
    px_test_log_capture();
    ck_assert_int_eq(pxi_topo_map(t, 0, "close", pu), PX_EINVAL);
    ck_assert_int_eq(pxi_topo_map(t, -3, "spread", pu), PX_EINVAL);
    ck_assert(px_test_log_contains("invalid rank count -3"));
    ck_assert_int_eq(pxi_topo_map(t, 2, "diagonal", pu), PX_EINVAL);
    ck_assert(px_test_log_contains("unknown binding policy \"diagonal\""));
    ck_assert_int_eq(pxi_topo_map(t, 2, "", pu), PX_EINVAL);
    ck_assert_int_eq(pxi_topo_map(t, 2, "Close", pu), PX_EINVAL);
    ck_assert_int_eq(pxi_topo_map(NULL, 2, "close", pu), PX_EFAULT);
    ck_assert_int_eq(pxi_topo_map(t, 2, "close", NULL), PX_EFAULT);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_null_topology_queries_are_safe)
{
    ck_assert_int_eq(pxi_topo_num_cores(NULL), 1);
    ck_assert_int_eq(pxi_topo_num_pus(NULL), 1);
    pxi_topo_destroy(NULL);
    pxi_topo_print(NULL, stdout, NULL, 0);
    px_test_log_capture();
    ck_assert_int_eq(pxi_topo_bind_self(NULL, 0), PX_EFAULT);
}
END_TEST

/* ---- binding ---- */

/* The calling thread's binding as an hwloc list string. */
static void thread_binding(char *buf, size_t cap)
{
    hwloc_topology_t h;
    ck_assert_int_eq(hwloc_topology_init(&h), 0);
    ck_assert_int_eq(hwloc_topology_load(h), 0);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    ck_assert_int_eq(hwloc_get_cpubind(h, set, HWLOC_CPUBIND_THREAD), 0);
    hwloc_bitmap_list_snprintf(buf, cap, set);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(h);
}

START_TEST(test_this_machine_loads_with_at_least_one_core)
{
    pxi_topo *t = load_ok(NULL, NULL);
    ck_assert_int_ge(pxi_topo_num_cores(t), 1);
    ck_assert_int_ge(pxi_topo_num_pus(t), pxi_topo_num_cores(t));
    int pu[MAXR];
    int n = pxi_topo_num_cores(t) < MAXR ? pxi_topo_num_cores(t) : MAXR;
    ck_assert_int_eq(pxi_topo_map(t, n, "close", pu), PX_OK);
    for (int r = 0; r < n; r++)
        ck_assert_int_ge(pu[r], 0);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_bind_self_binds_the_calling_thread)
{
    pxi_topo *t = load_ok(NULL, NULL);
    int n = pxi_topo_num_cores(t) < MAXR ? pxi_topo_num_cores(t) : MAXR;
    int pu[MAXR];
    ck_assert_int_eq(pxi_topo_map(t, n, "close", pu), PX_OK);
    px_test_log_capture();
    int st = pxi_topo_bind_self(t, pu[n - 1]);
    if (st == PX_OK) {
        char want[32], got[256];
        snprintf(want, sizeof want, "%d", pu[n - 1]);
        thread_binding(got, sizeof got);
        ck_assert_str_eq(got, want);
    } else {
        /* refused by this machine (e.g. a container forbidding affinity): warned, unbound */
        ck_assert_int_eq(st, PX_ENODEV);
        ck_assert(px_test_log_contains("runs unbound"));
    }
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_bind_self_to_pu_outside_cpuset_warns_and_stays_unbound)
{
    pxi_topo *t = load_ok(NULL, NULL);
    char before[256], after[256];
    thread_binding(before, sizeof before);
    px_test_log_capture();
    ck_assert_int_eq(pxi_topo_bind_self(t, 100000), PX_EINVAL);
    ck_assert_msg(px_test_log_contains("cannot bind thread"), "log: %s", px_test_log_text());
    ck_assert(px_test_log_contains("PU 100000"));
    ck_assert(px_test_log_contains("runs unbound"));
    thread_binding(after, sizeof after);
    ck_assert_str_eq(before, after);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_bind_self_negative_pu_does_nothing)
{
    pxi_topo *t = load_ok(NULL, NULL);
    char before[256], after[256];
    thread_binding(before, sizeof before);
    ck_assert_int_eq(pxi_topo_bind_self(t, -1), PX_OK);
    thread_binding(after, sizeof after);
    ck_assert_str_eq(before, after);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_bind_self_on_synthetic_topology_is_enosys)
{
    pxi_topo *t = load_ok(S2x4x2, NULL);
    ck_assert_int_eq(pxi_topo_bind_self(t, 3), PX_ENOSYS);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_restricted_this_machine_binds_within_restriction)
{
    pxi_topo *t = load_ok(NULL, NULL);
    int pu[1];
    ck_assert_int_eq(pxi_topo_map(t, 1, "close", pu), PX_OK);
    pxi_topo_destroy(t);
    char r[16];
    snprintf(r, sizeof r, "%d", pu[0]);
    t = load_ok(NULL, r);
    ck_assert_int_eq(pxi_topo_num_cores(t), 1);
    ck_assert_int_eq(pxi_topo_num_pus(t), 1);
    int two[2];
    ck_assert_int_eq(pxi_topo_map(t, 2, "spread", two), PX_OK);
    ck_assert_int_eq(two[0], pu[0]);
    ck_assert_int_eq(two[1], pu[0]);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_reload_after_binding_rank0_keeps_the_process_cpuset)
{
    /* Rank 0 is the initializing thread and stays bound; a second load (re-initialize) must
     * still see the whole process cpuset, not that one PU. */
    pxi_topo *t = load_ok(NULL, NULL);
    int cores = pxi_topo_num_cores(t), pus = pxi_topo_num_pus(t);
    int pu[1];
    ck_assert_int_eq(pxi_topo_map(t, 1, "close", pu), PX_OK);
    (void)pxi_topo_bind_self(t, pu[0]);
    pxi_topo_destroy(t);
    t = load_ok(NULL, NULL);
    ck_assert_int_eq(pxi_topo_num_cores(t), cores);
    ck_assert_int_eq(pxi_topo_num_pus(t), pus);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_hwloc_redirected_by_environment_is_never_bound)
{
    /* HWLOC_SYNTHETIC makes hwloc load a machine that is not this one; its binding calls
     * would report success without binding. topo must treat it as synthetic. */
    ck_assert_int_eq(setenv("HWLOC_SYNTHETIC", "pack:1 core:3 pu:1", 1), 0);
    px_test_log_capture();
    pxi_topo *t = load_ok(NULL, NULL);
    ck_assert_int_eq(pxi_topo_num_cores(t), 3);
    ck_assert_msg(px_test_log_contains("did not load this machine"), "log: %s", px_test_log_text());
    ck_assert_int_eq(pxi_topo_bind_self(t, 0), PX_ENOSYS);
    const char *s = print_to_string(t, NULL, 0);
    ck_assert_msg(strstr(s, "(synthetic)") != NULL, "%s", s);
    pxi_topo_destroy(t);
}
END_TEST

/* Workers bind themselves concurrently on one shared topology while other threads load
 * their own (racing on the cached process cpuset); run under TSan in CI. */
typedef struct {
    const pxi_topo *shared;
    int pu;
    int bind_status;
    int load_status;
    int cores;
} race_arg;

static void *race_main(void *p)
{
    race_arg *a = p;
    a->bind_status = pxi_topo_bind_self(a->shared, a->pu);
    pxi_topo *own = NULL;
    a->load_status = pxi_topo_load(&own, NULL, NULL);
    if (a->load_status == PX_OK) {
        int pu[4];
        a->cores = pxi_topo_num_cores(own);
        if (pxi_topo_map(own, 4, "spread", pu) != PX_OK)
            a->cores = -1;
        pxi_topo_destroy(own);
    }
    return NULL;
}

START_TEST(test_concurrent_binds_and_loads)
{
    pxi_topo *t = load_ok(NULL, NULL);
    enum { N = 4 };
    int pu[N];
    px_test_log_capture(); /* N may exceed the cores: keep the warning out of stderr */
    ck_assert_int_eq(pxi_topo_map(t, N, "close", pu), PX_OK);
    pthread_t th[N];
    race_arg a[N];
    for (int i = 0; i < N; i++) {
        a[i] = (race_arg){t, pu[i], -100, -100, 0};
        ck_assert_int_eq(pthread_create(&th[i], NULL, race_main, &a[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        ck_assert(a[i].bind_status == PX_OK || a[i].bind_status == PX_ENODEV);
        ck_assert_int_eq(a[i].load_status, PX_OK);
        ck_assert_int_eq(a[i].cores, pxi_topo_num_cores(t));
    }
    pxi_topo_destroy(t);
}
END_TEST

/* ---- printing ---- */

START_TEST(test_print_shows_topology_and_rank_table)
{
    pxi_topo *t = load_ok(S2x4x2, NULL);
    int pu[4];
    ck_assert_int_eq(pxi_topo_map(t, 4, "spread", pu), PX_OK);
    const char *s = print_to_string(t, pu, 4);
    ck_assert_msg(strstr(s, "2 packages x 4 cores x 2 PUs") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "process cpuset 0-15 (8 cores, 16 PUs)") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "  rank 0 -> PU 0 (core 0, package 0)\n") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "  rank 1 -> PU 4 (core 2, package 0)\n") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "  rank 2 -> PU 8 (core 4, package 1)\n") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "  rank 3 -> PU 12 (core 6, package 1)\n") != NULL, "%s", s);
    ck_assert_int_eq(count_lines(s), 5);
    check_lines_indented(s);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_print_restricted_and_second_pu)
{
    pxi_topo *t = load_ok(S2x4x2, "1-4");
    int pu[4];
    ck_assert_int_eq(pxi_topo_map(t, 4, "close", pu), PX_OK);
    const char *s = print_to_string(t, pu, 4);
    ck_assert_msg(strstr(s, "process cpuset 1-4 (3 cores, 4 PUs)") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "  rank 3 -> PU 3 (core 1, package 0)\n") != NULL, "%s", s);
    check_lines_indented(s);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_print_unbound_ranks_and_summary_only)
{
    pxi_topo *t = load_ok("pack:1 core:2 pu:1", NULL);
    int pu[3];
    px_test_log_capture();
    ck_assert_int_eq(pxi_topo_map(t, 3, "none", pu), PX_OK);
    const char *s = print_to_string(t, pu, 3);
    ck_assert_msg(strstr(s, "1 package x 2 cores x 1 PU,") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "  rank 2 -> unbound\n") != NULL, "%s", s);
    check_lines_indented(s);
    s = print_to_string(t, NULL, 3);
    ck_assert_int_eq(count_lines(s), 1);
    check_lines_indented(s);
    pxi_topo_print(t, NULL, pu, 3); /* no stream: nothing, no crash */
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_print_this_machine)
{
    pxi_topo *t = load_ok(NULL, NULL);
    int pu[1];
    ck_assert_int_eq(pxi_topo_map(t, 1, "close", pu), PX_OK);
    const char *s = print_to_string(t, pu, 1);
    ck_assert_msg(strstr(s, "  topology: ") == s, "%s", s);
    ck_assert_msg(strstr(s, "process cpuset ") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "  rank 0 -> PU ") != NULL, "%s", s);
    check_lines_indented(s);
    pxi_topo_destroy(t);
}
END_TEST

static Suite *topo_suite(void)
{
    Suite *s = suite_create("topo");
    TCase *map = tcase_create("map");
    tcase_set_timeout(map, 30);
    tcase_add_test(map, test_synthetic_2x4x2_counts_cores_and_pus);
    tcase_add_test(map, test_close_puts_ranks_on_consecutive_cores_first_pu);
    tcase_add_test(map, test_close_oversubscribed_takes_second_pus_then_wraps);
    tcase_add_test(map, test_close_within_cores_does_not_warn);
    tcase_add_test(map, test_spread_splits_ranks_over_packages_then_cores);
    tcase_add_test(map, test_spread_oversubscribed_fills_like_close);
    tcase_add_test(map, test_none_leaves_every_rank_unbound);
    tcase_add_test(map, test_null_bind_means_close);
    tcase_add_test(map, test_spread_follows_cache_levels_between_package_and_core);
    tcase_add_test(map, test_spread_skips_packages_evenly);
    tcase_add_test(map, test_topology_without_cores_treats_pus_as_cores);
    tcase_add_test(map, test_single_pu_machine_wraps_every_rank);
    tcase_add_test(map, test_mapping_invariants_over_many_shapes);
    suite_add_tcase(s, map);

    TCase *res = tcase_create("restrict");
    tcase_set_timeout(res, 30);
    tcase_add_test(res, test_restrict_like_taskset_0_3_keeps_two_cores);
    tcase_add_test(res, test_restrict_splitting_a_core_counts_it_once);
    tcase_add_test(res, test_restrict_across_packages_spreads_over_both);
    tcase_add_test(res, test_restrict_to_one_pu);
    tcase_add_test(res, test_empty_restrict_string_means_no_restriction);
    suite_add_tcase(s, res);

    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 30);
    tcase_add_test(bad, test_bad_synthetic_string_is_einval);
    tcase_add_test(bad, test_bad_restrict_string_is_einval);
    tcase_add_test(bad, test_restrict_outside_the_machine_is_einval);
    tcase_add_test(bad, test_load_null_out_is_efault);
    tcase_add_test(bad, test_load_out_of_memory_is_enomem_and_leaks_nothing);
    tcase_add_test(bad, test_map_bad_arguments);
    tcase_add_test(bad, test_null_topology_queries_are_safe);
    suite_add_tcase(s, bad);

    TCase *bind = tcase_create("bind");
    tcase_set_timeout(bind, 30);
    tcase_add_test(bind, test_this_machine_loads_with_at_least_one_core);
    tcase_add_test(bind, test_bind_self_binds_the_calling_thread);
    tcase_add_test(bind, test_bind_self_to_pu_outside_cpuset_warns_and_stays_unbound);
    tcase_add_test(bind, test_bind_self_negative_pu_does_nothing);
    tcase_add_test(bind, test_bind_self_on_synthetic_topology_is_enosys);
    tcase_add_test(bind, test_restricted_this_machine_binds_within_restriction);
    tcase_add_test(bind, test_reload_after_binding_rank0_keeps_the_process_cpuset);
    tcase_add_test(bind, test_hwloc_redirected_by_environment_is_never_bound);
    tcase_add_test(bind, test_concurrent_binds_and_loads);
    suite_add_tcase(s, bind);

    TCase *print = tcase_create("print");
    tcase_set_timeout(print, 30);
    tcase_add_test(print, test_print_shows_topology_and_rank_table);
    tcase_add_test(print, test_print_restricted_and_second_pu);
    tcase_add_test(print, test_print_unbound_ranks_and_summary_only);
    tcase_add_test(print, test_print_this_machine);
    suite_add_tcase(s, print);
    return s;
}

#else /* the fallback without hwloc */

START_TEST(test_fallback_counts_every_cpu_as_a_core)
{
    pxi_topo *t = NULL;
    ck_assert_int_eq(pxi_topo_load(&t, NULL, NULL), PX_OK);
    int n = pxi_os_num_cpus();
    ck_assert_int_eq(pxi_topo_num_cores(t), n >= 1 ? n : 1);
    ck_assert_int_eq(pxi_topo_num_pus(t), pxi_topo_num_cores(t));
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_fallback_synthetic_and_restrict_are_enosys)
{
    pxi_topo *t = (pxi_topo *)&t;
    px_test_log_capture();
    ck_assert_int_eq(pxi_topo_load(&t, "pack:2 core:4 pu:2", NULL), PX_ENOSYS);
    ck_assert_ptr_null(t);
    ck_assert(px_test_log_contains("needs hwloc"));
    ck_assert_int_eq(pxi_topo_load(&t, NULL, "0-3"), PX_ENOSYS);
    ck_assert_int_eq(pxi_topo_load(NULL, NULL, NULL), PX_EFAULT);
}
END_TEST

START_TEST(test_fallback_load_out_of_memory_is_enomem)
{
    pxi_topo *t = (pxi_topo *)&t;
    pxi_alloc_fail_at(1);
    ck_assert_int_eq(pxi_topo_load(&t, NULL, NULL), PX_ENOMEM);
    pxi_alloc_fail_at(0);
    ck_assert_ptr_null(t);
}
END_TEST

START_TEST(test_fallback_maps_every_rank_unbound_and_warns_once)
{
    pxi_topo *t = NULL;
    ck_assert_int_eq(pxi_topo_load(&t, NULL, NULL), PX_OK);
    int pu[MAXR];
    px_test_log_capture();
    ck_assert_int_eq(pxi_topo_map(t, 3, "close", pu), PX_OK);
    for (int r = 0; r < 3; r++)
        ck_assert_int_eq(pu[r], -1);
    ck_assert(px_test_log_contains("built without hwloc"));
    px_test_log_clear();
    ck_assert_int_eq(pxi_topo_map(t, 1, "spread", pu), PX_OK);
    ck_assert_int_eq(pxi_topo_bind_self(t, 0), PX_ENOSYS);
    ck_assert_msg(!px_test_log_contains("built without hwloc"), "log: %s", px_test_log_text());
    ck_assert_int_eq(pxi_topo_map(t, 0, "close", pu), PX_EINVAL);
    ck_assert_int_eq(pxi_topo_map(t, 2, "diagonal", pu), PX_EINVAL);
    ck_assert_int_eq(pxi_topo_map(NULL, 2, "close", pu), PX_EFAULT);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_fallback_bind_self_is_enosys_after_one_warning)
{
    pxi_topo *t = NULL;
    ck_assert_int_eq(pxi_topo_load(&t, NULL, NULL), PX_OK);
    px_test_log_capture();
    ck_assert_int_eq(pxi_topo_bind_self(t, -1), PX_OK);
    ck_assert_int_eq(pxi_topo_bind_self(t, 0), PX_ENOSYS);
    ck_assert(px_test_log_contains("built without hwloc"));
    px_test_log_clear();
    ck_assert_int_eq(pxi_topo_bind_self(t, 1), PX_ENOSYS);
    ck_assert_msg(!px_test_log_contains("hwloc"), "log: %s", px_test_log_text());
    ck_assert_int_eq(pxi_topo_bind_self(NULL, 0), PX_EFAULT);
    pxi_topo_destroy(t);
}
END_TEST

START_TEST(test_fallback_print)
{
    pxi_topo *t = NULL;
    ck_assert_int_eq(pxi_topo_load(&t, NULL, NULL), PX_OK);
    int pu[2] = {-1, -1};
    const char *s = print_to_string(t, pu, 2);
    ck_assert_msg(strstr(s, "without hwloc") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "  rank 1 -> unbound\n") != NULL, "%s", s);
    ck_assert_int_eq(count_lines(s), 3);
    check_lines_indented(s);
    pxi_topo_destroy(t);
}
END_TEST

static Suite *topo_suite(void)
{
    Suite *s = suite_create("topo_nohwloc");
    TCase *tc = tcase_create("fallback");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_fallback_counts_every_cpu_as_a_core);
    tcase_add_test(tc, test_fallback_synthetic_and_restrict_are_enosys);
    tcase_add_test(tc, test_fallback_load_out_of_memory_is_enomem);
    tcase_add_test(tc, test_fallback_maps_every_rank_unbound_and_warns_once);
    tcase_add_test(tc, test_fallback_bind_self_is_enosys_after_one_warning);
    tcase_add_test(tc, test_fallback_print);
    suite_add_tcase(s, tc);
    return s;
}

#endif

int main(void)
{
    /* Mapping tests warn on purpose; tests that check a message capture the log (debug). */
    (void)px_log_set_level(PX_LOG_ERROR);
    return px_test_run(topo_suite());
}
