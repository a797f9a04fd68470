/* tests/check_tools.c - event dispatch of the Kokkos Tools interface (core/tools.c), profile
 * sections (core/tools_sections.c) and the kernel timer (core/kernel_timer.c), driven through
 * real tool libraries built from tests/tools/. Loading libraries: check_tools_load.c.
 *
 * Every test initializes parex itself (inside the forked child: Check forks per test) because
 * each needs its own tool list, and finalizes before returning. Tool state is read through the
 * library's own kptest_state(), found with dlopen(RTLD_NOLOAD). */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "core/registry.h"
#include "core/tools.h"
#include "kptest.h"
#include "kptest_client.h"
#include "px_test.h"

/* ---- kernels ---------------------------------------------------------------------------- */

typedef struct {
    double *x;
} fill_args;
PX_FOR(kt_fill, fill_args, i, a)
{
    a->x[i] = (double)i;
}

typedef struct {
    const double *x;
} sum_args;
PX_REDUCE(kt_sum, sum_args, double, i, a, acc)
{
    *acc += a->x[i];
}

typedef struct {
    const int64_t *in;
    int64_t *out;
} scan_args;
PX_SCAN(kt_scan, scan_args, int64_t, i, a, partial, final_pass)
{
    if (final_pass)
        a->out[i] = *partial;
    *partial += a->in[i];
}

/* ---- helpers ---------------------------------------------------------------------------- */

/* The n-th (0-based) recorded event of a kind, or NULL. */
static const kpt_event *nth_event(const kpt_state *st, int kind, int n)
{
    for (int i = 0; i < st->n_events; ++i)
        if (st->events[i].kind == kind && n-- == 0)
            return &st->events[i];
    return NULL;
}

static const kpt_event *last_event(const kpt_state *st, int kind)
{
    for (int i = st->n_events - 1; i >= 0; --i)
        if (st->events[i].kind == kind)
            return &st->events[i];
    return NULL;
}

static const kpt_event *metadata(const kpt_state *st, const char *key)
{
    for (int i = 0; i < st->n_events; ++i)
        if (st->events[i].kind == KPT_METADATA && strcmp(st->events[i].name, key) == 0)
            return &st->events[i];
    return NULL;
}

/* Host spaces of this build that are available here, with the Kokkos device id expected for
 * their default instance (type << 24 | instance 1). */
typedef struct {
    const char *name;
    uint32_t dev_id;
} space_case;
static const space_case host_spaces[] = {{"serial", 0x00000001u}, {"threads", 0x06000001u}};
#define N_HOST_SPACES (int)(sizeof host_spaces / sizeof host_spaces[0])

/* The kernel timer row of @name (a line ending in "  name"): calls, total, mean, max. */
static int timer_row(const char *table, const char *kind, const char *name,
                     unsigned long long *calls, double *total_s, double *mean_us, double *max_us)
{
    char want[128];
    snprintf(want, sizeof want, "%s  %s\n", kind, name);
    const char *hit = strstr(table, want);
    if (!hit)
        return 0;
    const char *line = hit;
    while (line > table && line[-1] != '\n')
        --line;
    return sscanf(line, "%lf %llu %lf %lf", total_s, calls, mean_us, max_us) == 4;
}

/* ---- kernels, fences, memory ------------------------------------------------------------ */

/* Team launches report like any launch: begin/end_parallel_for and _reduce with their label,
 * on every host space, through the direct call and an engine push. */
static void kt_team_for(const px_team *t, void *ctx)
{
    (void)t;
    (void)ctx;
}
static void kt_team_reduce(const px_team *t, void *ctx, void *acc)
{
    (void)ctx;
    if (px_team_rank(t) == 0)
        *(double *)acc += 1.0;
}

/* MDRange launches report like any launch too: begin/end with their label, a kernel id that
 * pairs, direct and pushed (issue 13). */
static void kt_md_for(const int64_t *lo, const int64_t *hi, void *ctx)
{
    (void)lo;
    (void)hi;
    (void)ctx;
}
static void kt_md_reduce(const int64_t *lo, const int64_t *hi, void *ctx, void *acc)
{
    (void)ctx;
    *(double *)acc += (double)((hi[0] - lo[0]) * (hi[1] - lo[1]));
}

START_TEST(test_mdrange_launches_report_begin_and_end_events)
{
    init_with(KPTEST_TOOL_PATH);
    const int64_t lo[2] = {0, 0}, hi[2] = {7, 9};
    px_mdrange_policy p = px_mdrange(2, lo, hi);
    const char *spaces[] = {"serial", "threads"};
    uint64_t n = 0;
    for (int k = 0; k < 2; ++k) {
        px_space *s = px_space_by_name(spaces[k]);
        if (!s)
            continue;
        ck_assert_int_eq(px_parallel_for_md_fn(s, "md-for", p, kt_md_for, NULL), PX_OK);
        double d = 0;
        ck_assert_int_eq(
            px_parallel_reduce_md_fn(s, "md-reduce", p, kt_md_reduce, NULL, &px_sum_f64, &d),
            PX_OK);
        ck_assert_double_eq(d, 63.0);
        ++n;
    }
    px_engine *e = px_engine_default();
    px_var *v = px_var_new(e);
    px_var *w[1] = {v};
    ck_assert_int_eq(
        px_engine_push_parallel_for_md_fn(e, NULL, "md-push", p, kt_md_for, NULL, NULL, 0, w, 1),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    ck_assert_uint_ge(st->count[KPT_BEGIN_FOR], n + 1);
    ck_assert_uint_eq(st->count[KPT_BEGIN_FOR], st->count[KPT_END_FOR]);
    ck_assert_uint_ge(st->count[KPT_BEGIN_REDUCE], n);
    ck_assert_uint_eq(st->count[KPT_BEGIN_REDUCE], st->count[KPT_END_REDUCE]);
    const kpt_event *ev = last_event(st, KPT_BEGIN_REDUCE);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(ev->name, "md-reduce");
    ev = last_event(st, KPT_BEGIN_FOR);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(ev->name, "md-push");
    ck_assert_int_eq(st->errors, 0);
    finalize();
}
END_TEST

START_TEST(test_team_launches_report_begin_and_end_events)
{
    init_with(KPTEST_TOOL_PATH);
    const char *spaces[] = {"serial", "threads"};
    uint64_t fors = 0;
    for (int k = 0; k < 2; ++k) {
        px_space *s = px_space_by_name(spaces[k]);
        if (!s)
            continue;
        ck_assert_int_eq(
            px_parallel_for_team_fn(s, "team-for", px_team_policy_make(5, 0, 0), kt_team_for, NULL),
            PX_OK);
        double d = 0;
        ck_assert_int_eq(px_parallel_reduce_team_fn(s, "team-reduce", px_team_policy_make(5, 0, 0),
                                                    kt_team_reduce, NULL, &px_sum_f64, &d),
                         PX_OK);
        ck_assert_double_eq(d, 5.0);
        fors += 1;
    }
    px_engine *e = px_engine_default();
    px_var *v = px_var_new(e);
    px_var *w[1] = {v};
    ck_assert_int_eq(px_engine_push_parallel_for_team_fn(e, NULL, "team-push",
                                                         px_team_policy_make(3, 0, 0), kt_team_for,
                                                         NULL, NULL, 0, w, 1),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    ck_assert_uint_ge(st->count[KPT_BEGIN_FOR], fors + 1);
    ck_assert_uint_eq(st->count[KPT_BEGIN_FOR], st->count[KPT_END_FOR]);
    ck_assert_uint_ge(st->count[KPT_BEGIN_REDUCE], fors);
    ck_assert_uint_eq(st->count[KPT_BEGIN_REDUCE], st->count[KPT_END_REDUCE]);
    const kpt_event *ev = last_event(st, KPT_BEGIN_REDUCE);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(ev->name, "team-reduce");
    ev = last_event(st, KPT_BEGIN_FOR);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(ev->name, "team-push");
    ck_assert_int_eq(st->errors, 0);
    finalize();
}
END_TEST

START_TEST(test_launches_pair_begin_end_with_ids_labels_and_device_ids)
{
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    int tested = 0;
    for (int c = 0; c < N_HOST_SPACES; ++c) {
        px_space *s = px_space_by_name(host_spaces[c].name);
        if (!s)
            continue;
        ++tested;
        enum { N = 100 };
        double x[N];
        int64_t in[N], out[N];
        for (int i = 0; i < N; ++i)
            in[i] = 1;
        fill_args fa = {x};
        int before = st->n_events;
        ck_assert_int_eq(px_parallel_for(s, "my_fill", px_range(0, N), &kt_fill, &fa, sizeof fa),
                         PX_OK);
        ck_assert_int_eq(px_parallel_for(s, NULL, px_range(0, N), &kt_fill, &fa, sizeof fa), PX_OK);
        ck_assert_int_eq(px_parallel_for_fn(s, NULL, px_range(0, N), noop_for, NULL), PX_OK);
        double sum = 0;
        sum_args sa = {x};
        ck_assert_int_eq(
            px_parallel_reduce(s, "", px_range(0, N), &kt_sum, &sa, sizeof sa, &px_sum_f64, &sum),
            PX_OK);
        ck_assert(sum == (double)(N * (N - 1) / 2));
        scan_args ca = {in, out};
        int64_t total = 0;
        ck_assert_int_eq(px_parallel_scan(s, "my_scan", px_range(0, N), &kt_scan, &ca, sizeof ca,
                                          &px_sum_i64, &total),
                         PX_OK);
        ck_assert_int_eq(total, N);
        /* Events of this space, in order: each begin directly followed by its end. */
        static const struct {
            int begin;
            const char *label;
        } want[] = {{KPT_BEGIN_FOR, "my_fill"},
                    {KPT_BEGIN_FOR, "kt_fill"},
                    {KPT_BEGIN_FOR, "px_parallel_for_fn"},
                    {KPT_BEGIN_REDUCE, "kt_sum"},
                    {KPT_BEGIN_SCAN, "my_scan"}};
        ck_assert_int_eq(st->n_events - before, 10);
        for (int k = 0; k < 5; ++k) {
            const kpt_event *b = &st->events[before + 2 * k];
            const kpt_event *e = &st->events[before + 2 * k + 1];
            ck_assert_int_eq(b->kind, want[k].begin);
            ck_assert_int_eq(e->kind, want[k].begin + 1);
            ck_assert_str_eq(b->name, want[k].label);
            ck_assert_uint_eq(b->dev_id, host_spaces[c].dev_id);
            ck_assert_uint_eq(e->id, b->id);
        }
    }
    ck_assert_int_ge(tested, 1);
    ck_assert_int_eq(st->errors, 0);
    ck_assert_int_eq(st->open_ids, 0);
    finalize();
}
END_TEST

START_TEST(test_empty_or_null_label_never_reaches_a_tool)
{
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    px_space *s = px_space_by_name("serial");
    /* Core passes a label; the call points still guard against NULL and "". */
    uint64_t k1 = pxi_tools_begin_parallel(PX_KERNEL_FOR, NULL, s);
    pxi_tools_end_parallel(PX_KERNEL_FOR, k1);
    uint64_t k2 = pxi_tools_begin_parallel(PX_KERNEL_REDUCE, "", s);
    pxi_tools_end_parallel(PX_KERNEL_REDUCE, k2);
    uint64_t f = pxi_tools_begin_fence(NULL, s);
    pxi_tools_end_fence(f);
    ck_assert_str_eq(last_event(st, KPT_BEGIN_FOR)->name, "px_parallel_for_fn");
    ck_assert_str_eq(last_event(st, KPT_BEGIN_REDUCE)->name, "px_parallel_reduce_fn");
    ck_assert_str_eq(last_event(st, KPT_BEGIN_FENCE)->name, "px_fence");
    ck_assert_uint_eq(pxi_tools_device_id(s), 0x00000001u);
    /* NULL: all instances of the default space's device (Kokkos' global fence id). */
    ck_assert_uint_eq(pxi_tools_device_id(NULL) & 0x1ffffu, 0);
    ck_assert_int_eq(st->errors, 0);
    finalize();
}
END_TEST

/* The fake device space's device number (the backend, not core, knows its device). */
static int fake_device_three(void)
{
    return 3;
}

START_TEST(test_device_space_id_and_memory_space_name_follow_kokkos)
{
    /* A stand-in for a cuda space (no GPU needed): Kokkos type 2, the space's device (its
     * device_id op) in bits 17..23, instance 1; its memory space is named "Cuda" like Kokkos'
     * CudaSpace. */
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    static const pxi_space_ops fake_ops = {.name = "cuda",
                                           .priority = 99,
                                           .kokkos_device_type = 2,
                                           .host_accessible = 0,
                                           .device_id = fake_device_three};
    px_space fake = {.ops = &fake_ops, .available = 1, .instance_id = 0};
    ck_assert_uint_eq(pxi_tools_device_id(&fake), (2u << 24) | (3u << 17) | 1u);
    uint64_t k = pxi_tools_begin_parallel(PX_KERNEL_FOR, "on_device", &fake);
    pxi_tools_end_parallel(PX_KERNEL_FOR, k);
    ck_assert_uint_eq(last_event(st, KPT_BEGIN_FOR)->dev_id, (2u << 24) | (3u << 17) | 1u);
    static char block[16];
    pxi_tools_allocate(&fake, NULL, block, sizeof block);
    ck_assert_str_eq(last_event(st, KPT_ALLOCATE)->name, "Cuda");
    ck_assert_str_eq(last_event(st, KPT_ALLOCATE)->name2, "px_malloc");
    pxi_tools_deallocate(&fake, "px_malloc", block, 0);
    ck_assert_uint_eq(last_event(st, KPT_DEALLOCATE)->bytes, sizeof block);
    /* A second instance of the same device type gets instance 2. */
    fake.instance_id = 1;
    ck_assert_uint_eq(pxi_tools_device_id(&fake) & 0x1ffffu, 2u);
    ck_assert_int_eq(st->errors, 0);
    finalize();
}
END_TEST

START_TEST(test_nested_launches_nest_ids)
{
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    px_space *s = px_space_by_name("serial");
    uint64_t outer = pxi_tools_begin_parallel(PX_KERNEL_FOR, "outer", s);
    ck_assert_int_eq(px_parallel_for_fn(s, "inner", px_range(0, 4), noop_for, NULL), PX_OK);
    pxi_tools_end_parallel(PX_KERNEL_FOR, outer);
    const kpt_event *bo = nth_event(st, KPT_BEGIN_FOR, 0), *bi = nth_event(st, KPT_BEGIN_FOR, 1);
    const kpt_event *ei = nth_event(st, KPT_END_FOR, 0), *eo = nth_event(st, KPT_END_FOR, 1);
    ck_assert_str_eq(bo->name, "outer");
    ck_assert_str_eq(bi->name, "inner");
    ck_assert_uint_eq(ei->id, bi->id);
    ck_assert_uint_eq(eo->id, bo->id);
    ck_assert_int_eq(st->errors, 0);
    finalize();
}
END_TEST

START_TEST(test_fence_events_for_each_space)
{
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    for (int c = 0; c < N_HOST_SPACES; ++c) {
        px_space *s = px_space_by_name(host_spaces[c].name);
        if (!s)
            continue;
        uint64_t before = st->count[KPT_BEGIN_FENCE];
        ck_assert_int_eq(px_fence(s), PX_OK);
        ck_assert_uint_eq(st->count[KPT_BEGIN_FENCE], before + 1);
        const kpt_event *b = last_event(st, KPT_BEGIN_FENCE);
        const kpt_event *e = last_event(st, KPT_END_FENCE);
        ck_assert_str_eq(b->name, "px_fence");
        ck_assert_uint_eq(b->dev_id, host_spaces[c].dev_id);
        ck_assert_uint_eq(e->id, b->id);
    }
    /* px_fence(NULL) fences every available space. */
    uint64_t before = st->count[KPT_BEGIN_FENCE];
    ck_assert_int_eq(px_fence(NULL), PX_OK);
    ck_assert_uint_ge(st->count[KPT_BEGIN_FENCE], before + 1);
    ck_assert_uint_eq(st->count[KPT_BEGIN_FENCE], st->count[KPT_END_FENCE]);
    ck_assert_int_eq(st->errors, 0);
    finalize();
}
END_TEST

static void fence_from_kernel(int64_t b, int64_t e, void *ctx)
{
    const kpt_state *st = ctx;
    (void)e;
    if (b == 0)
        st->tpi_fence(0);
}

START_TEST(test_tool_invoked_fence_fences_every_space)
{
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    uint64_t before = st->count[KPT_BEGIN_FENCE];
    st->tpi_fence(0x00000001u);
    ck_assert_uint_gt(st->count[KPT_BEGIN_FENCE], before);
    ck_assert_uint_eq(st->count[KPT_BEGIN_FENCE], st->count[KPT_END_FENCE]);
    ck_assert_str_eq(last_event(st, KPT_BEGIN_FENCE)->name, "px_tool_invoked_fence");
    /* From inside a kernel (as the sampler tool does in its begin callbacks): the running
     * space is skipped, no EDEADLK error. */
    px_test_log_capture();
    for (int c = 0; c < N_HOST_SPACES; ++c) {
        px_space *s = px_space_by_name(host_spaces[c].name);
        if (s)
            ck_assert_int_eq(px_parallel_for_fn(s, "fencing_kernel", px_range(0, 8),
                                                fence_from_kernel, (void *)st),
                             PX_OK);
    }
    ck_assert_msg(!px_test_log_contains("inside a kernel"), "log: %s", px_test_log_text());
    ck_assert_uint_eq(st->count[KPT_BEGIN_FENCE], st->count[KPT_END_FENCE]);
    ck_assert_int_eq(st->errors, 0);
    finalize();
}
END_TEST

START_TEST(test_malloc_free_and_deep_copy_events)
{
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    for (int c = 0; c < N_HOST_SPACES; ++c) {
        px_space *s = px_space_by_name(host_spaces[c].name);
        if (!s)
            continue;
        char *a = px_malloc(s, 128), *b = px_malloc(s, 128);
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        const kpt_event *al = last_event(st, KPT_ALLOCATE);
        ck_assert_str_eq(al->name, "Host");
        ck_assert_str_eq(al->name2, "px_malloc");
        ck_assert_ptr_eq(al->ptr, b);
        ck_assert_uint_eq(al->bytes, 128);
        memset(b, 7, 128);
        ck_assert_int_eq(px_deep_copy(s, a, s, b, 64), PX_OK);
        const kpt_event *dc = last_event(st, KPT_BEGIN_DEEP_COPY);
        ck_assert_str_eq(dc->name, "Host");
        ck_assert_str_eq(dc->name3, "Host");
        ck_assert_ptr_eq(dc->ptr, a);
        ck_assert_uint_eq(dc->id, (uint64_t)(uintptr_t)b);
        ck_assert_uint_eq(dc->bytes, 64);
        ck_assert_uint_eq(st->count[KPT_BEGIN_DEEP_COPY], st->count[KPT_END_DEEP_COPY]);
        ck_assert_int_eq(px_free(s, a), PX_OK);
        ck_assert_ptr_eq(last_event(st, KPT_DEALLOCATE)->ptr, a);
        ck_assert_uint_eq(last_event(st, KPT_DEALLOCATE)->bytes, 128);
        ck_assert_int_eq(px_free(s, b), PX_OK);
        ck_assert_str_eq(last_event(st, KPT_DEALLOCATE)->name, "Host");
    }
    ck_assert_uint_eq(st->count[KPT_ALLOCATE], st->count[KPT_DEALLOCATE]);
    finalize();
}
END_TEST

START_TEST(test_deallocate_reports_the_allocated_size)
{
    /* Memory tools subtract the size deallocate_data reports; px_free does not know it, so
     * parex remembers it. Many blocks, freed in a scrambled order, exercise that table. */
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    px_space *s = px_space_by_name("serial");
    enum { N = 1500 };
    static void *p[N];
    for (int i = 0; i < N; ++i) {
        p[i] = px_malloc(s, (size_t)(i + 1));
        ck_assert_ptr_nonnull(p[i]);
    }
    for (int k = 0; k < N; ++k) {
        int i = (int)(((long)k * 7919) % N); /* 7919 is prime and coprime with N */
        ck_assert_int_eq(px_free(s, p[i]), PX_OK);
        const kpt_event *e = last_event(st, KPT_DEALLOCATE);
        ck_assert_ptr_eq(e->ptr, p[i]);
        ck_assert_uint_eq(e->bytes, (uint64_t)(i + 1));
    }
    finalize();
}
END_TEST

/* ---- regions, sections, events, metadata ------------------------------------------------ */

START_TEST(test_regions_nest_and_default_their_name)
{
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    px_profile_push_region("outer");
    px_profile_push_region("inner");
    px_profile_push_region(NULL);
    px_profile_pop_region();
    px_profile_pop_region();
    px_profile_pop_region();
    ck_assert_int_eq(st->max_region_depth, 3);
    ck_assert_int_eq(st->region_depth, 0);
    ck_assert_str_eq(nth_event(st, KPT_PUSH_REGION, 0)->name, "outer");
    ck_assert_str_eq(nth_event(st, KPT_PUSH_REGION, 1)->name, "inner");
    ck_assert_str_eq(nth_event(st, KPT_PUSH_REGION, 2)->name, "px_unnamed_region");
    ck_assert_uint_eq(st->count[KPT_POP_REGION], 3);
    ck_assert_int_eq(st->errors, 0);
    finalize();
}
END_TEST

START_TEST(test_sections_map_to_tool_ids)
{
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    uint32_t a, b;
    ck_assert_int_eq(px_profile_create_section("phase_a", &a), PX_OK);
    ck_assert_int_eq(px_profile_create_section("phase_b", &b), PX_OK);
    ck_assert_uint_ne(a, b);
    uint64_t tool_b = nth_event(st, KPT_CREATE_SECTION, 1)->id;
    ck_assert_str_eq(nth_event(st, KPT_CREATE_SECTION, 1)->name, "phase_b");
    ck_assert_int_eq(px_profile_start_section(b), PX_OK);
    ck_assert_int_eq(px_profile_stop_section(b), PX_OK);
    ck_assert_uint_eq(last_event(st, KPT_START_SECTION)->id, tool_b);
    ck_assert_uint_eq(last_event(st, KPT_STOP_SECTION)->id, tool_b);
    ck_assert_int_eq(px_profile_destroy_section(b), PX_OK);
    ck_assert_uint_eq(last_event(st, KPT_DESTROY_SECTION)->id, tool_b);
    ck_assert_int_eq(px_profile_stop_section(b), PX_EINVAL);
    ck_assert_int_eq(px_profile_destroy_section(b), PX_EINVAL);
    ck_assert_int_eq(px_profile_start_section(12345), PX_EINVAL);
    /* A destroyed slot is reused. */
    uint32_t c;
    ck_assert_int_eq(px_profile_create_section("phase_c", &c), PX_OK);
    ck_assert_uint_eq(c, b);
    ck_assert_int_eq(px_profile_destroy_section(a), PX_OK);
    ck_assert_int_eq(px_profile_destroy_section(c), PX_OK);
    finalize();
}
END_TEST

START_TEST(test_section_bad_arguments)
{
    uint32_t id;
    ck_assert_int_eq(px_profile_create_section("s", &id), PX_ENOTINIT);
    ck_assert_int_eq(px_profile_start_section(0), PX_ENOTINIT);
    ck_assert_int_eq(px_profile_stop_section(0), PX_ENOTINIT);
    ck_assert_int_eq(px_profile_destroy_section(0), PX_ENOTINIT);
    init_with(KPTEST_TOOL_PATH);
    ck_assert_int_eq(px_profile_create_section(NULL, &id), PX_EFAULT);
    ck_assert_int_eq(px_profile_create_section("s", NULL), PX_EFAULT);
    ck_assert_int_eq(px_profile_create_section("", &id), PX_EINVAL);
    ck_assert_int_eq(px_profile_start_section(0), PX_EINVAL);
    pxi_alloc_fail_at(1);
    int rc = px_profile_create_section("s", &id);
    pxi_alloc_fail_at(0);
    ck_assert_int_eq(rc, PX_ENOMEM);
    ck_assert_int_eq(px_profile_create_section("s", &id), PX_OK);
    finalize();
}
END_TEST

/* Creating a section takes constant time whatever the number of live sections (a scan for a
 * free slot made 200,000 sections take 10 s). The tcase's 2 s timeout catches a quadratic
 * regression; ids stay unique and a destroyed id is handed out again before a new one. */
/* 10^6 sections: O(1) creation takes well under a second; the quadratic slot scan this replaced
 * took 9.8 s for 200,000, so about 4 minutes here, far past the case's 60 s timeout (which also
 * covers px_initialize, seconds with a GPU's cuda space). */
enum { MANY_SECTIONS = 1000000 };

START_TEST(test_many_sections_are_created_in_constant_time_and_ids_reused)
{
    init_with(NULL);
    uint32_t *ids = malloc(MANY_SECTIONS * sizeof *ids);
    unsigned char *seen = calloc(MANY_SECTIONS, 1);
    ck_assert_ptr_nonnull(ids);
    ck_assert_ptr_nonnull(seen);
    /* Counted, then asserted once: every ck_assert records a checkpoint, which would cost
     * more than the calls under test. */
    long failed = 0, out_of_range = 0, repeated = 0;
    for (uint32_t i = 0; i < MANY_SECTIONS; ++i) {
        failed += px_profile_create_section("many", &ids[i]) != PX_OK;
        if (ids[i] >= MANY_SECTIONS) /* dense: no id skipped */
            ++out_of_range;
        else
            repeated += seen[ids[i]]++ != 0; /* unique */
    }
    ck_assert_int_eq(failed + out_of_range + repeated, 0);
    /* Destroy every other section; new ones get exactly those ids back. */
    for (uint32_t i = 0; i < MANY_SECTIONS; i += 2) {
        failed += px_profile_destroy_section(ids[i]) != PX_OK;
        seen[ids[i]] = 0;
    }
    for (uint32_t i = 0; i < MANY_SECTIONS; i += 2) {
        failed += px_profile_create_section("again", &ids[i]) != PX_OK;
        if (ids[i] >= MANY_SECTIONS)
            ++out_of_range;
        else
            repeated += seen[ids[i]]++ != 0;
    }
    ck_assert_int_eq(failed + out_of_range + repeated, 0);
    for (uint32_t i = 0; i < MANY_SECTIONS; ++i)
        failed += px_profile_destroy_section(ids[i]) != PX_OK;
    ck_assert_int_eq(failed, 0);
    ck_assert_int_eq(px_profile_start_section(ids[0]), PX_EINVAL);
    free(seen);
    free(ids);
    finalize();
}
END_TEST

START_TEST(test_events_and_metadata_reach_the_tool)
{
    ck_assert_int_eq(px_profile_declare_metadata("k", "v"), PX_ENOTINIT);
    ck_assert_int_eq(px_profile_mark_event("before init"), PX_OK);
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    ck_assert_ptr_nonnull(metadata(st, "parex_version"));
    ck_assert_str_eq(metadata(st, "parex_version")->name2, PX_VERSION_STRING);
    ck_assert_ptr_nonnull(metadata(st, "parex_default_space"));
    ck_assert_str_eq(metadata(st, "parex_serial_concurrency")->name2, "1");
    ck_assert_int_eq(px_profile_declare_metadata("input", "matrix.mtx"), PX_OK);
    ck_assert_str_eq(metadata(st, "input")->name2, "matrix.mtx");
    ck_assert_int_eq(px_profile_declare_metadata(NULL, "v"), PX_EFAULT);
    ck_assert_int_eq(px_profile_declare_metadata("k", NULL), PX_EFAULT);
    ck_assert_int_eq(px_profile_mark_event("checkpoint"), PX_OK);
    ck_assert_str_eq(last_event(st, KPT_PROFILE_EVENT)->name, "checkpoint");
    ck_assert_int_eq(px_profile_mark_event(NULL), PX_EFAULT);
    finalize();
}
END_TEST

#ifdef PX_TEST_ENGINE_REGIONS
/* Ops that overlap on purpose, and end in the order they started (which breaks LIFO for
 * regions pushed per op on workers): op 2k waits (up to 200 ms) until op 2k+1 has started,
 * and op 2k+1 until op 2k has finished. */
static atomic_int ops_started, ops_finished, ops_overlapped;
static void wait_until(atomic_int *counter, int goal)
{
    for (int k = 0; k < 2000 && atomic_load(counter) < goal; ++k) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}
static int engine_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    int t = atomic_fetch_add(&ops_started, 1);
    if (t % 2 == 0) {
        wait_until(&ops_started, t + 2);
        if (atomic_load(&ops_started) >= t + 2)
            atomic_store(&ops_overlapped, 1);
    } else {
        wait_until(&ops_finished, t / 2 + 1);
    }
    int rcode =
        px_parallel_for_fn(px_space_by_name("serial"), "inside_op", px_range(0, 4), noop_for, arg);
    if (t % 2 == 0)
        atomic_fetch_add(&ops_finished, 1);
    return rcode;
}
static void on_pusher_op(const px_run_context *rc, px_on_complete *done, void *arg)
{
    (void)rc;
    (void)arg;
    px_on_complete_call(done, PX_OK);
}

/* Tools keep one region stack per process; engine workers run ops at the same time. Worker ops
 * must come as sections (which may overlap), so the recording tool's stack sees every pop on
 * the thread that pushed (LIFO per process), and an op its pusher runs is a region there. */
START_TEST(test_engine_ops_on_workers_are_sections_and_regions_stay_lifo)
{
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 3);
    ck_assert_ptr_nonnull(e);
    px_var *v[8];
    for (int i = 0; i < 8; ++i)
        ck_assert_ptr_nonnull(v[i] = px_var_new(e));
    px_profile_push_region("main_region");
    for (int i = 0; i < 24; ++i)
        ck_assert_int_eq(
            px_engine_push(
                e, &(px_op){.fn = engine_op, .writes = PX_VARS(v[i % 8]), .name = "tools_test_op"}),
            PX_OK);
    /* Ready at push and PX_FN_ASYNC: runs on this thread, inside the push. */
    ck_assert_int_eq(
        px_engine_push(
            e, &(px_op){.async_fn = on_pusher_op, .property = PX_FN_ASYNC, .name = "on_pusher_op"}),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    px_profile_pop_region();
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);

    ck_assert_msg(st->errors == 0, "tool saw %d errors, first: %s", st->errors, st->first_error);
    ck_assert_int_eq(st->cross_thread_pops, 0);
    ck_assert_int_eq(st->section_errors, 0);
    int op_regions = 0, pusher_regions = 0, op_sections = 0;
    for (int i = 0; i < st->n_events; ++i) {
        const kpt_event *ev = &st->events[i];
        op_regions += ev->kind == KPT_PUSH_REGION && strcmp(ev->name, "tools_test_op") == 0;
        pusher_regions += ev->kind == KPT_PUSH_REGION && strcmp(ev->name, "on_pusher_op") == 0;
        op_sections += ev->kind == KPT_CREATE_SECTION && strcmp(ev->name, "tools_test_op") == 0;
    }
    /* Every op once: a section from a worker, or a region when the pusher ran it itself
     * (the work-first throttle, engine.h), which the LIFO check above covers. */
    ck_assert_int_eq(op_regions + op_sections, 24);
    ck_assert_int_gt(op_sections, 0);
    ck_assert_int_eq(pusher_regions, 1);
    ck_assert_uint_eq(st->count[KPT_START_SECTION], st->count[KPT_STOP_SECTION]);
    ck_assert_uint_eq(st->count[KPT_CREATE_SECTION], st->count[KPT_DESTROY_SECTION]);
    ck_assert_uint_eq(st->count[KPT_PUSH_REGION], st->count[KPT_POP_REGION]);
    ck_assert_uint_ge(st->count[KPT_BEGIN_FOR], 24);
    /* The ops did overlap (they wait for each other), and the tool saw sections overlap. */
    if (atomic_load(&ops_overlapped))
        ck_assert_int_ge(st->max_running_sections, 2);
    finalize();
}
END_TEST
#endif

/* ---- several libraries ------------------------------------------------------------------ */

START_TEST(test_two_libraries_each_get_their_own_ids)
{
    init_with(KPTEST_TOOL_PATH ";" KPTEST_PARTIAL_PATH);
    ck_assert_int_eq(px_profile_tool_count(), 2);
    const kpt_state *full = tool_state(KPTEST_TOOL_PATH);
    const kpt_state *part = tool_state(KPTEST_PARTIAL_PATH);
    ck_assert_int_eq(full->load_seq, 0);
    ck_assert_int_eq(part->load_seq, 1);
    px_space *s = px_space_by_name("serial");
    for (int i = 0; i < 3; ++i)
        ck_assert_int_eq(px_parallel_for_fn(s, "chained", px_range(0, 4), noop_for, NULL), PX_OK);
    ck_assert_uint_eq(full->count[KPT_BEGIN_FOR], 3);
    ck_assert_uint_eq(part->count[KPT_BEGIN_FOR], 3);
    for (int i = 0; i < 3; ++i) {
        ck_assert_uint_eq(nth_event(full, KPT_END_FOR, i)->id,
                          nth_event(full, KPT_BEGIN_FOR, i)->id);
        ck_assert_uint_eq(nth_event(part, KPT_END_FOR, i)->id,
                          nth_event(part, KPT_BEGIN_FOR, i)->id);
        ck_assert_uint_ge(nth_event(part, KPT_BEGIN_FOR, i)->id, 500000);
        ck_assert_uint_lt(nth_event(full, KPT_BEGIN_FOR, i)->id, 500000);
    }
    ck_assert_int_eq(full->errors, 0);
    ck_assert_int_eq(part->errors, 0);
    finalize();
}
END_TEST

START_TEST(test_library_listed_twice_is_loaded_once)
{
    setenv("PX_LOG_LEVEL", "warn", 1);
    px_test_log_capture();
    init_with(KPTEST_TOOL_PATH ";" KPTEST_TOOL_PATH);
    ck_assert_msg(px_test_log_contains("listed twice"), "log: %s", px_test_log_text());
    ck_assert_int_eq(px_profile_tool_count(), 1);
    ck_assert_int_eq(px_parallel_for_fn(NULL, "once", px_range(0, 4), noop_for, NULL), PX_OK);
    ck_assert_uint_eq(tool_state(KPTEST_TOOL_PATH)->count[KPT_BEGIN_FOR], 1);
    ck_assert_int_eq(tool_state(KPTEST_TOOL_PATH)->init_calls, 1);
    finalize();
}
END_TEST

START_TEST(test_nested_launches_with_two_libraries_and_the_timer)
{
    setenv("PX_KERNEL_TIMER", "1", 1);
    init_with(KPTEST_TOOL_PATH ";" KPTEST_PARTIAL_PATH);
    const kpt_state *full = tool_state(KPTEST_TOOL_PATH);
    const kpt_state *part = tool_state(KPTEST_PARTIAL_PATH);
    px_space *s = px_space_by_name("serial");
    uint64_t outer = pxi_tools_begin_parallel(PX_KERNEL_SCAN, "outer", s);
    ck_assert_int_eq(px_parallel_for_fn(s, "inner", px_range(0, 4), noop_for, NULL), PX_OK);
    pxi_tools_end_parallel(PX_KERNEL_SCAN, outer);
    ck_assert_uint_eq(nth_event(full, KPT_END_FOR, 0)->id, nth_event(full, KPT_BEGIN_FOR, 0)->id);
    ck_assert_uint_eq(nth_event(full, KPT_END_SCAN, 0)->id, nth_event(full, KPT_BEGIN_SCAN, 0)->id);
    ck_assert_uint_eq(nth_event(part, KPT_END_SCAN, 0)->id, nth_event(part, KPT_BEGIN_SCAN, 0)->id);
    ck_assert_int_eq(full->errors, 0);
    ck_assert_int_eq(part->errors, 0);
    char *out = capture_stdout(finalize_quietly);
    unsigned long long calls;
    double total, mean, max;
    ck_assert_msg(timer_row(out, "scan  ", "outer", &calls, &total, &mean, &max), "output: %s",
                  out);
    ck_assert_msg(timer_row(out, "for   ", "inner", &calls, &total, &mean, &max), "output: %s",
                  out);
    free(out);
}
END_TEST

#ifdef KPTEST_KOKKOS_HEADER_TOOL_PATH
/* Mirrors kph_state in tests/tools/kokkos_header_tool.c. */
typedef struct kph_state {
    uint64_t init, finalize, begin_for, end_for, begin_reduce, end_reduce, begin_scan, end_scan;
    uint64_t begin_fence, end_fence, push, pop, alloc, dealloc, begin_copy, end_copy;
    uint64_t last_version;
    uint32_t last_dev_id;
    uint64_t last_alloc_bytes, last_dealloc_bytes, copy_bytes;
    char last_name[64], last_space[64], copy_src_space[64];
    int settings_seen, tpi_seen, tpi_fence_set;
} kph_state;

START_TEST(test_tool_built_against_kokkos_header_sees_every_event)
{
    init_with(KPTEST_KOKKOS_HEADER_TOOL_PATH);
    void *h = dlopen(KPTEST_KOKKOS_HEADER_TOOL_PATH, RTLD_NOW | RTLD_NOLOAD);
    ck_assert_ptr_nonnull(h);
    void *sym = dlsym(h, "kph_state_get");
    ck_assert_ptr_nonnull(sym);
    const kph_state *(*get)(void);
    memcpy(&get, &sym, sizeof get);
    const kph_state *st = get();
    dlclose(h);
    ck_assert_uint_eq(st->init, 1);
    ck_assert_uint_eq(st->last_version, 20240906u);
    ck_assert_int_eq(st->settings_seen, 1);
    ck_assert_int_eq(st->tpi_seen, 1);
    ck_assert_int_eq(st->tpi_fence_set, 1);
    px_space *s = px_space_by_name("serial");
    enum { N = 32 };
    double x[N];
    fill_args fa = {x};
    ck_assert_int_eq(px_parallel_for(s, NULL, px_range(0, N), &kt_fill, &fa, sizeof fa), PX_OK);
    ck_assert_str_eq(st->last_name, "kt_fill");
    ck_assert_uint_eq(st->last_dev_id, 0x00000001u);
    double sum;
    sum_args sa = {x};
    ck_assert_int_eq(
        px_parallel_reduce(s, "r", px_range(0, N), &kt_sum, &sa, sizeof sa, &px_sum_f64, &sum),
        PX_OK);
    ck_assert_int_eq(px_fence(s), PX_OK);
    px_profile_push_region("region");
    px_profile_pop_region();
    char *a = px_malloc(s, 256), *b = px_malloc(s, 256);
    ck_assert_str_eq(st->last_space, "Host");
    ck_assert_uint_eq(st->last_alloc_bytes, 256);
    ck_assert_int_eq(px_deep_copy(s, a, s, b, 100), PX_OK);
    ck_assert_uint_eq(st->copy_bytes, 100);
    ck_assert_str_eq(st->copy_src_space, "Host");
    ck_assert_int_eq(px_free(s, a), PX_OK);
    ck_assert_uint_eq(st->last_dealloc_bytes, 256);
    ck_assert_int_eq(px_free(s, b), PX_OK);
    ck_assert_uint_eq(st->begin_for, st->end_for);
    ck_assert_uint_eq(st->begin_reduce, 1);
    ck_assert_uint_eq(st->end_reduce, 1);
    ck_assert_uint_eq(st->begin_fence, st->end_fence);
    ck_assert_uint_eq(st->push, 1);
    ck_assert_uint_eq(st->pop, 1);
    ck_assert_uint_eq(st->begin_copy, st->end_copy);
    finalize();
    ck_assert_uint_eq(st->finalize, 1);
}
END_TEST
#endif

/* ---- concurrency ------------------------------------------------------------------------ */

enum { N_LAUNCHERS = 4, N_LAUNCHES = 100 };

static void *launcher(void *arg)
{
    px_space *s = arg;
    for (int i = 0; i < N_LAUNCHES; ++i) {
        px_profile_push_region("launcher");
        if (px_parallel_for_fn(s, "concurrent", px_range(0, 64), noop_for, NULL) != PX_OK)
            return (void *)1;
        px_profile_pop_region();
    }
    return NULL;
}

static void run_concurrent_launches(void)
{
    for (int c = 0; c < N_HOST_SPACES; ++c) {
        px_space *s = px_space_by_name(host_spaces[c].name);
        if (!s)
            continue;
        pthread_t t[N_LAUNCHERS];
        for (int i = 0; i < N_LAUNCHERS; ++i)
            ck_assert_int_eq(pthread_create(&t[i], NULL, launcher, s), 0);
        for (int i = 0; i < N_LAUNCHERS; ++i) {
            void *r;
            pthread_join(t[i], &r);
            ck_assert_ptr_null(r);
        }
    }
}

START_TEST(test_concurrent_launches_are_paired_and_serialized_into_tools)
{
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    run_concurrent_launches();
    ck_assert_uint_eq(st->count[KPT_BEGIN_FOR], st->count[KPT_END_FOR]);
    ck_assert_uint_ge(st->count[KPT_BEGIN_FOR], N_LAUNCHERS * N_LAUNCHES);
    ck_assert_uint_eq(st->count[KPT_PUSH_REGION], st->count[KPT_POP_REGION]);
    ck_assert_int_eq(st->max_inside, 1);
    ck_assert_msg(st->errors == 0, "tool errors: %d, first: %s", st->errors, st->first_error);
    finalize();
}
END_TEST

/* ---- kernel timer ----------------------------------------------------------------------- */

START_TEST(test_kernel_timer_prints_table_at_finalize)
{
    setenv("PX_KERNEL_TIMER", "1", 1);
    init_with(NULL);
    ck_assert_int_ne(pxi_tools_active(), 0);
    px_space *s = px_space_by_name("serial");
    enum { N = 1000 };
    static double x[N];
    fill_args fa = {x};
    for (int i = 0; i < 5; ++i)
        ck_assert_int_eq(px_parallel_for(s, "timed_fill", px_range(0, N), &kt_fill, &fa, sizeof fa),
                         PX_OK);
    double sum;
    sum_args sa = {x};
    ck_assert_int_eq(
        px_parallel_reduce(s, NULL, px_range(0, N), &kt_sum, &sa, sizeof sa, &px_sum_f64, &sum),
        PX_OK);
    px_profile_push_region("timed_region");
    ck_assert_int_eq(px_fence(s), PX_OK);
    px_profile_pop_region();
    char *out = capture_stdout(finalize_quietly);
    ck_assert_msg(strstr(out, "parex kernel timer") != NULL, "output: %s", out);
    unsigned long long calls;
    double total, mean, max;
    ck_assert_msg(timer_row(out, "for   ", "timed_fill", &calls, &total, &mean, &max), "output: %s",
                  out);
    ck_assert_uint_eq(calls, 5);
    ck_assert(total > 0 && mean > 0 && max >= mean);
    ck_assert(max * 1e-6 <= total + 5e-7 + 1e-9); /* total printed to the us (%12.6f s) */
    ck_assert_msg(timer_row(out, "reduce", "kt_sum", &calls, &total, &mean, &max), "output: %s",
                  out);
    ck_assert_uint_eq(calls, 1);
    ck_assert_msg(timer_row(out, "region", "timed_region", &calls, &total, &mean, &max),
                  "output: %s", out);
    ck_assert_msg(timer_row(out, "fence ", "px_fence", &calls, &total, &mean, &max), "output: %s",
                  out);
    /* Sorted by total time: the first data row has the largest total. */
    free(out);
}
END_TEST

START_TEST(test_kernel_timer_with_a_tool_and_threads_counts_every_launch)
{
    setenv("PX_KERNEL_TIMER", "1", 1);
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    run_concurrent_launches();
    int spaces = 0;
    for (int c = 0; c < N_HOST_SPACES; ++c)
        spaces += px_space_by_name(host_spaces[c].name) != NULL;
    ck_assert_int_eq(st->errors, 0);
    char *out = capture_stdout(finalize_quietly);
    unsigned long long calls;
    double total, mean, max;
    ck_assert_msg(timer_row(out, "for   ", "concurrent", &calls, &total, &mean, &max), "output: %s",
                  out);
    ck_assert_uint_eq(calls, (unsigned long long)spaces * N_LAUNCHERS * N_LAUNCHES);
    ck_assert_msg(timer_row(out, "region", "launcher", &calls, &total, &mean, &max), "output: %s",
                  out);
    ck_assert_uint_eq(calls, (unsigned long long)spaces * N_LAUNCHERS * N_LAUNCHES);
    free(out);
}
END_TEST

static Suite *tools_suite(void)
{
    Suite *s = suite_create("tools");
    TCase *tc = tcase_create("events");
    tcase_add_test(tc, test_team_launches_report_begin_and_end_events);
    tcase_add_test(tc, test_mdrange_launches_report_begin_and_end_events);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_launches_pair_begin_end_with_ids_labels_and_device_ids);
    tcase_add_test(tc, test_empty_or_null_label_never_reaches_a_tool);
    tcase_add_test(tc, test_nested_launches_nest_ids);
    tcase_add_test(tc, test_device_space_id_and_memory_space_name_follow_kokkos);
    tcase_add_test(tc, test_fence_events_for_each_space);
    tcase_add_test(tc, test_tool_invoked_fence_fences_every_space);
    tcase_add_test(tc, test_malloc_free_and_deep_copy_events);
    tcase_add_test(tc, test_deallocate_reports_the_allocated_size);
    tcase_add_test(tc, test_regions_nest_and_default_their_name);
    tcase_add_test(tc, test_sections_map_to_tool_ids);
    tcase_add_test(tc, test_section_bad_arguments);
    tcase_add_test(tc, test_events_and_metadata_reach_the_tool);
    tcase_add_test(tc, test_two_libraries_each_get_their_own_ids);
    tcase_add_test(tc, test_library_listed_twice_is_loaded_once);
    tcase_add_test(tc, test_nested_launches_with_two_libraries_and_the_timer);
#ifdef KPTEST_KOKKOS_HEADER_TOOL_PATH
    tcase_add_test(tc, test_tool_built_against_kokkos_header_sees_every_event);
#endif
    suite_add_tcase(s, tc);

    tc = tcase_create("concurrency");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_concurrent_launches_are_paired_and_serialized_into_tools);
    tcase_add_test(tc, test_kernel_timer_with_a_tool_and_threads_counts_every_launch);
    suite_add_tcase(s, tc);

#ifdef PX_TEST_ENGINE_REGIONS
    tc = tcase_create("engine");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_engine_ops_on_workers_are_sections_and_regions_stay_lifo);
    suite_add_tcase(s, tc);
#endif

    tc = tcase_create("scale");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_many_sections_are_created_in_constant_time_and_ids_reused);
    suite_add_tcase(s, tc);

    tc = tcase_create("kernel_timer");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_kernel_timer_prints_table_at_finalize);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(tools_suite());
}
