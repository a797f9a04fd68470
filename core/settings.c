/* core/settings.c - every runtime setting, in one table (Argobots' README.envvar idea), parsed
 * strictly: a malformed value is PX_EINVAL with a message naming the variable or flag, never a
 * silent default (libgomp env.c names the variable in each message).
 *
 * Layers, lowest first: built-in defaults < environment < --px-* flags < px_settings fields.
 * Flags are removed from argv once px_initialize has succeeded (pxi_settings_consume_argv);
 * other arguments keep their order. */
#include "core/settings.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"

typedef enum { T_INT, T_BOOL, T_ENUM, T_NAME, T_PATH } value_type;

typedef struct setting {
    const char *env;     /* environment variable */
    const char *alt_env; /* also read (lower precedence than env), or NULL */
    const char *flag;    /* command-line flag without "=value" */
    value_type type;
    int64_t min, max;    /* T_INT range */
    const char *choices; /* T_ENUM: '|'-separated */
    const char *help;
    const char *default_text;
} setting;

enum {
    S_NUM_THREADS,
    S_DEVICE_ID,
    S_BIND,
    S_DEFAULT_SPACE,
    S_ENGINE,
    S_TOOLS_LIBS,
    S_PRINT_CONFIGURATION,
    S_LOG_LEVEL,
    S_WAIT_POLICY,
    S_SPIN_US,
    S_CPU_WORKER_NTHREADS,
    S_ENGINE_MAX_PENDING,
    S_ENGINE_INLINE_NS,
    S_ENGINE_BULK,
    S_PROFILE,
    S_KERNEL_TIMER,
    S_DEBUG_CHECK,
    S_COUNT
};

static const setting table[S_COUNT] = {
    [S_NUM_THREADS] = {"PX_NUM_THREADS", NULL, "--px-num-threads", T_INT, 1, 4096, NULL,
                       "threads of the Threads space (more than cores works, with a warning)",
                       "one per core of the process cpuset"},
    [S_DEVICE_ID] = {"PX_DEVICE_ID", NULL, "--px-device-id", T_INT, 0, 1023, NULL,
                     "CUDA device used by the Cuda space", "0"},
    [S_BIND] = {"PX_BIND", NULL, "--px-bind", T_ENUM, 0, 0, "close|spread|none",
                "how Threads ranks are bound to cores",
                "close (none when ranks share the node oversubscribed)"},
    [S_DEFAULT_SPACE] = {"PX_DEFAULT_SPACE", NULL, "--px-default-space", T_NAME, 0, 0, NULL,
                         "execution space px_default_space() returns",
                         "highest-priority available (cuda > threads > serial)"},
    [S_ENGINE] = {"PX_ENGINE", NULL, "--px-engine", T_ENUM, 0, 0, "naive|pooled|per_device",
                  "kind of the default dependency engine", "per_device"},
    [S_TOOLS_LIBS] = {"PX_TOOLS_LIBS", "KOKKOS_TOOLS_LIBS", "--px-tools-libs", T_PATH, 0, 0, NULL,
                      "';'-separated Kokkos Tools libraries to load", "none"},
    [S_PRINT_CONFIGURATION] = {"PX_PRINT_CONFIGURATION", NULL, "--px-print-configuration", T_BOOL,
                               0, 1, NULL, "print the configuration during initialize", "0"},
    [S_LOG_LEVEL] = {"PX_LOG_LEVEL", NULL, "--px-log-level", T_ENUM, 0, 0, "error|warn|info|debug",
                     "log threshold", "warn"},
    [S_WAIT_POLICY] = {"PX_WAIT_POLICY", NULL, "--px-wait-policy", T_ENUM, 0, 0, "active|passive",
                       "idle Threads workers: spin long (active) or sleep at once (passive)",
                       "spin PX_SPIN_US, then sleep (1 us when oversubscribed)"},
    [S_SPIN_US] = {"PX_SPIN_US", NULL, "--px-spin-us", T_INT, 0, 60000000, NULL,
                   "microseconds an idle worker spins before sleeping", "backend default"},
    [S_CPU_WORKER_NTHREADS] = {"PX_CPU_WORKER_NTHREADS", NULL, "--px-cpu-worker-nthreads", T_INT, 1,
                               1024, NULL, "CPU worker threads of the dependency engine",
                               "engine default"},
    [S_ENGINE_MAX_PENDING] = {"PX_ENGINE_MAX_PENDING", NULL, "--px-engine-max-pending", T_INT, 1,
                              INT64_C(1) << 40, NULL,
                              "ops in flight per engine before pushers block", "engine default"},
    [S_ENGINE_INLINE_NS] = {"PX_ENGINE_INLINE_NS", NULL, "--px-engine-inline-ns", T_INT, 0, 1000000,
                            NULL,
                            "ready PX_FN_NORMAL CPU ops (not kernel ops) measured to run in "
                            "fewer nanoseconds run on their pusher (0: never)",
                            "50"},
    [S_ENGINE_BULK] = {"PX_ENGINE_BULK", NULL, "--px-engine-bulk", T_BOOL, 0, 1, NULL,
                       "a pushed one-Var sync write joins the waiting op block of the same "
                       "Var's last push (bulk execution; 0: every op its own block)",
                       "1"},
    [S_PROFILE] = {"PX_PROFILE", NULL, "--px-profile", T_PATH, 0, 0, NULL,
                   "write a Chrome trace (Perfetto) of ops and kernels to this file", "off"},
    [S_KERNEL_TIMER] = {"PX_KERNEL_TIMER", NULL, "--px-kernel-timer", T_BOOL, 0, 1, NULL,
                        "print a table of kernel times at finalize", "0"},
    [S_DEBUG_CHECK] = {"PX_DEBUG_CHECK", NULL, "--px-debug-check", T_BOOL, 0, 1, NULL,
                       "run structure checkers after mutations (checking builds)", "0"},
};

static pxi_config config;

const pxi_config *pxi_config_get(void)
{
    return &config;
}

static void config_defaults(pxi_config *c)
{
    memset(c, 0, sizeof *c);
    c->num_threads = 0;
    c->device_id = -1;
    /* bind stays "": the Threads space's default (close; none when oversubscribed across
     * processes, spaces/threads/threads.c), told apart from an explicit PX_BIND=close. */
    strcpy(c->engine, "per_device");
    c->log_level = px_log_get_level();
    c->wait_policy = PXI_WAIT_DEFAULT;
    c->spin_us = -1;
    c->engine_inline_ns = -1;
    c->engine_bulk = -1;
}

static int parse_int(const char *src, const setting *st, const char *v, int64_t *out)
{
    if (!*v) {
        PXI_ERROR("%s: empty value (expected an integer in [%lld, %lld])", src, (long long)st->min,
                  (long long)st->max);
        return PX_EINVAL;
    }
    errno = 0;
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    /* strtoll would accept leading white space and a '+'; strict parsing does not. */
    if (errno || *end || end == v || isspace((unsigned char)v[0]) || v[0] == '+') {
        PXI_ERROR("%s: '%s' is not an integer", src, v);
        return PX_EINVAL;
    }
    if (x < st->min || x > st->max) {
        PXI_ERROR("%s: %lld is out of range [%lld, %lld]", src, x, (long long)st->min,
                  (long long)st->max);
        return PX_EINVAL;
    }
    *out = x;
    return PX_OK;
}

/* Index of v among the '|'-separated choices, or -1. */
static int choice_index(const char *choices, const char *v)
{
    size_t n = strlen(v);
    int idx = 0;
    for (const char *p = choices; *p; ++idx) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0)
            return idx;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

static int set_string(char *dst, size_t cap, const char *src, const char *v)
{
    if (strlen(v) >= cap) {
        PXI_ERROR("%s: value '%s' is too long (at most %zu characters)", src, v, cap - 1);
        return PX_EINVAL;
    }
    strcpy(dst, v);
    return PX_OK;
}

static int set_owned(char **dst, const char *v)
{
    char *d = NULL;
    if (*v) {
        d = pxi_strdup(v);
        if (!d) {
            PXI_ERROR("px_initialize: out of memory copying a setting");
            return PX_ENOMEM;
        }
    }
    pxi_free(*dst);
    *dst = d;
    return PX_OK;
}

/* Apply value v of setting id to c; src names where it came from, for messages. */
/* Parse @p v by the type of setting @p st into *x (integers, booleans, enum indices; names and
 * paths are checked only). PX_EINVAL, logged with @p src, when it does not parse. */
static int parse_value(const setting *st, const char *src, const char *v, int64_t *x)
{
    int rc = PX_OK;
    switch (st->type) {
    case T_INT:
        rc = parse_int(src, st, v, x);
        break;
    case T_BOOL:
        if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0)
            *x = 1;
        else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0 || strcmp(v, "no") == 0)
            *x = 0;
        else {
            PXI_ERROR("%s: '%s' is not a boolean (use 0|1|true|false|yes|no)", src, v);
            rc = PX_EINVAL;
        }
        break;
    case T_ENUM:
        *x = choice_index(st->choices, v);
        if (*x < 0) {
            PXI_ERROR("%s: '%s' is not one of %s", src, v, st->choices);
            rc = PX_EINVAL;
        }
        break;
    case T_NAME:
        if (!*v) {
            PXI_ERROR("%s: empty space name", src);
            rc = PX_EINVAL;
        }
        break;
    case T_PATH:
        break;
    }
    return rc;
}

static int apply(pxi_config *c, int id, const char *src, const char *v)
{
    int64_t x = 0;
    int rc = parse_value(&table[id], src, v, &x);
    if (rc != PX_OK)
        return rc;
    switch (id) {
    case S_NUM_THREADS:
        c->num_threads = (int)x;
        break;
    case S_DEVICE_ID:
        c->device_id = (int)x;
        break;
    case S_BIND:
        rc = set_string(c->bind, sizeof c->bind, src, v);
        break;
    case S_DEFAULT_SPACE:
        rc = set_string(c->default_space, sizeof c->default_space, src, v);
        break;
    case S_ENGINE:
        rc = set_string(c->engine, sizeof c->engine, src, v);
        break;
    case S_TOOLS_LIBS:
        rc = set_owned(&c->tools_libs, v);
        break;
    case S_PRINT_CONFIGURATION:
        c->print_configuration = (int)x;
        break;
    case S_LOG_LEVEL:
        c->log_level = (px_log_level)x;
        break;
    case S_WAIT_POLICY:
        c->wait_policy = x == 0 ? PXI_WAIT_ACTIVE : PXI_WAIT_PASSIVE;
        break;
    case S_SPIN_US:
        c->spin_us = x;
        break;
    case S_CPU_WORKER_NTHREADS:
        c->cpu_worker_nthreads = (int)x;
        break;
    case S_ENGINE_MAX_PENDING:
        c->engine_max_pending = x;
        break;
    case S_ENGINE_INLINE_NS:
        c->engine_inline_ns = x;
        break;
    case S_ENGINE_BULK:
        c->engine_bulk = (int)x;
        break;
    case S_PROFILE:
        rc = set_owned(&c->profile_path, v);
        break;
    case S_KERNEL_TIMER:
        c->kernel_timer = (int)x;
        break;
    case S_DEBUG_CHECK:
        c->debug_check = (int)x;
        break;
    default:
        PX_UNREACHABLE();
    }
    return rc;
}

static int load_env(pxi_config *c)
{
    int first = PX_OK;
    for (int id = 0; id < S_COUNT; ++id) {
        const char *name = table[id].env;
        const char *v = getenv(name);
        if (!v && table[id].alt_env) {
            name = table[id].alt_env;
            v = getenv(name);
        }
        if (!v)
            continue;
        char src[64];
        snprintf(src, sizeof src, "environment variable %s", name);
        int rc = apply(c, id, src, v);
        if (rc != PX_OK && first == PX_OK)
            first = rc; /* keep going: report every bad variable once */
    }
    return first;
}

/* Parse the --px-* arguments of argv without changing argv (argv[0] is the program name and is
 * never a flag). Returns PX_EINVAL for an unknown or malformed flag, after reporting every bad
 * one. argv is only compacted by pxi_settings_consume_argv, once px_initialize has succeeded, so
 * a failed initialize leaves the caller's arguments as they were. */
static int load_argv(pxi_config *c, const int *argc, char **const *argv, int *help)
{
    if (!argc)
        return PX_OK; /* no count: argv is ignored (px_initialize's contract) */
    if (*argc < 0) {
        PXI_ERROR("px_initialize: argc = %d (expected >= 0)", *argc);
        return PX_EINVAL;
    }
    if (*argc == 0)
        return PX_OK;
    if (!argv || !*argv) {
        PXI_ERROR("px_initialize: argc = %d but argv is NULL%s", *argc, argv ? " (*argv)" : "");
        return PX_EINVAL;
    }
    int n = *argc, first = PX_OK;
    char **a = *argv;
    for (int i = 1; i < n; ++i) {
        const char *arg = a[i];
        if (!arg || strncmp(arg, "--px-", 5) != 0)
            continue;
        if (strcmp(arg, "--px-help") == 0) {
            *help = 1;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        int found = -1;
        for (int id = 0; id < S_COUNT; ++id)
            if (strlen(table[id].flag) == name_len && strncmp(table[id].flag, arg, name_len) == 0)
                found = id;
        int rc;
        char src[96];
        snprintf(src, sizeof src, "flag %.*s", (int)name_len, arg);
        if (found < 0) {
            PXI_ERROR("px_initialize: unknown flag '%s' (see --px-help)", arg);
            rc = PX_EINVAL;
        } else if (!eq && table[found].type == T_BOOL) {
            rc = apply(c, found, src, "1");
        } else if (!eq) {
            PXI_ERROR("%s needs a value: %s=VALUE", src, table[found].flag);
            rc = PX_EINVAL;
        } else {
            rc = apply(c, found, src, eq + 1);
        }
        if (rc != PX_OK && first == PX_OK)
            first = rc;
    }
    return first;
}

void pxi_settings_consume_argv(int *argc, char ***argv)
{
    if (!argc || !argv || !*argv || *argc <= 0)
        return;
    int n = *argc, out = 0;
    char **a = *argv;
    for (int i = 0; i < n; ++i)
        if (i == 0 || !a[i] || strncmp(a[i], "--px-", 5) != 0)
            a[out++] = a[i];
    for (int i = out; i < n; ++i)
        a[i] = NULL;
    *argc = out;
}

static int load_struct(pxi_config *c, const px_settings *s)
{
    int rc = PX_OK;
    if (s->num_threads < 0) {
        PXI_ERROR("px_initialize_with: num_threads = %d (expected 0 for default, or >= 1)",
                  s->num_threads);
        return PX_EINVAL;
    }
    if (s->device_id < -1) {
        PXI_ERROR("px_initialize_with: device_id = %d (expected -1 for default, or >= 0)",
                  s->device_id);
        return PX_EINVAL;
    }
    if (s->num_threads > 0) {
        char v[32];
        snprintf(v, sizeof v, "%d", s->num_threads);
        rc = apply(c, S_NUM_THREADS, "px_settings.num_threads", v);
    }
    if (rc == PX_OK && s->device_id >= 0) {
        /* Through the table, so the struct obeys the same range as PX_DEVICE_ID. */
        char v[32];
        snprintf(v, sizeof v, "%d", s->device_id);
        rc = apply(c, S_DEVICE_ID, "px_settings.device_id", v);
    }
    if (rc == PX_OK && s->bind)
        rc = apply(c, S_BIND, "px_settings.bind", s->bind);
    if (rc == PX_OK && s->default_space)
        rc = apply(c, S_DEFAULT_SPACE, "px_settings.default_space", s->default_space);
    if (rc == PX_OK && s->engine)
        rc = apply(c, S_ENGINE, "px_settings.engine", s->engine);
    if (rc == PX_OK && s->tools_libs)
        rc = apply(c, S_TOOLS_LIBS, "px_settings.tools_libs", s->tools_libs);
    if (rc == PX_OK && s->print_configuration)
        c->print_configuration = 1;
    return rc;
}

int pxi_settings_load(const int *argc, char **const *argv, const px_settings *s, int *help)
{
    pxi_settings_unload();
    pxi_config c;
    config_defaults(&c);
    *help = 0;
    int rc = load_env(&c);
    int rc2 = load_argv(&c, argc, argv, help);
    if (rc == PX_OK)
        rc = rc2;
    if (rc == PX_OK && s)
        rc = load_struct(&c, s);
    if (rc != PX_OK) {
        pxi_free(c.tools_libs);
        pxi_free(c.profile_path);
        return rc;
    }
    config = c;
    return PX_OK;
}

void pxi_settings_unload(void)
{
    pxi_free(config.tools_libs);
    pxi_free(config.profile_path);
    config_defaults(&config);
}

void px_print_help(FILE *out)
{
    if (!out)
        out = stdout;
    fprintf(out,
            "parex %s settings (flags win over environment; px_initialize_with wins over "
            "both):\n",
            PX_VERSION_STRING);
    for (int id = 0; id < S_COUNT; ++id) {
        const setting *st = &table[id];
        char flag[80];
        if (st->type == T_BOOL)
            snprintf(flag, sizeof flag, "%s", st->flag);
        else if (st->type == T_ENUM)
            snprintf(flag, sizeof flag, "%s=%s", st->flag, st->choices);
        else if (st->type == T_INT)
            snprintf(flag, sizeof flag, "%s=N", st->flag);
        else
            snprintf(flag, sizeof flag, "%s=VALUE", st->flag);
        fprintf(out, "  %-24s %s\n", st->env, flag);
        if (st->alt_env)
            fprintf(out, "  %-24s (also read, lower precedence)\n", st->alt_env);
        fprintf(out, "  %-24s   %s (default: %s)\n", "", st->help, st->default_text);
    }
    fprintf(out, "  %-24s %s\n", "", "--px-help: print this table");
}

void pxi_settings_print(FILE *out)
{
    const pxi_config *c = &config;
    static const char *const wait_names[] = {"default", "active", "passive"};
    static const char *const level_names[] = {"error", "warn", "info", "debug"};
    fprintf(out, "  num_threads = %d%s\n", c->num_threads,
            c->num_threads ? "" : " (one per core of the process cpuset)");
    fprintf(out, "  device_id = %d\n", c->device_id);
    fprintf(out, "  bind = %s\n", c->bind[0] ? c->bind : "(default)");
    fprintf(out, "  default_space = %s\n", c->default_space[0] ? c->default_space : "(auto)");
    fprintf(out, "  engine = %s\n", c->engine);
    fprintf(out, "  tools_libs = %s\n", c->tools_libs ? c->tools_libs : "(none)");
    fprintf(out, "  log_level = %s\n", level_names[c->log_level]);
    fprintf(out, "  wait_policy = %s\n", wait_names[c->wait_policy]);
    if (c->spin_us >= 0)
        fprintf(out, "  spin_us = %lld\n", (long long)c->spin_us);
    else
        fprintf(out, "  spin_us = (backend default)\n");
    fprintf(out, "  cpu_worker_nthreads = %d\n", c->cpu_worker_nthreads);
    fprintf(out, "  engine_max_pending = %lld\n", (long long)c->engine_max_pending);
    if (c->engine_inline_ns >= 0)
        fprintf(out, "  engine_inline_ns = %lld\n", (long long)c->engine_inline_ns);
    else
        fprintf(out, "  engine_inline_ns = (engine default)\n");
    if (c->engine_bulk >= 0)
        fprintf(out, "  engine_bulk = %d\n", c->engine_bulk);
    else
        fprintf(out, "  engine_bulk = (engine default)\n");
    fprintf(out, "  profile = %s\n", c->profile_path ? c->profile_path : "(off)");
    fprintf(out, "  kernel_timer = %d\n", c->kernel_timer);
}
