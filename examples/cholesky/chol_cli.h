/*
 * examples/cholesky/chol_cli.h - command line of parex-cholesky and one complete run.
 */
#ifndef PAREX_EXAMPLE_CHOL_CLI_H
#define PAREX_EXAMPLE_CHOL_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "chol.h"

/** Exit statuses of parex-cholesky. */
enum {
    CHOL_EXIT_OK = 0,      /**< factorized, residual within --check (if given) */
    CHOL_EXIT_FAIL = 1,    /**< input unreadable, matrix not SPD, engine failure */
    CHOL_EXIT_USAGE = 2,   /**< bad flag or flag value */
    CHOL_EXIT_RESIDUAL = 3 /**< residual above the --check tolerance */
};

/** How the residual is computed. */
typedef enum { CHOL_RES_AUTO, CHOL_RES_EXACT, CHOL_RES_ESTIMATE, CHOL_RES_NONE } chol_res_mode;

/** Parsed flags. */
typedef struct chol_options {
    int64_t n;              /**< --n: order of the generated matrix (default 4096) */
    int64_t tile;           /**< --tile: tile size (default 256) */
    const char *engine;     /**< --engine: naive|pooled|per_device; NULL: PX_ENGINE or per_device */
    int workers;            /**< --workers: threads running tile ops; 0: the threads space's
                                 concurrency (one per core of the cpuset) */
    int fifo;               /**< --fifo: per_device pushes plain FIFO ops (no priority queue) */
    const char *matrix;     /**< --matrix: Matrix Market file (densified); NULL: generated */
    int json;               /**< --json: print one JSON object as the last line */
    uint64_t seed;          /**< --seed: generator seed (default 1) */
    chol_res_mode residual; /**< --residual auto|exact|estimate|none (auto: exact if n<=2048) */
    double check;           /**< --check TOL: exit 3 if residual > TOL; < 0: no check */
    int repeat;             /**< --repeat R: factorize R times, report the fastest (default 1) */
    int graph;              /**< --graph on|off: 1 each repeat launches one recorded engine graph
                                 (restore + DAG), 0 pushes the ops again; -1 (default): on
                                 when repeat > 1 */
    int help;               /**< --help given */
} chol_options;

/** Defaults: n 4096, tile 256, default engine, seed 1, residual auto, no check, repeat 1,
 *  graph -1 (on when repeat > 1). */
void chol_options_default(chol_options *o);

/**
 * Parse argv[1..argc-1] (after px_initialize removed --px-* flags). Accepts "--flag value"
 * and "--flag=value".
 * @return PX_OK; PX_EINVAL for an unknown flag, a missing or malformed value or a value out
 *         of range (a message naming the flag goes to @p err).
 */
int chol_parse_args(int argc, char **argv, chol_options *o, FILE *err);

/** Print the usage text. */
void chol_usage(FILE *out);

/**
 * Parse an engine name.
 * @return PX_OK and *kind; PX_EINVAL for anything but naive, pooled, per_device.
 */
int chol_engine_kind(const char *name, px_engine_kind *kind);

/**
 * Read a Matrix Market file and densify it into @p m (initialized here with tile size
 * @p tile). The file must describe a square symmetric matrix.
 * @return PX_OK; PX_EINVAL (malformed, not square, not symmetric); PX_EIO; PX_ENOMEM. The
 *         message goes to @p err.
 */
int chol_load_matrix_market(const char *path, int64_t tile, chol_matrix *m, FILE *err);

/**
 * One complete run: build the input, factorize on the chosen engine, check the residual,
 * print the report (text, or text plus a JSON last line).
 * @return one of the CHOL_EXIT_* codes.
 */
int chol_run(const chol_options *o, FILE *out, FILE *err);

#endif /* PAREX_EXAMPLE_CHOL_CLI_H */
