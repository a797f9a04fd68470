/*
 * bench/spmv_placement.c - does where glibc puts a CSR matrix change the SpMV's speed?
 *
 * Session 17 (bench/RESULTS.md) found parex-cg's SpMV 6-11 % slower when its copy of the
 * matrix sat in glibc's brk heap than on mmap'ed arrays holding the same bytes, and could not
 * say why. This program builds the HPCG operator (27-point stencil, N^3 rows, cg.c's CSR:
 * int64 row offsets, int32 columns, double values) three times in one process and times
 * cg_spmv_rows (the loop parex-cg and bench_cg_bsp run) on each copy, round-robin with the
 * order rotated each round:
 *
 *   heap     malloc with glibc's mmap threshold raised to its maximum (M_MMAP_THRESHOLD
 *            32 MiB): the arrays come from the brk heap, back to back, as session 17's copy;
 *   mmap     malloc with the threshold at 128 KiB: each array its own mmap;
 *   onemap   one mmap holding the arrays at the heap copy's offsets from each other (the
 *            heap's virtual layout in mmap'ed pages).
 *
 * heap against onemap separates the layout (alignment, relative offsets) from the pages
 * themselves. For each copy it also reads /proc/self/pagemap (root only; else skipped) and
 * prints how many of the matrix's virtually consecutive 4 KiB pages are physically
 * consecutive and how many distinct 2 MiB physical frames they touch, which matters when the
 * hypervisor backs the guest with huge pages (a 2-D page walk per guest page otherwise).
 *
 *   spmv_placement [N [ROUNDS [REPS]]]   (N = 48, 4-52; ROUNDS = 12, REPS = 40 SpMVs a timing)
 *
 * Prints each copy's median and minimum milliseconds per SpMV and the ratio to heap.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../examples/cg/cg_spmv_rows.h"

typedef struct {
    const char *name;
    int64_t *rp;
    int32_t *col;
    double *val, *p, *ap;
} csr;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Fill the HPCG operator on an n^3 grid into @a (arrays allocated) and p = 1. */
static void fill(csr *a, int n)
{
    const int64_t rows = (int64_t)n * n * n;
    int64_t k = 0;
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                const int64_t i = ((int64_t)z * n + y) * n + x;
                a->rp[i] = k;
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            const int zz = z + dz, yy = y + dy, xx = x + dx;
                            if (zz < 0 || zz >= n || yy < 0 || yy >= n || xx < 0 || xx >= n)
                                continue;
                            a->col[k] = (int32_t)(((int64_t)zz * n + yy) * n + xx);
                            a->val[k] = (dx | dy | dz) ? -1.0 : 26.0;
                            k++;
                        }
            }
    a->rp[rows] = k;
    for (int64_t i = 0; i < rows; i++) {
        a->p[i] = 1.0;
        a->ap[i] = 0.0;
    }
}

static int64_t nnz_of(int n)
{
    int64_t k = 0;
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                const int cz = 1 + (z > 0) + (z < n - 1), cy = 1 + (y > 0) + (y < n - 1);
                const int cx = 1 + (x > 0) + (x < n - 1);
                k += cz * cy * cx;
            }
    return k;
}

/* Physically consecutive neighbours and distinct 2 MiB frames over [p, p + bytes). */
static void pagemap(const char *what, const void *p, size_t bytes, int fd)
{
    if (fd < 0)
        return;
    const uintptr_t first = (uintptr_t)p / 4096, last = ((uintptr_t)p + bytes - 1) / 4096;
    uint64_t prev = 0, contiguous = 0, pages = 0, frames = 0, last_frame = UINT64_MAX;
    for (uintptr_t v = first; v <= last; v++) {
        uint64_t e;
        if (pread(fd, &e, sizeof e, (off_t)(v * sizeof e)) != (ssize_t)sizeof e)
            return;
        if (!(e >> 63))
            continue; /* not present */
        const uint64_t pfn = e & ((1ULL << 55) - 1);
        if (pfn == 0)
            return; /* no privilege: PFNs read as 0 */
        contiguous += pages > 0 && pfn == prev + 1;
        if (pfn / 512 != last_frame) {
            frames++;
            last_frame = pfn / 512;
        }
        prev = pfn;
        pages++;
    }
    printf("  %-7s %-4s %7llu pages, %5.1f %% physically consecutive, %5llu 2 MiB frame runs "
           "(%llu if contiguous), offset in page %4llu\n",
           "", what, (unsigned long long)pages,
           pages > 1 ? 100.0 * (double)contiguous / (double)(pages - 1) : 0.0,
           (unsigned long long)frames, (unsigned long long)((pages + 511) / 512),
           (unsigned long long)((uintptr_t)p % 4096));
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 48;
    const int rounds = argc > 2 ? atoi(argv[2]) : 12;
    const int reps = argc > 3 ? atoi(argv[3]) : 40;
    if (n < 4 || n > 400 || rounds < 1 || reps < 1) {
        fprintf(stderr, "usage: spmv_placement [N (4-52) [ROUNDS [REPS]]]\n");
        return 2;
    }
    const int64_t rows = (int64_t)n * n * n, nnz = nnz_of(n);
    const size_t b_rp = (size_t)(rows + 1) * 8, b_col = (size_t)nnz * 4, b_val = (size_t)nnz * 8;
    const size_t b_vec = (size_t)rows * 8;
    /* glibc serves a request at or above the mmap threshold (at most 32 MiB on 64-bit) by mmap
     * whatever it is set to: the heap copy needs every array below it (N <= 52) */
    if (b_val >= (size_t)32 * 1024 * 1024) {
        fprintf(stderr,
                "spmv_placement: N = %d makes a %.1f MiB value array, above glibc's "
                "largest mmap threshold (32 MiB): the heap copy would be mmap'ed; "
                "use N <= 52\n",
                n, (double)b_val / 1048576.0);
        return 2;
    }
    csr c[3] = {{"heap", 0, 0, 0, 0, 0}, {"mmap", 0, 0, 0, 0, 0}, {"onemap", 0, 0, 0, 0, 0}};

    /* heap: the brk heap, in parex-cg's order (matrix, then vectors) */
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    c[0].rp = malloc(b_rp);
    c[0].col = malloc(b_col);
    c[0].val = malloc(b_val);
    c[0].p = malloc(b_vec);
    c[0].ap = malloc(b_vec);
    /* mmap: one mapping an array */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    c[1].rp = malloc(b_rp);
    c[1].col = malloc(b_col);
    c[1].val = malloc(b_val);
    c[1].p = malloc(b_vec);
    c[1].ap = malloc(b_vec);
    /* onemap: the heap copy's layout, relative to its first array, in one mapping */
    const uintptr_t base = (uintptr_t)c[0].rp;
    uintptr_t end = base;
    const void *heap_arr[5] = {c[0].rp, c[0].col, c[0].val, c[0].p, c[0].ap};
    const size_t sizes[5] = {b_rp, b_col, b_val, b_vec, b_vec};
    for (int k = 0; k < 5; k++) {
        if (!heap_arr[k]) {
            fprintf(stderr, "spmv_placement: out of memory\n");
            return 1;
        }
        if ((uintptr_t)heap_arr[k] < base) {
            fprintf(stderr, "spmv_placement: heap arrays not in allocation order\n");
            return 1;
        }
        if ((uintptr_t)heap_arr[k] + sizes[k] > end)
            end = (uintptr_t)heap_arr[k] + sizes[k];
    }
    const size_t span = end - base + 2 * 4096;
    char *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || !c[1].rp || !c[1].col || !c[1].val || !c[1].p || !c[1].ap) {
        fprintf(stderr, "spmv_placement: out of memory\n");
        return 1;
    }
    char *origin = m + base % 4096; /* the same offset within a page as the heap's */
    c[2].rp = (int64_t *)(origin + ((uintptr_t)c[0].rp - base));
    c[2].col = (int32_t *)(origin + ((uintptr_t)c[0].col - base));
    c[2].val = (double *)(origin + ((uintptr_t)c[0].val - base));
    c[2].p = (double *)(origin + ((uintptr_t)c[0].p - base));
    c[2].ap = (double *)(origin + ((uintptr_t)c[0].ap - base));
    for (int k = 0; k < 3; k++)
        fill(&c[k], n);

    printf("spmv_placement: HPCG %d^3, %lld rows, %lld nonzeros, %.1f MiB of matrix; "
           "%d rounds of %d SpMVs\n",
           n, (long long)rows, (long long)nnz, (double)(b_rp + b_col + b_val) / 1048576.0, rounds,
           reps);
    const int fd = open("/proc/self/pagemap", O_RDONLY);
    for (int k = 0; k < 3; k++) {
        printf("  %-7s rp %p col %p val %p p %p ap %p\n", c[k].name, (void *)c[k].rp,
               (void *)c[k].col, (void *)c[k].val, (void *)c[k].p, (void *)c[k].ap);
        pagemap("col", c[k].col, b_col, fd);
        pagemap("val", c[k].val, b_val, fd);
    }
    if (fd >= 0)
        close(fd);

    double *t = calloc((size_t)rounds * 3, sizeof(double));
    double sink = 0.0;
    for (int r = 0; r < rounds; r++)
        for (int j = 0; j < 3; j++) {
            const int k = (r + j) % 3; /* rotate which copy runs first */
            const double t0 = now();
            for (int s = 0; s < reps; s++)
                sink += cg_spmv_rows(0, rows, c[k].rp, c[k].col, c[k].val, c[k].p, c[k].ap, 0.0);
            t[k * rounds + r] = (now() - t0) / reps * 1e3;
        }
    double med[3];
    for (int k = 0; k < 3; k++) {
        qsort(t + k * rounds, (size_t)rounds, sizeof(double), cmp);
        med[k] = t[k * rounds + rounds / 2];
    }
    for (int k = 0; k < 3; k++)
        printf("  %-7s median %.3f ms, min %.3f ms a SpMV; median / heap's %.3f\n", c[k].name,
               med[k], t[k * rounds], med[k] / med[0]);
    printf("  (checksum %g)\n", sink);
    free(t);
    return 0;
}
