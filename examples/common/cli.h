/* examples/common/cli.h - command-line helpers the example programs share (parex-cg,
 * parex-stencil, parex-fem, parex-mc): a usage error naming the program, and strict integer and
 * floating-point parsing (the whole string, in range, finite). Header-only, C and C++ (the
 * single-source examples are compiled by nvcc too). */
#ifndef PX_EXAMPLES_CLI_H
#define PX_EXAMPLES_CLI_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The exit status of a bad command line, in every example. */
#define EX_CLI_EXIT_USAGE 2

/* Print "PROG: <message>" and a pointer to --help on stderr; returns EX_CLI_EXIT_USAGE. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline int
ex_cli_usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s --help'.\n", prog);
    va_end(ap);
    return EX_CLI_EXIT_USAGE;
}

/* 1 and *out set when @s is a whole decimal integer in [lo, hi]; 0 otherwise. */
static inline int ex_cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || v < lo || v > hi)
        return 0;
    *out = (int64_t)v;
    return 1;
}

/* 1 and *out set when @s is a whole, finite floating-point number; 0 otherwise. */
static inline int ex_cli_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

#endif
