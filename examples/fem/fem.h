/*
 * examples/fem/fem.h - P1 finite element assembly of -Laplace(u) = f on parex, three ways.
 *
 * The problem: -Laplace(u) = f on the unit square, u = 0 on its boundary, with
 * f = 2 pi^2 sin(pi x) sin(pi y), whose solution is u = sin(pi x) sin(pi y). Linear (P1)
 * triangles on the mesh of mesh.h; the stiffness matrix goes into a CSR pattern built once
 * (fem_pattern_build), the load vector into an array, both on one parex space.
 *
 * Assembly is one single-source kernel launch over the elements (PX_FOR), each element adding
 * its 3 x 3 matrix and 3-vector, in one of three ways (--assembly):
 *   atomic      px_scatter in PX_SCATTER_ATOMIC mode: every add is px_atomic_add_f64.
 *   duplicated  px_scatter in PX_SCATTER_DUPLICATED mode: one replica of the nnz values and one
 *               of the load per rank, joined in rank order: bitwise repeatable for a fixed
 *               space and thread count (host spaces only).
 *   colored     the elements are coloured so that no two of one colour share a node
 *               (fem_coloring_build); one launch per colour adds with plain `+=`, no atomics.
 *               Every matrix slot receives its adds in colour order, so this one is bitwise
 *               identical on every space and thread count.
 *   auto        px_scatter in PX_SCATTER_AUTO mode (duplicated on host spaces within the
 *               scatter memory budget, else atomic).
 * Dirichlet rows and columns are eliminated the same way in every mode: contributions to or
 * from a boundary node are skipped during assembly and a node kernel then puts 1 on those
 * rows' diagonals (the load there stays 0 = u), so the matrix stays symmetric positive
 * definite for CG.
 *
 * fem.c is kept in the common subset of C11 and C++ so that a build with the Cuda space can
 * compile it with nvcc, which adds the device half of each kernel.
 */
#ifndef PAREX_EXAMPLES_FEM_FEM_H
#define PAREX_EXAMPLES_FEM_FEM_H

#include <math.h>
#include <stdint.h>

#include "parex.h" /* before element.h: PX_HOST_DEVICE */

#include "cg.h"
#include "element.h"
#include "mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How the element contributions are combined (see the file comment). */
typedef enum {
    FEM_ASSEMBLY_ATOMIC,
    FEM_ASSEMBLY_DUPLICATED,
    FEM_ASSEMBLY_COLORED,
    FEM_ASSEMBLY_AUTO
} fem_assembly;

/** "atomic", "duplicated", "colored" or "auto"; "?" for anything else. */
const char *fem_assembly_name(fem_assembly a);

/** Parse one of the names above into *out. @return PX_OK, or PX_EINVAL for another string. */
int fem_assembly_parse(const char *s, fem_assembly *out);

/** A mesh, its matrix pattern and its colouring uploaded to one space, with the assembled
 * matrix and load vector. Made by fem_problem_create, freed by fem_problem_free. */
typedef struct fem_problem {
    px_space *space;      /**< Where every array below lives (except color_ptr). */
    int64_t n_nodes;      /**< Nodes = matrix rows. */
    int64_t n_elems;      /**< Triangles. */
    double *xy;           /**< 2 n_nodes coordinates. */
    int32_t *tri;         /**< 3 n_elems node numbers. */
    uint8_t *boundary;    /**< n_nodes Dirichlet flags. */
    int32_t *color_elems; /**< Elements grouped by colour (fem_coloring::elems). */
    int64_t *color_ptr;   /**< Host memory: n_colors + 1 offsets into color_elems. */
    int n_colors;         /**< Colours. */
    cg_matrix A;          /**< Stiffness matrix: pattern set at create, values by fem_assemble. */
    double *load;         /**< n_nodes load vector, set by fem_assemble. */
} fem_problem;

/**
 * Build the pattern and the colouring of @p m on the host and copy them, the mesh and a zeroed
 * matrix and load to @p s.
 * @return PX_OK; PX_EFAULT for NULL; PX_ENOMEM; PX_EINVAL from the colouring; or a copy or
 *         launch status. @p p is zeroed on failure.
 */
int fem_problem_create(px_space *s, const fem_mesh *m, fem_problem *p);

/** Free everything fem_problem_create made and zero @p p. */
void fem_problem_free(fem_problem *p);

/** One way of assembling a problem, with the scatters it keeps between assemblies (so that
 * repeated assemblies, as in bench/bench_fem.c, time the adds and joins, not replica
 * allocation). */
typedef struct fem_assembler {
    fem_problem *p;         /**< The problem it assembles. */
    fem_assembly requested; /**< As asked. */
    fem_assembly used;      /**< AUTO resolved: ATOMIC, DUPLICATED or COLORED. */
    px_scatter *sv;         /**< Scatter into p->A.val (NULL when colored). */
    px_scatter *sb;         /**< Scatter into p->load (NULL when colored). */
} fem_assembler;

/**
 * Prepare assembly of @p p by @p how (creates the scatters).
 * @return PX_OK; PX_EFAULT for NULL; PX_EINVAL for an unknown mode, or duplicated on a space
 *         host code cannot reach or beyond the scatter budget (px_scatter_create logs which);
 *         PX_ENOMEM; PX_ENODEV.
 */
int fem_assembler_init(fem_assembler *as, fem_problem *p, fem_assembly how);

/**
 * Assemble: zero the matrix values and the load, run the element kernel(s), contribute the
 * scatters, set the Dirichlet rows, and fence the space.
 * @return PX_OK or the first failing launch, contribute or fence status.
 */
int fem_assemble(fem_assembler *as);

/** Destroy the scatters and zero @p as. */
void fem_assembler_fini(fem_assembler *as);

/**
 * L2 norm of u_h - u over the square, u_h the P1 function with nodal values @p u (n_nodes
 * doubles on p->space) and u = sin(pi x) sin(pi y); each triangle by the 6-point degree-4
 * rule of Dunavant (1985). One PX_REDUCE over the elements.
 * @return PX_OK or the launch status.
 */
int fem_l2_error(const fem_problem *p, const double *u, double *err);

#ifdef __cplusplus
}
#endif

#endif
