/*
 * examples/fem/fem.c - the assembly kernels, the Dirichlet rows and the L2 error (see fem.h).
 */
#include "fem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *fem_assembly_name(fem_assembly a)
{
    switch (a) {
    case FEM_ASSEMBLY_ATOMIC:
        return "atomic";
    case FEM_ASSEMBLY_DUPLICATED:
        return "duplicated";
    case FEM_ASSEMBLY_COLORED:
        return "colored";
    case FEM_ASSEMBLY_AUTO:
        return "auto";
    }
    return "?";
}

int fem_assembly_parse(const char *s, fem_assembly *out)
{
    static const fem_assembly all[] = {FEM_ASSEMBLY_ATOMIC, FEM_ASSEMBLY_DUPLICATED,
                                       FEM_ASSEMBLY_COLORED, FEM_ASSEMBLY_AUTO};
    if (!s || !out)
        return PX_EINVAL;
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        if (strcmp(s, fem_assembly_name(all[k])) == 0) {
            *out = all[k];
            return PX_OK;
        }
    }
    return PX_EINVAL;
}

/* ---- kernels ----------------------------------------------------------------------------- */

typedef struct {
    double *x;
} zero_args;

PX_FOR(fem_zero, zero_args, i, a)
{
    a->x[i] = 0.0;
}

typedef struct {
    const double *xy;
    const int32_t *tri;
    const uint8_t *boundary;
    const int64_t *row_ptr;
    const int32_t *col;
    const int32_t *elems; /* colored: element numbers by colour */
    double *val;          /* colored: the matrix values */
    double *load;         /* colored: the load */
    px_scatter *sv;       /* scatter modes: into val */
    px_scatter *sb;       /* scatter modes: into load */
} assemble_args;

/* Element e's contributions to the rows and columns of interior nodes: through the scatters.
 * The adds sit in branches (boundary rows and columns are skipped), so the replica lookups are
 * taken once, unconditionally, at the top (px_scatter_access_of): the compiler then does them
 * once per chunk, not once per add. */
PX_FOR(fem_assemble_scatter, assemble_args, e, a)
{
    const px_scatter_access sv = px_scatter_access_of(a->sv);
    const px_scatter_access sb = px_scatter_access_of(a->sb);
    double K[9], F[3];
    const int32_t *t = a->tri + 3 * e;
    fem_element(a->xy, t, K, F);
    for (int q = 0; q < 3; q++) {
        const int32_t r = t[q];
        if (a->boundary[r])
            continue;
        px_scatter_access_add(sb, r, F[q]);
        for (int s = 0; s < 3; s++) {
            const int32_t c = t[s];
            if (!a->boundary[c])
                px_scatter_access_add(sv, fem_slot(a->row_ptr, a->col, r, c), K[3 * q + s]);
        }
    }
}

/* The same for element elems[k] of one colour: no other element of the colour touches its
 * nodes, so plain adds. */
PX_FOR(fem_assemble_colored, assemble_args, k, a)
{
    double K[9], F[3];
    const int32_t *t = a->tri + 3 * (int64_t)a->elems[k];
    fem_element(a->xy, t, K, F);
    for (int q = 0; q < 3; q++) {
        const int32_t r = t[q];
        if (a->boundary[r])
            continue;
        a->load[r] += F[q];
        for (int s = 0; s < 3; s++) {
            const int32_t c = t[s];
            if (!a->boundary[c])
                a->val[fem_slot(a->row_ptr, a->col, r, c)] += K[3 * q + s];
        }
    }
}

/* Dirichlet rows: 1 on the diagonal (the rest of the row and column stayed 0). */
PX_FOR(fem_dirichlet, assemble_args, r, a)
{
    if (a->boundary[r])
        a->val[fem_slot(a->row_ptr, a->col, (int32_t)r, (int32_t)r)] = 1.0;
}

typedef struct {
    const double *xy;
    const int32_t *tri;
    const double *u;
} l2_args;

/* The integral of (u_h - u)^2 over element e, Dunavant's 6-point degree-4 rule: barycentric
 * points (A, A, 1 - 2A) with weight WA and (B, B, 1 - 2B) with WB, each in 3 rotations. */
PX_REDUCE(fem_l2, l2_args, double, e, a, acc)
{
    const double A = 0.445948490915965, WA = 0.223381589678011;
    const double B = 0.091576213509771, WB = 0.109951743655322;
    const double pi = 3.14159265358979323846;
    const int32_t *t = a->tri + 3 * e;
    const double x0 = a->xy[2 * t[0]], y0 = a->xy[2 * t[0] + 1];
    const double x1 = a->xy[2 * t[1]], y1 = a->xy[2 * t[1] + 1];
    const double x2 = a->xy[2 * t[2]], y2 = a->xy[2 * t[2] + 1];
    const double u0 = a->u[t[0]], u1 = a->u[t[1]], u2 = a->u[t[2]];
    const double area = 0.5 * fabs((x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0));
    double s = 0.0;
    for (int g = 0; g < 6; g++) {
        const double p = g < 3 ? A : B, w = g < 3 ? WA : WB;
        const int rot = g % 3;
        /* barycentric weights of nodes 0, 1, 2 */
        const double l0 = rot == 0 ? 1.0 - 2.0 * p : p;
        const double l1 = rot == 1 ? 1.0 - 2.0 * p : p;
        const double l2 = rot == 2 ? 1.0 - 2.0 * p : p;
        const double x = l0 * x0 + l1 * x1 + l2 * x2, y = l0 * y0 + l1 * y1 + l2 * y2;
        const double d = l0 * u0 + l1 * u1 + l2 * u2 - sin(pi * x) * sin(pi * y);
        s += w * d * d;
    }
    *acc += area * s;
}

/* ---- problem ----------------------------------------------------------------------------- */

void fem_problem_free(fem_problem *p)
{
    if (!p)
        return;
    if (p->space) {
        (void)px_free(p->space, p->xy);
        (void)px_free(p->space, p->tri);
        (void)px_free(p->space, p->boundary);
        (void)px_free(p->space, p->color_elems);
        (void)px_free(p->space, p->load);
    }
    cg_matrix_free(&p->A);
    free(p->color_ptr);
    memset(p, 0, sizeof *p);
}

/* px_malloc + copy from host. */
static int upload(px_space *s, const void *src, size_t bytes, void **dst)
{
    *dst = px_malloc(s, bytes);
    if (!*dst)
        return PX_ENOMEM;
    return px_deep_copy(s, *dst, px_space_by_name("serial"), src, bytes);
}

int fem_problem_create(px_space *s, const fem_mesh *m, fem_problem *p)
{
    if (!s || !m || !p)
        return PX_EFAULT;
    memset(p, 0, sizeof *p);
    fem_pattern pat;
    fem_coloring col;
    double *zeros = NULL;
    int rc = fem_pattern_build(m, &pat);
    if (rc != PX_OK)
        return rc;
    rc = fem_coloring_build(m, &col);
    if (rc != PX_OK) {
        fem_pattern_free(&pat);
        return rc;
    }
    p->space = s;
    p->n_nodes = m->n_nodes;
    p->n_elems = m->n_elems;
    p->n_colors = col.n_colors;
    p->color_ptr = col.color_ptr; /* kept on the host */
    col.color_ptr = NULL;
    void *d;
    rc = upload(s, m->xy, (size_t)m->n_nodes * 2 * sizeof(double), &d);
    p->xy = (double *)d;
    if (rc == PX_OK) {
        rc = upload(s, m->tri, (size_t)m->n_elems * 3 * sizeof(int32_t), &d);
        p->tri = (int32_t *)d;
    }
    if (rc == PX_OK) {
        rc = upload(s, m->boundary, (size_t)m->n_nodes, &d);
        p->boundary = (uint8_t *)d;
    }
    if (rc == PX_OK) {
        rc = upload(s, col.elems, (size_t)m->n_elems * sizeof(int32_t), &d);
        p->color_elems = (int32_t *)d;
    }
    if (rc == PX_OK) {
        zeros = (double *)calloc((size_t)(pat.nnz > 0 ? pat.nnz : 1), sizeof(double));
        rc = zeros ? cg_matrix_upload(s, pat.n, pat.nnz, pat.row_ptr, pat.col, zeros, &p->A)
                   : PX_ENOMEM;
    }
    if (rc == PX_OK) {
        p->load = (double *)px_malloc(s, (size_t)m->n_nodes * sizeof(double));
        if (!p->load)
            rc = PX_ENOMEM;
    }
    if (rc == PX_OK) {
        zero_args za;
        za.x = p->load;
        rc = px_parallel_for(s, "fem_zero", px_range(0, p->n_nodes), &fem_zero, &za, sizeof za);
    }
    if (rc == PX_OK)
        rc = px_fence(s);
    free(zeros);
    fem_pattern_free(&pat);
    fem_coloring_free(&col);
    if (rc != PX_OK)
        fem_problem_free(p);
    return rc;
}

/* ---- assembly ---------------------------------------------------------------------------- */

void fem_assembler_fini(fem_assembler *as)
{
    if (!as)
        return;
    if (as->sv)
        (void)px_scatter_destroy(as->sv);
    if (as->sb)
        (void)px_scatter_destroy(as->sb);
    memset(as, 0, sizeof *as);
}

int fem_assembler_init(fem_assembler *as, fem_problem *p, fem_assembly how)
{
    if (!as || !p)
        return PX_EFAULT;
    memset(as, 0, sizeof *as);
    as->p = p;
    as->requested = how;
    as->used = how;
    px_scatter_mode m;
    switch (how) {
    case FEM_ASSEMBLY_COLORED:
        return PX_OK;
    case FEM_ASSEMBLY_ATOMIC:
        m = PX_SCATTER_ATOMIC;
        break;
    case FEM_ASSEMBLY_DUPLICATED:
        m = PX_SCATTER_DUPLICATED;
        break;
    case FEM_ASSEMBLY_AUTO:
        m = PX_SCATTER_AUTO;
        break;
    default:
        return PX_EINVAL;
    }
    int rc = px_scatter_create(&as->sv, p->space, p->A.val, p->A.nnz, m);
    if (rc == PX_OK)
        rc = px_scatter_create(&as->sb, p->space, p->load, p->n_nodes, m);
    if (rc != PX_OK) {
        fem_assembler_fini(as);
        return rc;
    }
    /* AUTO decides per scatter; the load is the smaller, so the values' choice is the binding
     * one. Report the values' mode. */
    as->used = px_scatter_get_mode(as->sv) == PX_SCATTER_DUPLICATED ? FEM_ASSEMBLY_DUPLICATED
                                                                    : FEM_ASSEMBLY_ATOMIC;
    return PX_OK;
}

int fem_assemble(fem_assembler *as)
{
    if (!as || !as->p)
        return PX_EFAULT;
    fem_problem *p = as->p;
    px_space *s = p->space;
    zero_args za;
    za.x = p->A.val;
    int rc = px_parallel_for(s, "fem_zero", px_range(0, p->A.nnz), &fem_zero, &za, sizeof za);
    za.x = p->load;
    if (rc == PX_OK)
        rc = px_parallel_for(s, "fem_zero", px_range(0, p->n_nodes), &fem_zero, &za, sizeof za);
    if (rc != PX_OK)
        return rc;
    assemble_args aa;
    aa.xy = p->xy;
    aa.tri = p->tri;
    aa.boundary = p->boundary;
    aa.row_ptr = p->A.row_ptr;
    aa.col = p->A.col;
    aa.elems = p->color_elems;
    aa.val = p->A.val;
    aa.load = p->load;
    aa.sv = as->sv;
    aa.sb = as->sb;
    if (as->used == FEM_ASSEMBLY_COLORED) {
        for (int c = 0; c < p->n_colors && rc == PX_OK; c++)
            rc = px_parallel_for(s, "fem_assemble_colored",
                                 px_range(p->color_ptr[c], p->color_ptr[c + 1]),
                                 &fem_assemble_colored, &aa, sizeof aa);
    } else {
        rc = px_parallel_for(s, "fem_assemble_scatter", px_range(0, p->n_elems),
                             &fem_assemble_scatter, &aa, sizeof aa);
        if (rc == PX_OK)
            rc = px_scatter_contribute(as->sv);
        if (rc == PX_OK)
            rc = px_scatter_contribute(as->sb);
    }
    if (rc == PX_OK)
        rc = px_parallel_for(s, "fem_dirichlet", px_range(0, p->n_nodes), &fem_dirichlet, &aa,
                             sizeof aa);
    if (rc == PX_OK)
        rc = px_fence(s);
    return rc;
}

int fem_l2_error(const fem_problem *p, const double *u, double *err)
{
    if (!p || !u || !err)
        return PX_EFAULT;
    l2_args la;
    la.xy = p->xy;
    la.tri = p->tri;
    la.u = u;
    double e2 = 0.0;
    int rc = px_parallel_reduce(p->space, "fem_l2", px_range(0, p->n_elems), &fem_l2, &la,
                                sizeof la, &px_sum_f64, &e2);
    if (rc == PX_OK)
        *err = sqrt(e2);
    return rc;
}
