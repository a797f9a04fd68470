/* tests/check_view.c - views: allocation (zeroed, every rank, both layouts, zero extents),
 * bad arguments, allocation failure, mirrors, deep copies between layouts, strides and spaces,
 * subviews, and PX_VIEW_AT* (plain here, bounds-checked in tests/view_debug.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "px_test.h"
#include "view_debug.h"

#define LOOP_CHECK(c)                                                                              \
    do {                                                                                           \
        if (!(c))                                                                                  \
            ck_assert_msg(0, "%s", #c);                                                            \
    } while (0)

static px_space *serial(void)
{
    px_space *s = px_space_by_name("serial");
    ck_assert_ptr_nonnull(s);
    return s;
}

static px_space *threads(void)
{
    px_space *s = px_space_by_name("threads");
    ck_assert_ptr_nonnull(s);
    return s;
}

/* Offset of element idx computed from the layout rule directly (not from v's strides). */
static int64_t layout_offset(const int64_t *ext, int rank, px_layout l, const int64_t *idx)
{
    int64_t off = 0, m = 1;
    for (int i = 0; i < rank; ++i) {
        int d = (l == PX_LAYOUT_RIGHT) ? rank - 1 - i : i;
        off += idx[d] * m;
        m *= ext[d] > 0 ? ext[d] : 1;
    }
    return off;
}

/* Value stored at a multi-index in the copy tests: distinct for every element. */
static double tag(const int64_t *idx, int rank)
{
    double t = 1.0;
    for (int d = 0; d < rank; ++d)
        t = t * 37.0 + (double)idx[d];
    return t;
}

/* Visit every index of a shape: returns 0 after the last. */
static int next_index(int64_t *idx, const int64_t *ext, int rank)
{
    for (int d = rank - 1; d >= 0; --d) {
        if (++idx[d] < ext[d])
            return 1;
        idx[d] = 0;
    }
    return 0;
}

static double *elem(const px_view *v, const int64_t *idx)
{
    int64_t off = 0;
    for (int d = 0; d < v->rank; ++d)
        off += idx[d] * v->stride[d];
    return (double *)v->data + off;
}

static void fill_tags(px_view *v)
{
    int64_t idx[PX_MAX_RANK] = {0};
    if (px_view_size(v) == 0)
        return;
    do
        *elem(v, idx) = tag(idx, v->rank);
    while (next_index(idx, v->extent, v->rank));
}

static int check_tags(const px_view *v, const int64_t *shift)
{
    int64_t idx[PX_MAX_RANK] = {0}, at[PX_MAX_RANK] = {0};
    if (px_view_size(v) == 0)
        return 1;
    do {
        for (int d = 0; d < v->rank; ++d)
            at[d] = idx[d] + (shift ? shift[d] : 0);
        if (*elem(v, idx) != tag(at, v->rank))
            return 0;
    } while (next_index(idx, v->extent, v->rank));
    return 1;
}

/* --- alloc / free --------------------------------------------------------------------------- */

START_TEST(test_view_alloc_strides_follow_layout_every_rank)
{
    const int64_t ext[6] = {3, 4, 2, 5, 1, 3};
    for (int l = 0; l < 2; ++l)
        for (int r = 0; r <= 6; ++r) {
            px_view v;
            px_layout layout = l ? PX_LAYOUT_LEFT : PX_LAYOUT_RIGHT;
            LOOP_CHECK(px_view_alloc(&v, serial(), "shape", sizeof(double), layout, r, ext) ==
                       PX_OK);
            LOOP_CHECK(v.rank == r && v.layout == layout && v.owner == 1);
            LOOP_CHECK(v.elem_size == sizeof(double) && v.space == serial());
            LOOP_CHECK(strcmp(v.label, "shape") == 0);
            int64_t n = 1;
            for (int d = 0; d < r; ++d) {
                LOOP_CHECK(v.extent[d] == ext[d]);
                n *= ext[d];
                int64_t unit[PX_MAX_RANK] = {0};
                unit[d] = 1;
                LOOP_CHECK(v.stride[d] == layout_offset(ext, r, layout, unit));
            }
            LOOP_CHECK(px_view_size(&v) == n);
            if (r > 0)
                LOOP_CHECK(v.stride[layout == PX_LAYOUT_RIGHT ? r - 1 : 0] == 1);
            LOOP_CHECK((uintptr_t)v.data % PX_MALLOC_ALIGNMENT == 0);
            LOOP_CHECK(px_view_free(&v) == PX_OK);
            LOOP_CHECK(v.data == NULL && v.owner == 0 && v.label == NULL);
        }
}
END_TEST

START_TEST(test_view_alloc_copies_label_and_defaults_it)
{
    char label[16] = "temp";
    px_view v;
    ck_assert_int_eq(px_view_alloc(&v, serial(), label, 4, PX_LAYOUT_RIGHT, 1, (int64_t[]){3}),
                     PX_OK);
    strcpy(label, "changed");
    ck_assert_str_eq(v.label, "temp");
    ck_assert_int_eq(px_view_free(&v), PX_OK);
    ck_assert_int_eq(px_view_alloc(&v, NULL, NULL, 4, PX_LAYOUT_RIGHT, 1, (int64_t[]){3}), PX_OK);
    ck_assert_str_eq(v.label, "px_view");
    ck_assert_ptr_eq(v.space, px_default_space());
    ck_assert_int_eq(px_view_free(&v), PX_OK);
}
END_TEST

/* Dirty memory, free it, allocate again (the allocator tends to hand it back): zeros, on both
 * the calling-thread path (small) and the parallel first-touch path (large). */
START_TEST(test_view_alloc_is_zeroed_small_and_large)
{
    const int64_t sizes[] = {5, 1000, 300000};
    px_space *sp[2] = {serial(), threads()};
    for (int si = 0; si < 2; ++si)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
            px_view v;
            int64_t ext[2] = {sizes[k], 3};
            ck_assert_int_eq(
                px_view_alloc(&v, sp[si], "dirty", sizeof(double), PX_LAYOUT_LEFT, 2, ext), PX_OK);
            memset(v.data, 0xab, (size_t)px_view_size(&v) * sizeof(double));
            ck_assert_int_eq(px_view_free(&v), PX_OK);
            ck_assert_int_eq(
                px_view_alloc(&v, sp[si], "clean", sizeof(double), PX_LAYOUT_LEFT, 2, ext), PX_OK);
            const unsigned char *b = v.data;
            size_t bytes = (size_t)px_view_size(&v) * sizeof(double);
            for (size_t i = 0; i < bytes; ++i)
                LOOP_CHECK(b[i] == 0);
            ck_assert_int_eq(px_view_free(&v), PX_OK);
        }
}
END_TEST

START_TEST(test_view_rank0_holds_one_element)
{
    px_view v;
    ck_assert_int_eq(
        px_view_alloc(&v, threads(), "scalar", sizeof(double), PX_LAYOUT_RIGHT, 0, NULL), PX_OK);
    ck_assert_int_eq(px_view_size(&v), 1);
    ck_assert(*(double *)v.data == 0.0);
    *(double *)v.data = 4.5;
    px_view h;
    ck_assert_int_eq(px_view_alloc(&h, serial(), "h", sizeof(double), PX_LAYOUT_LEFT, 0, NULL),
                     PX_OK);
    ck_assert_int_eq(px_view_deep_copy(&h, &v), PX_OK);
    ck_assert(*(double *)h.data == 4.5);
    px_view s;
    ck_assert_int_eq(px_view_subview(&s, &v, NULL, NULL), PX_OK);
    ck_assert_ptr_eq(s.data, v.data);
    ck_assert_int_eq(px_view_free(&s), PX_OK);
    ck_assert_int_eq(px_view_free(&h), PX_OK);
    ck_assert_int_eq(px_view_free(&v), PX_OK);
}
END_TEST

START_TEST(test_view_zero_extents_are_allowed)
{
    int64_t ext[3] = {4, 0, 3};
    for (int l = 0; l < 2; ++l) {
        px_view v, w, s;
        px_layout layout = l ? PX_LAYOUT_LEFT : PX_LAYOUT_RIGHT;
        ck_assert_int_eq(px_view_alloc(&v, threads(), "empty", 8, layout, 3, ext), PX_OK);
        ck_assert_int_eq(px_view_size(&v), 0);
        ck_assert_ptr_nonnull(v.data);
        for (int d = 0; d < 3; ++d)
            ck_assert_int_ge(v.stride[d], 1);
        ck_assert_int_eq(px_view_alloc(&w, serial(), "empty2", 8, PX_LAYOUT_RIGHT, 3, ext), PX_OK);
        ck_assert_int_eq(px_view_deep_copy(&w, &v), PX_OK);
        ck_assert_int_eq(px_view_subview(&s, &v, NULL, NULL), PX_OK);
        ck_assert_int_eq(px_view_size(&s), 0);
        ck_assert_int_eq(px_view_free(&w), PX_OK);
        ck_assert_int_eq(px_view_free(&v), PX_OK);
    }
}
END_TEST

START_TEST(test_view_alloc_bad_arguments)
{
    px_test_log_capture();
    px_view v;
    int64_t ext[7] = {2, 2, 2, 2, 2, 2, 2};
    ck_assert_int_eq(px_view_alloc(NULL, serial(), "x", 8, PX_LAYOUT_RIGHT, 1, ext), PX_EFAULT);
    ck_assert_int_eq(px_view_alloc(&v, serial(), "x", 8, PX_LAYOUT_RIGHT, 2, NULL), PX_EFAULT);
    ck_assert_ptr_null(v.data);
    ck_assert_int_eq(px_view_alloc(&v, serial(), "x", 8, PX_LAYOUT_RIGHT, 7, ext), PX_EINVAL);
    ck_assert_int_eq(px_view_alloc(&v, serial(), "x", 8, PX_LAYOUT_RIGHT, -1, ext), PX_EINVAL);
    ck_assert_int_eq(px_view_alloc(&v, serial(), "x", 0, PX_LAYOUT_RIGHT, 1, ext), PX_EINVAL);
    ck_assert_int_eq(px_view_alloc(&v, serial(), "x", 8, (px_layout)9, 1, ext), PX_EINVAL);
    px_test_log_clear();
    int64_t neg[3] = {2, -1, 2};
    ck_assert_int_eq(px_view_alloc(&v, serial(), "negx", 8, PX_LAYOUT_RIGHT, 3, neg), PX_EINVAL);
    ck_assert(px_test_log_contains("negx"));
    ck_assert(px_test_log_contains("dimension 1"));
    int64_t huge[2] = {INT64_C(1) << 31, INT64_C(1) << 31};
    ck_assert_int_eq(px_view_alloc(&v, serial(), "huge", 8, PX_LAYOUT_RIGHT, 2, huge), PX_EINVAL);
    ck_assert_int_eq(px_view_free(NULL), PX_EFAULT);
    px_view cleared = {0};
    ck_assert_int_eq(px_view_free(&cleared), PX_OK);
}
END_TEST

/* Without px_initialize (no fixture in this tcase). */
START_TEST(test_view_alloc_before_initialize_is_enotinit)
{
    px_log_set_level(PX_LOG_ERROR);
    px_view v;
    ck_assert_int_eq(px_view_alloc(&v, NULL, "x", 8, PX_LAYOUT_RIGHT, 1, (int64_t[]){4}),
                     PX_ENOTINIT);
    ck_assert_ptr_null(v.data);
    ck_assert_int_eq(px_view_free(&v), PX_OK);
}
END_TEST

START_TEST(test_view_free_after_finalize_is_enotinit_then_ok)
{
    px_log_set_level(PX_LOG_ERROR);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    px_view v;
    ck_assert_int_eq(px_view_alloc(&v, NULL, "late", 8, PX_LAYOUT_RIGHT, 1, (int64_t[]){4}), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    ck_assert_int_eq(px_view_free(&v), PX_ENOTINIT);
    ck_assert_ptr_nonnull(v.data);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_view_free(&v), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* Fail the n-th internal allocation for n = 1, 2, ... until alloc succeeds: every failure is
 * PX_ENOMEM (or a failed zeroing launch's status), logged, with a cleared view and nothing
 * leaked (the ASan build's leak checker runs at each test's exit). */
START_TEST(test_view_alloc_survives_every_allocation_failure)
{
    px_test_log_capture();
    px_space *sp[2] = {serial(), threads()};
    for (int si = 0; si < 2; ++si) {
        int64_t ext[3] = {64, 64, 8}; /* 256 KiB: the parallel zeroing path */
        int n = 1, failures = 0;
        for (; n < 1000; ++n) {
            px_view v;
            px_test_log_clear();
            pxi_alloc_fail_at((uint64_t)n);
            int rc = px_view_alloc(&v, sp[si], "failing", 8, PX_LAYOUT_RIGHT, 3, ext);
            pxi_alloc_fail_at(0);
            if (rc == PX_OK) {
                ck_assert_int_eq(px_view_free(&v), PX_OK);
                break;
            }
            ++failures;
            ck_assert_msg(rc == PX_ENOMEM, "allocation %d failing gave %s", n, px_strerror(rc));
            ck_assert_ptr_null(v.data);
            ck_assert(px_test_log_contains("failing"));
        }
        ck_assert_int_ge(failures, 2); /* the label copy and the data at least */
        ck_assert_int_lt(n, 1000);
    }
}
END_TEST

/* --- mirror --------------------------------------------------------------------------------- */

START_TEST(test_view_mirror_of_host_view_shares_data)
{
    px_view v, m;
    int64_t ext[2] = {3, 4};
    ck_assert_int_eq(px_view_alloc(&v, threads(), "u", 8, PX_LAYOUT_LEFT, 2, ext), PX_OK);
    ck_assert_int_eq(px_view_mirror(&m, &v), PX_OK);
    ck_assert_ptr_eq(m.data, v.data);
    ck_assert_int_eq(m.owner, 0);
    ck_assert_int_eq(m.layout, PX_LAYOUT_LEFT);
    ck_assert_int_eq(m.stride[1], 3);
    ck_assert_str_eq(m.label, "u");
    ck_assert_int_eq(px_view_deep_copy(&m, &v), PX_OK);
    ck_assert_int_eq(px_view_free(&m), PX_OK); /* frees nothing: v stays valid */
    fill_tags(&v);
    ck_assert(check_tags(&v, NULL));
    ck_assert_int_eq(px_view_mirror(&m, NULL), PX_EFAULT);
    ck_assert_int_eq(px_view_mirror(NULL, &v), PX_EFAULT);
    px_view bad = v;
    bad.rank = 9;
    ck_assert_int_eq(px_view_mirror(&m, &bad), PX_EINVAL);
    ck_assert_int_eq(px_view_free(&v), PX_OK);
}
END_TEST

/* --- deep copy ------------------------------------------------------------------------------ */

START_TEST(test_view_deep_copy_between_layouts_and_spaces)
{
    const int64_t ext[6] = {3, 2, 4, 2, 3, 2};
    px_space *sp[2] = {serial(), threads()};
    for (int r = 1; r <= 6; ++r)
        for (int a = 0; a < 4; ++a) {
            px_view src, dst;
            px_layout ls = (a & 1) ? PX_LAYOUT_LEFT : PX_LAYOUT_RIGHT;
            px_layout ld = (a & 2) ? PX_LAYOUT_LEFT : PX_LAYOUT_RIGHT;
            LOOP_CHECK(px_view_alloc(&src, sp[a & 1], "src", 8, ls, r, ext) == PX_OK);
            LOOP_CHECK(px_view_alloc(&dst, sp[(a >> 1) & 1], "dst", 8, ld, r, ext) == PX_OK);
            fill_tags(&src);
            LOOP_CHECK(px_view_deep_copy(&dst, &src) == PX_OK);
            LOOP_CHECK(check_tags(&dst, NULL));
            LOOP_CHECK(px_view_free(&src) == PX_OK);
            LOOP_CHECK(px_view_free(&dst) == PX_OK);
        }
}
END_TEST

START_TEST(test_view_deep_copy_mismatched_shapes_is_einval)
{
    px_test_log_capture();
    px_view a, b, c, d;
    ck_assert_int_eq(px_view_alloc(&a, serial(), "a", 8, PX_LAYOUT_RIGHT, 2, (int64_t[]){3, 4}),
                     PX_OK);
    ck_assert_int_eq(px_view_alloc(&b, serial(), "b", 8, PX_LAYOUT_RIGHT, 2, (int64_t[]){4, 3}),
                     PX_OK);
    ck_assert_int_eq(px_view_alloc(&c, serial(), "c", 4, PX_LAYOUT_RIGHT, 2, (int64_t[]){3, 4}),
                     PX_OK);
    ck_assert_int_eq(px_view_alloc(&d, serial(), "d", 8, PX_LAYOUT_RIGHT, 3, (int64_t[]){3, 4, 1}),
                     PX_OK);
    ck_assert_int_eq(px_view_deep_copy(&a, &b), PX_EINVAL);
    ck_assert(px_test_log_contains("dimension 0"));
    ck_assert_int_eq(px_view_deep_copy(&a, &c), PX_EINVAL);
    ck_assert(px_test_log_contains("element size"));
    ck_assert_int_eq(px_view_deep_copy(&a, &d), PX_EINVAL);
    ck_assert(px_test_log_contains("rank"));
    ck_assert_int_eq(px_view_deep_copy(NULL, &a), PX_EFAULT);
    ck_assert_int_eq(px_view_deep_copy(&a, NULL), PX_EFAULT);
    px_view nodata = a;
    nodata.data = NULL;
    ck_assert_int_eq(px_view_deep_copy(&nodata, &a), PX_EFAULT);
    ck_assert_int_eq(px_view_free(&a), PX_OK);
    ck_assert_int_eq(px_view_free(&b), PX_OK);
    ck_assert_int_eq(px_view_free(&c), PX_OK);
    ck_assert_int_eq(px_view_free(&d), PX_OK);
}
END_TEST

/* --- subview -------------------------------------------------------------------------------- */

START_TEST(test_view_subview_box_shares_data_and_strides)
{
    int64_t ext[3] = {5, 6, 7};
    for (int l = 0; l < 2; ++l) {
        px_view v, s, ss;
        ck_assert_int_eq(
            px_view_alloc(&v, threads(), "grid", 8, l ? PX_LAYOUT_LEFT : PX_LAYOUT_RIGHT, 3, ext),
            PX_OK);
        fill_tags(&v);
        int64_t lo[3] = {1, 2, 3}, hi[3] = {4, 6, 5};
        ck_assert_int_eq(px_view_subview(&s, &v, lo, hi), PX_OK);
        ck_assert_int_eq(s.owner, 0);
        ck_assert_str_eq(s.label, "grid");
        for (int d = 0; d < 3; ++d) {
            ck_assert_int_eq(s.extent[d], hi[d] - lo[d]);
            ck_assert_int_eq(s.stride[d], v.stride[d]);
        }
        ck_assert_ptr_eq(s.data, elem(&v, lo));
        ck_assert(check_tags(&s, lo));
        /* subview of a subview: offsets add up */
        int64_t lo2[3] = {1, 0, 1}, hi2[3] = {3, 4, 2}, tot[3];
        ck_assert_int_eq(px_view_subview(&ss, &s, lo2, hi2), PX_OK);
        for (int d = 0; d < 3; ++d)
            tot[d] = lo[d] + lo2[d];
        ck_assert_ptr_eq(ss.data, elem(&v, tot));
        ck_assert(check_tags(&ss, tot));
        /* in place, NULL bounds: the whole view */
        px_view w = s;
        ck_assert_int_eq(px_view_subview(&w, &w, NULL, NULL), PX_OK);
        ck_assert_ptr_eq(w.data, s.data);
        ck_assert_int_eq(px_view_free(&ss), PX_OK);
        ck_assert_int_eq(px_view_free(&s), PX_OK);
        ck_assert_int_eq(px_view_free(&v), PX_OK);
    }
}
END_TEST

START_TEST(test_view_subview_outside_is_einval)
{
    px_test_log_capture();
    px_view v, s;
    ck_assert_int_eq(px_view_alloc(&v, serial(), "v", 8, PX_LAYOUT_RIGHT, 2, (int64_t[]){4, 4}),
                     PX_OK);
    ck_assert_int_eq(px_view_subview(&s, &v, (int64_t[]){0, 0}, (int64_t[]){4, 5}), PX_EINVAL);
    ck_assert(px_test_log_contains("dimension 1"));
    ck_assert_int_eq(px_view_subview(&s, &v, (int64_t[]){-1, 0}, (int64_t[]){2, 2}), PX_EINVAL);
    ck_assert_int_eq(px_view_subview(&s, &v, (int64_t[]){3, 0}, (int64_t[]){2, 2}), PX_EINVAL);
    ck_assert_int_eq(px_view_subview(NULL, &v, NULL, NULL), PX_EFAULT);
    ck_assert_int_eq(px_view_subview(&s, NULL, NULL, NULL), PX_EFAULT);
    /* empty boxes are fine, also at the far end */
    ck_assert_int_eq(px_view_subview(&s, &v, (int64_t[]){4, 1}, (int64_t[]){4, 3}), PX_OK);
    ck_assert_int_eq(px_view_size(&s), 0);
    /* In place on the owning view would lose the allocation: refused, v untouched. */
    void *data = v.data;
    ck_assert_int_eq(px_view_subview(&v, &v, (int64_t[]){1, 1}, (int64_t[]){3, 3}), PX_EINVAL);
    ck_assert(px_test_log_contains("allocation would be lost"));
    ck_assert_ptr_eq(v.data, data);
    ck_assert_int_eq(v.owner, 1);
    ck_assert_int_eq(px_view_free(&v), PX_OK);
}
END_TEST

/* Strided copies: subview into a contiguous view of the other layout and back. */
START_TEST(test_view_deep_copy_strided_subviews)
{
    int64_t ext[3] = {6, 5, 7};
    px_view a, b, sa, sb, c;
    ck_assert_int_eq(px_view_alloc(&a, threads(), "a", 8, PX_LAYOUT_RIGHT, 3, ext), PX_OK);
    ck_assert_int_eq(px_view_alloc(&b, serial(), "b", 8, PX_LAYOUT_LEFT, 3, ext), PX_OK);
    fill_tags(&a);
    int64_t lo[3] = {1, 1, 2}, hi[3] = {5, 4, 7};
    ck_assert_int_eq(px_view_subview(&sa, &a, lo, hi), PX_OK);
    ck_assert_int_eq(px_view_subview(&sb, &b, lo, hi), PX_OK);
    ck_assert_int_eq(px_view_deep_copy(&sb, &sa), PX_OK);
    ck_assert(check_tags(&sb, lo));
    /* outside the box b stayed zero */
    ck_assert(*elem(&b, (int64_t[]){0, 0, 0}) == 0.0);
    ck_assert(*elem(&b, (int64_t[]){5, 4, 1}) == 0.0);
    ck_assert_int_eq(px_view_alloc(&c, serial(), "c", 8, PX_LAYOUT_RIGHT, 3, sa.extent), PX_OK);
    ck_assert_int_eq(px_view_deep_copy(&c, &sb), PX_OK);
    ck_assert(check_tags(&c, lo));
    ck_assert_int_eq(px_view_free(&c), PX_OK);
    ck_assert_int_eq(px_view_free(&a), PX_OK);
    ck_assert_int_eq(px_view_free(&b), PX_OK);
}
END_TEST

/* --- element access ------------------------------------------------------------------------- */

START_TEST(test_view_at_matches_layout_offsets_every_rank)
{
    const int64_t ext[6] = {2, 3, 2, 3, 2, 3};
    for (int l = 0; l < 2; ++l)
        for (int r = 1; r <= 6; ++r) {
            px_view v;
            px_layout layout = l ? PX_LAYOUT_LEFT : PX_LAYOUT_RIGHT;
            ck_assert_int_eq(px_view_alloc(&v, serial(), "at", sizeof(double), layout, r, ext),
                             PX_OK);
            int64_t idx[6] = {0};
            do {
                double *p;
                switch (r) {
                case 1:
                    p = &PX_VIEW_AT1(v, double, idx[0]);
                    break;
                case 2:
                    p = &PX_VIEW_AT2(v, double, idx[0], idx[1]);
                    break;
                case 3:
                    p = &PX_VIEW_AT3(v, double, idx[0], idx[1], idx[2]);
                    break;
                case 4:
                    p = &PX_VIEW_AT4(v, double, idx[0], idx[1], idx[2], idx[3]);
                    break;
                case 5:
                    p = &PX_VIEW_AT5(v, double, idx[0], idx[1], idx[2], idx[3], idx[4]);
                    break;
                default:
                    p = &PX_VIEW_AT6(v, double, idx[0], idx[1], idx[2], idx[3], idx[4], idx[5]);
                }
                LOOP_CHECK(p - (double *)v.data == layout_offset(ext, r, layout, idx));
                *p = tag(idx, r);
            } while (next_index(idx, ext, r));
            LOOP_CHECK(check_tags(&v, NULL));
            ck_assert_int_eq(px_view_free(&v), PX_OK);
        }
}
END_TEST

START_TEST(test_view_mdrange_follows_layout)
{
    px_view v;
    int64_t ext[3] = {4, 5, 6};
    ck_assert_int_eq(px_view_alloc(&v, serial(), "v", 8, PX_LAYOUT_LEFT, 3, ext), PX_OK);
    px_mdrange_policy p = px_view_mdrange(&v);
    ck_assert_int_eq(p.rank, 3);
    ck_assert_int_eq(p.iterate, PX_ITERATE_LEFT);
    for (int d = 0; d < 3; ++d) {
        ck_assert_int_eq(p.lower[d], 0);
        ck_assert_int_eq(p.upper[d], ext[d]);
        ck_assert_int_eq(p.tile[d], 0);
    }
    ck_assert_int_eq(px_mdrange_validate(p), PX_OK);
    ck_assert_int_eq(px_view_free(&v), PX_OK);
    ck_assert_int_eq(px_view_alloc(&v, serial(), "v", 8, PX_LAYOUT_RIGHT, 2, ext), PX_OK);
    ck_assert_int_eq(px_view_mdrange(&v).iterate, PX_ITERATE_RIGHT);
    ck_assert_int_eq(px_view_free(&v), PX_OK);
    ck_assert_int_eq(px_view_alloc(&v, serial(), "v", 8, PX_LAYOUT_RIGHT, 1, ext), PX_OK);
    ck_assert_int_eq(px_mdrange_validate(px_view_mdrange(&v)), PX_EINVAL);
    ck_assert_int_eq(px_view_free(&v), PX_OK);
    ck_assert_int_eq(px_mdrange_validate(px_view_mdrange(NULL)), PX_EINVAL);
}
END_TEST

/* A view passed by value in kernel arguments, written in a host function kernel. */
typedef struct {
    px_view u;
    int64_t ny;
} fill_args;

static void fill_rows(int64_t b, int64_t e, void *ctx)
{
    const fill_args *a = ctx;
    for (int64_t i = b; i < e; ++i)
        for (int64_t j = 0; j < a->ny; ++j)
            PX_VIEW_AT2(a->u, double, i, j) = (double)(i * 100 + j);
}

START_TEST(test_view_at_in_kernel_on_view_by_value)
{
    px_view u;
    ck_assert_int_eq(px_view_alloc(&u, threads(), "u", 8, PX_LAYOUT_LEFT, 2, (int64_t[]){50, 7}),
                     PX_OK);
    fill_args a = {u, 7};
    ck_assert_int_eq(px_parallel_for_fn(threads(), "fill", px_range(0, 50), fill_rows, &a), PX_OK);
    for (int64_t i = 0; i < 50; ++i)
        for (int64_t j = 0; j < 7; ++j)
            LOOP_CHECK(((double *)u.data)[i + 50 * j] == (double)(i * 100 + j));
    ck_assert_int_eq(px_view_free(&u), PX_OK);
}
END_TEST

START_TEST(test_view_debug_check_reports_out_of_bounds)
{
    px_test_log_capture();
    px_view v;
    ck_assert_int_eq(px_view_alloc(&v, serial(), "checked", sizeof(double), PX_LAYOUT_RIGHT, 3,
                                   (int64_t[]){2, 3, 4}),
                     PX_OK);
    int64_t before = px_view_bounds_errors();
    ck_assert_ptr_eq(view_debug_at3(&v, 1, 2, 3), (double *)v.data + 23);
    ck_assert_int_eq(px_view_bounds_errors(), before);
    double *p = view_debug_at3(&v, 1, 3, 0);
    ck_assert(p < (double *)v.data || p >= (double *)v.data + 24);
    ck_assert_int_eq(px_view_bounds_errors(), before + 1);
    ck_assert(px_test_log_contains("'checked'"));
    ck_assert(px_test_log_contains("index 3 out of bounds in dimension 1"));
    view_debug_store3(&v, -1, 0, 0, 99.0); /* goes to the scratch, not before the data */
    ck_assert_int_eq(px_view_bounds_errors(), before + 2);
    for (int i = 0; i < 24; ++i)
        ck_assert(((double *)v.data)[i] == 0.0);
    px_test_log_clear();
    (void)view_debug_at2(&v, 0, 0); /* rank 3 view, two indices */
    ck_assert(px_test_log_contains("wrong number of indices"));
    px_test_log_clear();
    (void)view_debug_at3_float(&v, 0, 0, 0); /* float on a double view */
    ck_assert(px_test_log_contains("element type"));
    ck_assert_int_eq(px_view_bounds_errors(), before + 4);
    ck_assert_int_eq(px_view_free(&v), PX_OK);
}
END_TEST

/* --- device (runs where a cuda space is available) ------------------------------------------ */

START_TEST(test_view_cuda_alloc_zeroed_mirror_and_strided_copies)
{
    px_space *cu = px_space_by_name("cuda");
    if (!cu)
        return; /* no GPU here: tests/cuda covers the device build */
    int64_t ext[3] = {9, 70, 33};
    px_view d, h, back, sub, hs;
    ck_assert_int_eq(px_view_alloc(&d, cu, "dev", 8, PX_LAYOUT_RIGHT, 3, ext), PX_OK);
    ck_assert_int_eq(px_view_mirror(&h, &d), PX_OK);
    ck_assert_int_eq(h.owner, 1);
    ck_assert(px_space_host_accessible(h.space));
    fill_tags(&h);
    ck_assert_int_eq(px_view_alloc(&back, serial(), "back", 8, PX_LAYOUT_LEFT, 3, ext), PX_OK);
    for (int64_t i = 0; i < px_view_size(&back); ++i)
        ((double *)back.data)[i] = -1.0;
    ck_assert_int_eq(px_view_deep_copy(&back, &d), PX_OK); /* device zeros */
    for (int64_t i = 0; i < px_view_size(&back); ++i)
        LOOP_CHECK(((double *)back.data)[i] == 0.0);
    ck_assert_int_eq(px_view_deep_copy(&d, &h), PX_OK);
    ck_assert_int_eq(px_view_deep_copy(&back, &d), PX_OK); /* device RIGHT -> host LEFT */
    ck_assert(check_tags(&back, NULL));
    int64_t lo[3] = {2, 5, 1}, hi[3] = {7, 60, 30};
    ck_assert_int_eq(px_view_subview(&sub, &d, lo, hi), PX_OK);
    ck_assert_int_eq(px_view_alloc(&hs, serial(), "hs", 8, PX_LAYOUT_LEFT, 3, sub.extent), PX_OK);
    ck_assert_int_eq(px_view_deep_copy(&hs, &sub), PX_OK); /* strided device -> host */
    ck_assert(check_tags(&hs, lo));
    for (int64_t i = 0; i < px_view_size(&hs); ++i)
        ((double *)hs.data)[i] = 0.0;
    ck_assert_int_eq(px_view_deep_copy(&sub, &hs), PX_OK); /* host -> strided device */
    ck_assert_int_eq(px_view_deep_copy(&back, &d), PX_OK);
    int64_t idx[3] = {0};
    do {
        int inside = 1;
        for (int k = 0; k < 3; ++k)
            inside &= idx[k] >= lo[k] && idx[k] < hi[k];
        double want = inside ? 0.0 : tag(idx, 3);
        LOOP_CHECK(*elem(&back, idx) == want);
    } while (next_index(idx, ext, 3));
    ck_assert_int_eq(px_view_free(&hs), PX_OK);
    ck_assert_int_eq(px_view_free(&back), PX_OK);
    ck_assert_int_eq(px_view_free(&h), PX_OK);
    ck_assert_int_eq(px_view_free(&d), PX_OK);
}
END_TEST

/* --- tools ---------------------------------------------------------------------------------- */

#ifdef KPTEST_TOOL_PATH
#include <dlfcn.h>

#include "kptest.h"

static const kpt_event *last_event(const kpt_state *st, int kind)
{
    for (int i = st->n_events - 1; i >= 0; --i)
        if (st->events[i].kind == kind)
            return &st->events[i];
    return NULL;
}

/* Kokkos Tools see the view's label on allocate_data / deallocate_data, and the zeroing launch
 * as a parallel_for named after it. */
START_TEST(test_view_allocations_reach_tools_with_label)
{
    px_settings set;
    px_settings_default(&set);
    set.tools_libs = KPTEST_TOOL_PATH;
    ck_assert_int_eq(px_initialize_with(&set), PX_OK);
    void *h = dlopen(KPTEST_TOOL_PATH, RTLD_NOW | RTLD_NOLOAD);
    ck_assert_ptr_nonnull(h);
    void *sym = dlsym(h, "kptest_state");
    ck_assert_ptr_nonnull(sym);
    kpt_state_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    const kpt_state *st = fn();
    dlclose(h);
    px_view v;
    int64_t ext[2] = {1000, 300};
    ck_assert_int_eq(px_view_alloc(&v, threads(), "velocity", 8, PX_LAYOUT_RIGHT, 2, ext), PX_OK);
    const kpt_event *a = last_event(st, KPT_ALLOCATE);
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(a->name2, "velocity");
    ck_assert_ptr_eq(a->ptr, v.data);
    ck_assert_uint_eq(a->bytes, 8u * 1000u * 300u);
    const kpt_event *k = last_event(st, KPT_BEGIN_FOR);
    ck_assert_ptr_nonnull(k);
    ck_assert_str_eq(k->name, "px_view_alloc(velocity)");
    void *data = v.data;
    ck_assert_int_eq(px_view_free(&v), PX_OK);
    const kpt_event *d = last_event(st, KPT_DEALLOCATE);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d->name2, "velocity");
    ck_assert_ptr_eq(d->ptr, data);
    ck_assert_uint_eq(d->bytes, 8u * 1000u * 300u);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("view");
    TCase *tc = tcase_create("views");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_add_test(tc, test_view_alloc_strides_follow_layout_every_rank);
    tcase_add_test(tc, test_view_alloc_copies_label_and_defaults_it);
    tcase_add_test(tc, test_view_alloc_is_zeroed_small_and_large);
    tcase_add_test(tc, test_view_rank0_holds_one_element);
    tcase_add_test(tc, test_view_zero_extents_are_allowed);
    tcase_add_test(tc, test_view_alloc_bad_arguments);
    tcase_add_test(tc, test_view_alloc_survives_every_allocation_failure);
    tcase_add_test(tc, test_view_mirror_of_host_view_shares_data);
    tcase_add_test(tc, test_view_deep_copy_between_layouts_and_spaces);
    tcase_add_test(tc, test_view_deep_copy_mismatched_shapes_is_einval);
    tcase_add_test(tc, test_view_subview_box_shares_data_and_strides);
    tcase_add_test(tc, test_view_subview_outside_is_einval);
    tcase_add_test(tc, test_view_deep_copy_strided_subviews);
    tcase_add_test(tc, test_view_at_matches_layout_offsets_every_rank);
    tcase_add_test(tc, test_view_mdrange_follows_layout);
    tcase_add_test(tc, test_view_at_in_kernel_on_view_by_value);
    tcase_add_test(tc, test_view_debug_check_reports_out_of_bounds);
    tcase_add_test(tc, test_view_cuda_alloc_zeroed_mirror_and_strided_copies);
    suite_add_tcase(s, tc);
    TCase *life = tcase_create("lifecycle");
    tcase_set_timeout(life, 60);
    tcase_add_test(life, test_view_alloc_before_initialize_is_enotinit);
    tcase_add_test(life, test_view_free_after_finalize_is_enotinit_then_ok);
#ifdef KPTEST_TOOL_PATH
    tcase_add_test(life, test_view_allocations_reach_tools_with_label);
#endif
    suite_add_tcase(s, life);
    return px_test_run(s);
}
