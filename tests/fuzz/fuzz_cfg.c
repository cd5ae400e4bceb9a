/* Fuzz target for the config language: parse, look up every block lazily, resolve every
 * value, read arrays and numbers, validate against the schemas and print.
 *
 * The first input byte picks the front end (odd: .ini through inih, even: legacy text)
 * and whether the rest is one file or newline-separated command-line arguments. Built by
 * scripts/fuzz.sh with libFuzzer; tests/test_fuzz_regress replays kept inputs with the
 * same harness under `make check`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/cfg.h"
#include "train/train.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    return f;
}

static void walk(struct cfg_node *block, int depth)
{
    struct pt_err e;
    pt_err_clear(&e);
    if (depth > 300 || cfg_parse_block(block, &e))
        return;
    for (struct cfg_node *n = cfg_first(block); n; n = cfg_next(n)) {
        pt_err_clear(&e);
        if (cfg_is_block(n)) {
            walk(n, depth + 1);
            continue;
        }
        const char *v = NULL;
        if (cfg_value(n, &v, &e))
            continue;
        int b;
        long long i;
        double d;
        struct cfg_list l = {0};
        pt_err_clear(&e);
        cfg_to_bool(n, v, &b, &e);
        pt_err_clear(&e);
        cfg_to_int(n, v, &i, &e);
        pt_err_clear(&e);
        cfg_to_double(n, v, &d, &e);
        pt_err_clear(&e);
        if (cfg_to_list(n, v, &l, &e) == 0)
            cfg_list_free(&l);
        struct cfg_node *found = NULL;
        pt_err_clear(&e);
        cfg_find(block, cfg_key(n), &found, &e);
        pt_err_clear(&e);
        cfg_find_block(block, cfg_key(n), &found, &e);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* include= would read arbitrary files of the fuzzing machine (even /dev/stdin) */
    for (size_t i = 0; i + 6 < size; i++)
        if ((data[i] | 0x20) == 'n' && memcmp(data + i + 1, "clude", 5) == 0)
            return 0;
    int ini = data[0] & 1, args = (data[0] & 2) != 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    struct cfg *c = cfg_new();
    if (!c)
        return 0;
    struct pt_err e;
    pt_err_clear(&e);
    int rc = 0;
    if (args && !ini) {
        /* each line is one command-line argument */
        char *copy = malloc(len + 1);
        memcpy(copy, text, len);
        copy[len] = '\0';
        int argno = 1;
        for (char *p = copy; rc == 0 && p < copy + len; argno++) {
            char *nl = memchr(p, '\n', (size_t)(copy + len - p));
            if (nl)
                *nl = '\0';
            rc = cfg_apply_arg(c, p, argno, &e);
            if (!nl)
                break;
            p = nl + 1;
        }
        free(copy);
    } else {
        rc = cfg_load_string(c, ini ? "fuzz.ini" : "fuzz.cfg", text, len, &e);
    }
    if (rc == 0) {
        walk(cfg_root(c), 0);
        struct train_command cmds[8];
        size_t n = 0;
        pt_err_clear(&e);
        train_check_config(c, cmds, 8, &n, &e);
        int problems = 0;
        pt_err_clear(&e);
        cfg_print(c, sink(), &problems, &e);
    }
    cfg_free(c);
    return 0;
}
