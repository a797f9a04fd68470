/* examples/common/cli.h - command-line helpers the example programs share (parex-cg,
 * parex-stencil, parex-fem, parex-mc): a usage error naming the program, and strict integer and
 * floating-point parsing (the whole string, in range, finite), and the matching of a valued
 * option. Header-only, C and C++ (the
 * single-source examples are compiled by nvcc too). */
#ifndef PX_EXAMPLES_CLI_H
#define PX_EXAMPLES_CLI_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The index of @s among the @n keywords @names (a flag's choices), or -1 when it is none. */
static inline int ex_cli_choice(const char *s, const char *const *names, int n)
{
    for (int k = 0; k < n; k++)
        if (strcmp(s, names[k]) == 0)
            return k;
    return -1;
}

/* Which of the @n valued options @valued argv[*i] is, as "--opt VALUE" or "--opt=VALUE":
 * returns its index and points *val at the value (advancing *i past a separate one). Returns -1
 * after printing the usage error (the caller exits with EX_CLI_EXIT_USAGE) when argv[*i] is no
 * valued option ("unknown argument") or lacks its value ("option --opt needs a value"). */
static inline int ex_cli_valued_option(const char *prog, int argc, char **argv, int *i,
                                       const char *const *valued, size_t n, const char **val)
{
    const char *arg = argv[*i];
    for (size_t k = 0; k < n; k++) {
        size_t len = strlen(valued[k]);
        if (strncmp(arg, valued[k], len) != 0 || (arg[len] != '\0' && arg[len] != '='))
            continue;
        if (arg[len] == '=') {
            *val = arg + len + 1;
        } else {
            if (*i + 1 >= argc) {
                (void)ex_cli_usage_error(prog, "option %s needs a value", valued[k]);
                return -1;
            }
            *val = argv[++*i];
        }
        return (int)k;
    }
    (void)ex_cli_usage_error(prog, "unknown argument '%s'", arg);
    return -1;
}

#endif
