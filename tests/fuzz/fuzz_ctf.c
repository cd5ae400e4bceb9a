/* Fuzz target for the CTF line parser: every line of the input through ctf_parse_line,
 * checking invariants (a failed line leaves the columns exactly as they were; rows and
 * non-zeros only grow by what one line can add; sparse indices stay below dim). The first
 * byte picks whether lines carry sequence ids. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/ctf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const struct ctf_input in[3] = {
        {.alias = "a", .dim = 5, .sparse = 0},
        {.alias = "b", .dim = 7, .sparse = 1},
        {.alias = "features", .dim = 3, .sparse = 0},
    };
    struct ctf_column cols[3] = {{0}};
    int ids = data[0] & 1;
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    size_t lineno = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        struct ctf_where at = {.file = "fuzz.ctf", .line = ++lineno};
        struct ctf_line line;
        struct pt_err e;
        pt_err_clear(&e);
        size_t rows[3], nnz[3];
        for (int i = 0; i < 3; i++) {
            rows[i] = cols[i].rows;
            nnz[i] = cols[i].nnz;
        }
        int rc = ctf_parse_line(in, 3, cols, p, n, ids, &at, &line, &e);
        for (int i = 0; i < 3; i++) {
            if (rc && (cols[i].rows != rows[i] || cols[i].nnz != nnz[i]))
                abort(); /* a failed line must leave nothing behind */
            if (!rc && cols[i].rows != rows[i] + ((line.rows >> i) & 1))
                abort();
            if (in[i].sparse)
                for (size_t k = nnz[i]; k < cols[i].nnz; k++)
                    if (cols[i].idx[k] < 0 || cols[i].idx[k] >= in[i].dim)
                        abort();
        }
        if (rc && (e.code != PT_EUSER || strncmp(e.msg, "fuzz.ctf:", 9) != 0))
            abort();
        p = nl ? nl + 1 : end;
    }
    for (int i = 0; i < 3; i++)
        ctf_column_free(&cols[i]);
    return 0;
}
