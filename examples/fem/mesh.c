/*
 * examples/fem/mesh.c - mesh generation, CSR pattern and element colouring (see mesh.h).
 */
#include "mesh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parex/core.h"
#include "parex/rng.h"

void fem_mesh_free(fem_mesh *m)
{
    if (!m)
        return;
    free(m->xy);
    free(m->tri);
    free(m->boundary);
    memset(m, 0, sizeof *m);
}

/* Twice the signed area of triangle (a, b, c). */
static double twice_area(const double *xy, int32_t a, int32_t b, int32_t c)
{
    const double ax = xy[2 * a], ay = xy[2 * a + 1];
    return (xy[2 * b] - ax) * (xy[2 * c + 1] - ay) - (xy[2 * c] - ax) * (xy[2 * b + 1] - ay);
}

int fem_mesh_generate(int64_t n, uint64_t seed, fem_mesh *m)
{
    if (!m)
        return PX_EFAULT;
    memset(m, 0, sizeof *m);
    if (n < 1 || n > FEM_MESH_MAX_N)
        return PX_EINVAL;
    const int64_t np = n + 1;
    m->n = n;
    m->n_nodes = np * np;
    m->n_elems = 2 * n * n;
    m->xy = (double *)malloc((size_t)m->n_nodes * 2 * sizeof(double));
    m->tri = (int32_t *)malloc((size_t)m->n_elems * 3 * sizeof(int32_t));
    m->boundary = (uint8_t *)malloc((size_t)m->n_nodes);
    if (!m->xy || !m->tri || !m->boundary) {
        fem_mesh_free(m);
        return PX_ENOMEM;
    }
    const double h = 1.0 / (double)n;
    /* Streams: node k draws from counter k, cell c from counter n_nodes + c (disjoint). */
    for (int64_t j = 0; j < np; j++) {
        for (int64_t i = 0; i < np; i++) {
            const int64_t k = i + np * j;
            const int bnd = i == 0 || j == 0 || i == n || j == n;
            double x = (double)i * h, y = (double)j * h;
            if (!bnd) {
                px_rng r = px_rng_at(seed, (uint64_t)k);
                x += FEM_MESH_JITTER * h * (2.0 * px_rng_uniform_f64(&r) - 1.0);
                y += FEM_MESH_JITTER * h * (2.0 * px_rng_uniform_f64(&r) - 1.0);
            }
            m->xy[2 * k] = x;
            m->xy[2 * k + 1] = y;
            m->boundary[k] = (uint8_t)bnd;
        }
    }
    double min2 = HUGE_VAL;
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < n; i++) {
            const int64_t cell = i + n * j;
            const int32_t a = (int32_t)(i + np * j), b = a + 1;
            const int32_t d = (int32_t)(a + np), c = d + 1;
            px_rng r = px_rng_at(seed, (uint64_t)(m->n_nodes + cell));
            int32_t *t = m->tri + 6 * cell;
            if (px_rng_u32(&r) & 1u) { /* diagonal b-d */
                t[0] = a, t[1] = b, t[2] = d;
                t[3] = b, t[4] = c, t[5] = d;
            } else { /* diagonal a-c */
                t[0] = a, t[1] = b, t[2] = c;
                t[3] = a, t[4] = c, t[5] = d;
            }
            for (int e = 0; e < 2; e++) {
                const double a2 = twice_area(m->xy, t[3 * e], t[3 * e + 1], t[3 * e + 2]);
                if (a2 < min2)
                    min2 = a2;
            }
        }
    }
    m->min_area = 0.5 * min2;
    if (!(min2 > 0.0)) {
        fem_mesh_free(m);
        return PX_EINVAL;
    }
    return PX_OK;
}

void fem_pattern_free(fem_pattern *p)
{
    if (!p)
        return;
    free(p->row_ptr);
    free(p->col);
    memset(p, 0, sizeof *p);
}

int fem_pattern_build(const fem_mesh *m, fem_pattern *p)
{
    if (!m || !p)
        return PX_EFAULT;
    memset(p, 0, sizeof *p);
    const int64_t np = m->n + 1, nn = m->n_nodes;
    /* Bit (di + 1) + 3 (dj + 1) of mask[r]: node r + di + np dj is a neighbour. Ascending bit
     * order is ascending column order. */
    uint16_t *mask = (uint16_t *)calloc((size_t)nn, sizeof(uint16_t));
    p->row_ptr = (int64_t *)malloc((size_t)(nn + 1) * sizeof(int64_t));
    if (!mask || !p->row_ptr) {
        free(mask);
        fem_pattern_free(p);
        return PX_ENOMEM;
    }
    for (int64_t e = 0; e < m->n_elems; e++) {
        const int32_t *t = m->tri + 3 * e;
        for (int q = 0; q < 3; q++) {
            const int64_t ri = t[q] % np, rj = t[q] / np;
            for (int s = 0; s < 3; s++) {
                const int64_t di = t[s] % np - ri, dj = t[s] / np - rj;
                mask[t[q]] |= (uint16_t)(1u << ((di + 1) + 3 * (dj + 1)));
            }
        }
    }
    int64_t nnz = 0;
    for (int64_t r = 0; r < nn; r++) {
        p->row_ptr[r] = nnz;
        for (unsigned b = 0; b < 9; b++)
            nnz += ((unsigned)mask[r] >> b) & 1u;
    }
    p->row_ptr[nn] = nnz;
    p->col = (int32_t *)malloc((size_t)nnz * sizeof(int32_t));
    if (!p->col) {
        free(mask);
        fem_pattern_free(p);
        return PX_ENOMEM;
    }
    for (int64_t r = 0; r < nn; r++) {
        int64_t k = p->row_ptr[r];
        for (int b = 0; b < 9; b++)
            if (((unsigned)mask[r] >> b) & 1u)
                p->col[k++] = (int32_t)(r + (b % 3 - 1) + np * (b / 3 - 1));
    }
    free(mask);
    p->n = nn;
    p->nnz = nnz;
    return PX_OK;
}

void fem_coloring_free(fem_coloring *c)
{
    if (!c)
        return;
    free(c->color_ptr);
    free(c->elems);
    memset(c, 0, sizeof *c);
}

int fem_coloring_build(const fem_mesh *m, fem_coloring *c)
{
    if (!m || !c)
        return PX_EFAULT;
    memset(c, 0, sizeof *c);
    uint64_t *used = (uint64_t *)calloc((size_t)m->n_nodes, sizeof(uint64_t));
    uint8_t *color = (uint8_t *)malloc((size_t)m->n_elems);
    c->color_ptr = (int64_t *)calloc(65, sizeof(int64_t));
    c->elems = (int32_t *)malloc((size_t)m->n_elems * sizeof(int32_t));
    int rc = PX_OK;
    if (!used || !color || !c->color_ptr || !c->elems) {
        rc = PX_ENOMEM;
        goto out;
    }
    int n_colors = 0;
    for (int64_t e = 0; e < m->n_elems; e++) {
        const int32_t *t = m->tri + 3 * e;
        const uint64_t taken = used[t[0]] | used[t[1]] | used[t[2]];
        if (taken == ~(uint64_t)0) {
            rc = PX_EINVAL;
            goto out;
        }
        int k = 0;
        while ((taken >> k) & 1u)
            k++;
        color[e] = (uint8_t)k;
        used[t[0]] |= (uint64_t)1 << k;
        used[t[1]] |= (uint64_t)1 << k;
        used[t[2]] |= (uint64_t)1 << k;
        c->color_ptr[k + 1]++;
        if (k + 1 > n_colors)
            n_colors = k + 1;
    }
    for (int k = 0; k < n_colors; k++)
        c->color_ptr[k + 1] += c->color_ptr[k];
    {
        int64_t next[64];
        for (int k = 0; k < n_colors; k++)
            next[k] = c->color_ptr[k];
        for (int64_t e = 0; e < m->n_elems; e++)
            c->elems[next[color[e]]++] = (int32_t)e;
    }
    c->n_colors = n_colors;
out:
    free(used);
    free(color);
    if (rc != PX_OK)
        fem_coloring_free(c);
    return rc;
}
