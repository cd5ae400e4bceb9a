/* The command line: flags, configFile=, currentDirectory=, and config overrides, applied in
 * order (SPEC §1). */
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "train/train.h"

static int prefix_ci(const char *s, const char *p)
{
    return strncasecmp(s, p, strlen(p)) == 0;
}

/* Flags are recognized wherever they appear. Returns 1 when argv[i] was a flag (and
 * advances *i past a --help topic). */
static int take_flag(int argc, char **argv, int *i, struct cmdline *out, int *unknown)
{
    const char *a = argv[*i];
    if (a[0] != '-')
        return 0;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        out->help = 1;
        /* a block's name, as the list of them prints it: 'command block (action=test)' has
         * an '=' inside its parentheses, which no key=value argument has before its '=' */
        const char *t = *i + 1 < argc ? argv[*i + 1] : NULL, *eq = t ? strchr(t, '=') : NULL;
        if (t && t[0] != '-' && (!eq || (strchr(t, '(') && strchr(t, '(') < eq)))
            out->help_topic = argv[++*i];
    } else if (prefix_ci(a, "--help=")) {
        out->help = 1;
        out->help_topic = a + 7;
    } else if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
        out->version = 1;
    } else if (strcmp(a, "--print-config") == 0) {
        out->print_config = 1;
    } else if (strcmp(a, "--man-keys") == 0) {
        out->man_keys = 1;
    } else {
        *unknown = *i;
    }
    return 1;
}

void cmdline_flags(int argc, char **argv, struct cmdline *out)
{
    int unknown = 0;
    memset(out, 0, sizeof *out);
    for (int i = 1; i < argc; i++)
        take_flag(argc, argv, &i, out, &unknown);
}

int cmdline_usage_error(int argc, char **argv, struct pt_err *e)
{
    struct cmdline f;
    memset(&f, 0, sizeof f);
    for (int i = 1; i < argc; i++) {
        int unknown = 0;
        take_flag(argc, argv, &i, &f, &unknown);
        if (unknown) {
            struct cfg_origin at = {.file = "<command line>", .arg = unknown};
            return cfg_error(e, &at, "unknown option '%s' (see trainer --help)", argv[unknown]);
        }
    }
    return 0;
}

int cmdline_apply(int argc, char **argv, struct cfg *cfg, struct cmdline *out, struct pt_err *e)
{
    memset(out, 0, sizeof *out);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        struct cfg_origin at = {.file = "<command line>", .arg = i};
        int unknown = 0;
        if (take_flag(argc, argv, &i, out, &unknown)) {
            if (unknown)
                return cfg_error(e, &at, "unknown option '%s' (see trainer --help)", a);
            continue;
        }
        if (prefix_ci(a, "currentDirectory=")) {
            const char *dir = a + strlen("currentDirectory=");
            if (chdir(dir) != 0)
                return cfg_error(e, &at, "currentDirectory=%s: %s", dir, strerror(errno));
            continue;
        }
        if (prefix_ci(a, "configFile=")) {
            char list[4096];
            const char *files = a + strlen("configFile=");
            if (strlen(files) >= sizeof list)
                return cfg_error(e, &at, "configFile= list too long");
            strcpy(list, files);
            if (list[0] == '\0')
                return cfg_error(e, &at, "configFile= needs a file name");
            for (char *p = list;;) {
                char *plus = strchr(p, '+');
                if (plus)
                    *plus = '\0';
                if (*p == '\0')
                    return cfg_error(e, &at, "configFile=: empty file name in the '+' list");
                int rc = cfg_load_file(cfg, p, &at, e);
                if (rc)
                    return rc;
                out->config_files++;
                if (!plus)
                    break;
                p = plus + 1;
            }
            continue;
        }
        int rc = cfg_apply_arg(cfg, a, i, e);
        if (rc)
            return rc;
    }
    return 0;
}
