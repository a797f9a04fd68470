/*
 * examples/fem/mesh.h - the unstructured triangle mesh of the unit square used by parex-fem and
 * bench/bench_fem.c (shared so both assemble exactly the same problem).
 *
 * The mesh is a structured (n+1) x (n+1) grid of nodes, spacing h = 1/n, whose interior nodes
 * are moved by up to FEM_MESH_JITTER h in x and in y, and whose cells are each cut into two
 * triangles along a randomly chosen diagonal. Every random number comes from px_rng_at (Philox
 * keyed by the seed and a node or cell index), so a (n, seed) pair gives the same mesh on every
 * machine, space and thread count. Host code only (plain C11, also includable from C++).
 *
 * Numbering: node (i, j) is i + (n + 1) j at (i h, j h) before the jitter; cell (i, j) is
 * i + n j and holds elements 2 cell and 2 cell + 1, whose nodes are listed counterclockwise.
 */
#ifndef PAREX_EXAMPLES_FEM_MESH_H
#define PAREX_EXAMPLES_FEM_MESH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest jitter of an interior node per coordinate, in units of h. With jitter d per
 * coordinate, each leg of a cell's right triangles moves by at most 2 d h per coordinate, so
 * twice the area stays >= h^2 (1 - 4 d - 8 d^2) = 0.22 h^2 > 0 at d = 0.15: nothing inverts. */
#define FEM_MESH_JITTER 0.15

/** Largest accepted cells per side (keeps node and CSR indices within int32). */
#define FEM_MESH_MAX_N 16384

/** A triangle mesh in host memory (malloc); made by fem_mesh_generate, freed by fem_mesh_free. */
typedef struct fem_mesh {
    int64_t n;         /**< Cells per side. */
    int64_t n_nodes;   /**< (n + 1)^2. */
    int64_t n_elems;   /**< 2 n^2 triangles. */
    double *xy;        /**< 2 n_nodes coordinates: x then y of each node. */
    int32_t *tri;      /**< 3 n_elems node numbers, counterclockwise per triangle. */
    uint8_t *boundary; /**< n_nodes flags: 1 on the boundary of the square (Dirichlet). */
    double min_area;   /**< Smallest triangle area (> 0: checked at generation). */
} fem_mesh;

/** Node adjacency in CSR form (host memory): row r lists r and every node sharing a triangle
 * with it, in ascending order. */
typedef struct fem_pattern {
    int64_t n;        /**< Rows (= nodes). */
    int64_t nnz;      /**< Entries. */
    int64_t *row_ptr; /**< n + 1 offsets. */
    int32_t *col;     /**< nnz column numbers, ascending within a row. */
} fem_pattern;

/** Elements grouped by colour: no two elements of one colour share a node (host memory). */
typedef struct fem_coloring {
    int n_colors;       /**< Colours used. */
    int64_t *color_ptr; /**< n_colors + 1 offsets into elems. */
    int32_t *elems;     /**< Element numbers, colour by colour, ascending within a colour. */
} fem_coloring;

/**
 * Generate the mesh for @p n cells per side and @p seed (see the file comment).
 * @param n     cells per side, 1 .. FEM_MESH_MAX_N.
 * @param seed  Philox key of the jitter and the diagonal choices.
 * @param m     [out] the mesh; zeroed on failure.
 * @return PX_OK; PX_EINVAL for n out of range; PX_ENOMEM; PX_EINVAL if a triangle came out
 *         with area <= 0 (cannot happen with FEM_MESH_JITTER < 0.18; checked all the same).
 */
int fem_mesh_generate(int64_t n, uint64_t seed, fem_mesh *m);

/** Free the mesh's arrays and zero it (NULL and a zeroed mesh are fine). */
void fem_mesh_free(fem_mesh *m);

/**
 * Build the CSR pattern of the P1 stiffness matrix (node adjacency) from the elements. Every
 * neighbour of node (i, j) lies in the 3 x 3 block of grid nodes around it, so each row is a
 * 9-bit mask first and the columns come out sorted: O(elements), no sorting.
 * @return PX_OK; PX_EFAULT for NULL; PX_ENOMEM. @p p is zeroed on failure.
 */
int fem_pattern_build(const fem_mesh *m, fem_pattern *p);

/** Free a pattern's arrays and zero it. */
void fem_pattern_free(fem_pattern *p);

/**
 * Greedy element colouring: elements in number order each take the smallest colour that none
 * of the elements sharing one of its nodes has (a 64-bit used-colours mask per node), then a
 * counting sort groups them by colour. These meshes need 6 to 8 colours.
 * @return PX_OK; PX_EFAULT for NULL; PX_ENOMEM; PX_EINVAL if more than 64 colours were needed
 *         (impossible for these meshes: a node is in at most 8 triangles).
 */
int fem_coloring_build(const fem_mesh *m, fem_coloring *c);

/** Free a colouring's arrays and zero it. */
void fem_coloring_free(fem_coloring *c);

#ifdef __cplusplus
}
#endif

#endif
