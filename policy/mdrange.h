/* policy/mdrange.h - MDRange tile arithmetic shared by every space (policy/mdrange.c). Pure
 * functions: no allocation, no global state, exhaustively unit-tested (tests/check_mdrange.c).
 *
 * A launch validates its policy (pxi_mdrange_check), resolves it into a pxi_md_tiling (tile
 * extents with automatic ones filled in, tile counts per dimension, total tiles), then hands
 * tile numbers to workers: tile k is the box pxi_mdrange_tile_box(t, k). Tile numbers follow
 * the lexicographic order of tile coordinates for the iterate direction, so a static partition
 * of [0, total) into contiguous blocks (pxi_range_static_chunks) gives each rank consecutive
 * tiles in iterate order, and a fixed-order join of per-rank partial reductions visits the box
 * in that order too. A worker walking consecutive tiles uses pxi_mdrange_tile_next (no
 * division per tile).
 *
 * Coordinates: tile coordinate c[d] in [0, ntiles[d]); its box in dimension d is
 * [lower[d] + c[d]*tile[d], min(upper[d], lower[d] + (c[d]+1)*tile[d])). */
#ifndef PXI_MDRANGE_H
#define PXI_MDRANGE_H

#include <stddef.h>
#include <stdint.h>

#include "base/check.h"
#include "parex/policy.h"

/* Machine facts the automatic tile rule uses (see px_mdrange_auto_tile); zeros take the
 * documented defaults. */
typedef struct pxi_md_hint {
    size_t elem_bytes;   /* bytes one point touches */
    size_t l2_bytes;     /* L2 cache of one core */
    size_t vector_bytes; /* SIMD width */
    int64_t min_tiles;   /* tiles wanted for parallelism (<= 1: no constraint) */
} pxi_md_hint;

/* A validated policy resolved into tiles. Plain value, filled by pxi_mdrange_tiling_init. */
typedef struct pxi_md_tiling {
    int rank;
    px_iterate iterate;
    int fastest; /* rank - 1 for RIGHT, 0 for LEFT */
    int64_t lower[PX_MAX_RANK], upper[PX_MAX_RANK];
    int64_t tile[PX_MAX_RANK];   /* effective tile, in [1, max(1, extent)] */
    int64_t ntiles[PX_MAX_RANK]; /* ceil(extent / tile); 0 for an empty dimension */
    int64_t total;               /* product of ntiles; 0 when the box is empty */
    int64_t points;              /* product of the extents */
} pxi_md_tiling;

/* Validate like px_mdrange_validate and write a message naming the bad field and dimension
 * into msg (n bytes, may be NULL/0 to skip). Returns PX_OK (msg is then "") or PX_EINVAL. */
int pxi_mdrange_explain(const px_mdrange_policy *p, char *msg, size_t n);

/* Validate and, on failure, log "<what>: <message>" at error level. PX_OK or PX_EINVAL. */
PX_NODISCARD int pxi_mdrange_check(const px_mdrange_policy *p, const char *what);

/* Resolve a policy that passed validation: tiles of 0 are chosen by px_mdrange_auto_tile with
 * @h (NULL: all defaults), explicit tiles larger than their extent are clipped to it. */
void pxi_mdrange_tiling_init(pxi_md_tiling *t, const px_mdrange_policy *p, const pxi_md_hint *h);

/* Tile coordinates of tile number k (0 <= k < total), in iterate order. */
void pxi_mdrange_tile_coords(const pxi_md_tiling *t, int64_t k, int64_t *coord);

/* The box [lo, hi) of the tile with coordinates coord. */
void pxi_mdrange_coords_box(const pxi_md_tiling *t, const int64_t *coord, int64_t *lo, int64_t *hi);

/* The box [lo, hi) of tile number k (0 <= k < total). */
void pxi_mdrange_tile_box(const pxi_md_tiling *t, int64_t k, int64_t *lo, int64_t *hi);

/* Step coord to the next tile in iterate order and write its box. Returns 1, or 0 (coord and
 * the box unchanged) when coord was the last tile. Walking k0..k1-1 from tile_coords(k0) costs
 * no division. */
int pxi_mdrange_tile_next(const pxi_md_tiling *t, int64_t *coord, int64_t *lo, int64_t *hi);

/* The CUDA mapping of tiles (the cuda backend's MDRange launch): one block per tile along a
 * 1-D grid (grid-stride when total exceeds grid), the fastest dimension on threadIdx.x, the
 * next on .y, the third fastest on .z; threads loop over their tile's points with the block's
 * extents as strides, and every thread loops over dimensions slower than dim[2]. */
typedef struct pxi_md_cuda_map {
    unsigned block[3]; /* blockDim x, y, z; x*y*z <= max_threads, z <= 64 */
    int dim[3];        /* the dimension on x, y, z; -1 for none (z of rank 2) */
    int64_t grid;      /* blocks: min(total tiles, 2^31 - 1), at least 1 */
} pxi_md_cuda_map;

/* Block extents for a tiling and a max threads per block (cudaDevAttrMaxThreadsPerBlock, or
 * a launch-bounds value); x is a multiple of the warp (32) when the fastest tile is at least
 * 32, so a warp's loads are unit-stride. max_threads < 1 is taken as 1. */
void pxi_mdrange_cuda_map(const pxi_md_tiling *t, int max_threads, pxi_md_cuda_map *m);

#endif
