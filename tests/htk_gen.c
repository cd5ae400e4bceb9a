/* htk_gen: a small speech corpus in CNTK's HTK formats, for the HTK reader's tests
 * (tests/test_htk.sh, tests/test_reader_htk.c). Deterministic: the same options give the
 * same bytes on every machine.
 *
 *   htk_gen DIR [utts=N] [dim=D] [classes=C] [seed=S] [compressed=1] [little=1] [files=1]
 *               [baddur=K] [nolabel=K] [frames=1] [nostates=1] [binmlf=1]
 *
 * writes DIR/feat.htk (one archive; files=1: DIR/f/uNNNN.htk, one file per utterance, the
 * script file without ranges), DIR/train.scp, DIR/train.mlf (times in 100 ns units;
 * frames=1: frame numbers), DIR/state.list (names "st<c>[2]"; nostates=1: none, the MLF
 * gives class numbers in a 4th column; binmlf=1: train.mlf in CNTK's binary form, version 2),
 * DIR/frames.txt (a line a frame: utterance, frame,
 * class, its values: what a reader must deliver). Each utterance is runs of 2-9 frames of one
 * class; a frame of class c holds c's mean plus noise (htk_gen_value). baddur=K: the first K
 * utterances' labels are a frame short; nolabel=K: the last K have no MLF entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "htk_gen.h"

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

float htk_gen_value(const struct htk_gen *g, size_t u, uint32_t t, int i)
{
    int c = (int)g->cls[g->off[u] + t];
    float mean = (float)((c * 7 + i * 3) % 11 - 5) * 0.4f;
    uint64_t h = mix(g->seed ^ mix((g->off[u] + t) * 4099u + (uint64_t)i));
    float noise = ((float)(h >> 40) / (float)(1u << 24) - 0.5f) * 1.2f;
    float v = mean + noise;
    if (g->compressed) /* what the file can hold: shorts over A = 1000 */
        v = (float)(int)(v * 1000.0f + (v < 0 ? -0.5f : 0.5f)) / 1000.0f;
    return v;
}

static void put32(FILE *f, uint32_t v, int little)
{
    unsigned char b[4];
    for (int k = 0; k < 4; k++)
        b[k] = (unsigned char)(little ? v >> (8 * k) : v >> (24 - 8 * k));
    fwrite(b, 1, 4, f);
}

static void put16(FILE *f, uint16_t v, int little)
{
    unsigned char b[2] = {(unsigned char)(little ? v : v >> 8),
                          (unsigned char)(little ? v >> 8 : v)};
    fwrite(b, 1, 2, f);
}

static void putf(FILE *f, float x, int little)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    put32(f, u, little);
}

static void header(FILE *f, const struct htk_gen *g, uint32_t frames)
{
    int kind = 9 | (g->compressed ? 02000 : 0); /* USER */
    put32(f, frames + (g->compressed ? 4u : 0u), g->little);
    put32(f, 100000, g->little);
    put16(f, (uint16_t)(g->dim * (g->compressed ? 2 : 4)), g->little);
    put16(f, (uint16_t)kind, g->little);
    for (int k = 0; g->compressed && k < 2 * g->dim; k++) /* A = 1000, B = 0 */
        putf(f, k < g->dim ? 1000.0f : 0.0f, g->little);
}

static void frames(FILE *f, const struct htk_gen *g, size_t u)
{
    for (uint32_t t = 0; t < g->len[u]; t++)
        for (int i = 0; i < g->dim; i++) {
            float v = htk_gen_value(g, u, t, i);
            if (g->compressed)
                put16(f, (uint16_t)(int16_t)(int)(v * 1000.0f + (v < 0 ? -0.5f : 0.5f)), g->little);
            else
                putf(f, v, g->little);
        }
}

int htk_gen_write(struct htk_gen *g, const char *dir)
{
    uint64_t s = g->seed * 6364136223846793005ull + 1442695040888963407ull;
    g->len = malloc((size_t)g->utts * sizeof *g->len);
    g->off = malloc(((size_t)g->utts + 1) * sizeof *g->off);
    if (!g->len || !g->off)
        return -1;
    g->off[0] = 0;
    for (int u = 0; u < g->utts; u++) {
        s = mix(s + 1);
        g->len[u] = 20 + (uint32_t)(s % 60);
        g->off[u + 1] = g->off[u] + g->len[u];
    }
    g->cls = malloc(g->off[g->utts] * sizeof *g->cls);
    if (!g->cls)
        return -1;
    for (int u = 0; u < g->utts; u++)
        for (uint32_t t = 0; t < g->len[u];) {
            s = mix(s + 7);
            uint32_t run = 2 + (uint32_t)(s % 8), c = (uint32_t)((s >> 20) % (uint64_t)g->classes);
            for (; run > 0 && t < g->len[u]; run--, t++)
                g->cls[g->off[u] + t] = c;
        }
    char p[4096];
    snprintf(p, sizeof p, "%s/state.list", dir);
    FILE *st = g->nostates ? NULL : fopen(p, "w");
    for (int c = 0; st && c < g->classes; c++)
        fprintf(st, "st%d[2]\n", c);
    if (st)
        fclose(st);
    snprintf(p, sizeof p, "%s/train.scp", dir);
    FILE *scp = fopen(p, "w");
    snprintf(p, sizeof p, "%s/train.mlf", dir);
    FILE *mlf = fopen(p, "w");
    snprintf(p, sizeof p, "%s/f", dir);
    if (g->files)
        mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/feat.htk", dir);
    FILE *arc = g->files ? NULL : fopen(p, "wb");
    if (!scp || !mlf || (!g->files && !arc) || (!g->nostates && !st))
        return -1;
    if (arc)
        header(arc, g, (uint32_t)g->off[g->utts]);
    if (g->binmlf) /* CNTK's binary MLF, version 2 */
        fwrite("MLF\2\0", 1, 5, mlf);
    else
        fprintf(mlf, "#!MLF!#\n");
    for (int u = 0; u < g->utts; u++) {
        if (g->files) {
            snprintf(p, sizeof p, "%s/f/u%04d.htk", dir, u);
            FILE *f = fopen(p, "wb");
            if (!f)
                return -1;
            header(f, g, g->len[u]);
            frames(f, g, (size_t)u);
            fclose(f);
            fprintf(scp, "u%04d.htk=%s\n", u, p);
        } else {
            frames(arc, g, (size_t)u);
            fprintf(scp, "spk/u%04d.mfc=%s/feat.htk[%llu,%llu]\n", u, dir,
                    (unsigned long long)g->off[u], (unsigned long long)(g->off[u + 1] - 1));
        }
        if (u >= g->utts - g->nolabel)
            continue;
        uint32_t n = g->len[u] - (u < g->baddur ? 1u : 0u);
        if (g->binmlf) {
            char key[64];
            int kl = snprintf(key, sizeof key, "%su%04d", g->files ? "" : "spk/", u);
            uint32_t runs = 0;
            for (uint32_t t = 0; t < n; t++)
                runs += t == 0 || g->cls[g->off[u] + t] != g->cls[g->off[u] + t - 1];
            put16(mlf, (uint16_t)kl, 1);
            fwrite(key, 1, (size_t)kl, mlf);
            put32(mlf, n, 1);
            put16(mlf, (uint16_t)runs, 1);
            for (uint32_t t = 0; t < n;) {
                uint32_t c = g->cls[g->off[u] + t], e = t;
                while (e < n && g->cls[g->off[u] + e] == c)
                    e++;
                put16(mlf, (uint16_t)c, 1);
                put16(mlf, (uint16_t)(e - t), 1);
                t = e;
            }
            continue;
        }
        fprintf(mlf, "\"%su%04d.lab\"\n", g->files ? "*/" : "spk/", u);
        for (uint32_t t = 0; t < n;) {
            uint32_t c = g->cls[g->off[u] + t], e = t;
            while (e < n && g->cls[g->off[u] + e] == c)
                e++;
            unsigned long long a = g->frames ? t : t * 100000ull, b = g->frames ? e : e * 100000ull;
            if (g->nostates)
                fprintf(mlf, "%llu %llu st%u[2] %u\n", a, b, c, c);
            else
                fprintf(mlf, "%llu %llu st%u[2]%s\n", a, b, c, t == 0 ? " -1.5 word 3.2 W" : "");
            t = e;
        }
        fprintf(mlf, ".\n");
    }
    snprintf(p, sizeof p, "%s/frames.txt", dir); /* what a reader should find */
    FILE *ft = fopen(p, "w");
    if (!ft)
        return -1;
    for (int u = 0; u < g->utts; u++)
        for (uint32_t t = 0; t < g->len[u]; t++) {
            fprintf(ft, "%d %u %u", u, t, g->cls[g->off[u] + t]);
            for (int i = 0; i < g->dim; i++)
                fprintf(ft, " %.7g", (double)htk_gen_value(g, (size_t)u, t, i));
            fprintf(ft, "\n");
        }
    int bad = ferror(scp) || ferror(mlf) || (arc && ferror(arc)) || ferror(ft);
    bad |= fclose(ft);
    bad |= fclose(scp) | fclose(mlf) | (arc ? fclose(arc) : 0);
    return bad ? -1 : 0;
}

void htk_gen_free(struct htk_gen *g)
{
    free(g->len);
    free(g->off);
    free(g->cls);
}

#ifndef HTK_GEN_NO_MAIN
int main(int argc, char **argv)
{
    struct htk_gen g = {.utts = 200, .dim = 13, .classes = 8, .seed = 1};
    if (argc < 2) {
        fprintf(stderr,
                "usage: htk_gen DIR [utts=N] [dim=D] [classes=C] [seed=S] [compressed=1] "
                "[little=1] [files=1] [baddur=K] [nolabel=K] [frames=1] [nostates=1] [binmlf=1]\n");
        return 2;
    }
    for (int a = 2; a < argc; a++) {
        const char *eq = strchr(argv[a], '=');
        long v = eq ? strtol(eq + 1, NULL, 10) : 0;
        size_t k = eq ? (size_t)(eq - argv[a]) : 0;
#define OPT(name, field)                                                                           \
    if (k == strlen(name) && !strncmp(argv[a], name, k)) {                                         \
        g.field = (int)v;                                                                          \
        continue;                                                                                  \
    }
        OPT("utts", utts)
        OPT("dim", dim)
        OPT("classes", classes)
        OPT("compressed", compressed)
        OPT("little", little)
        OPT("files", files)
        OPT("baddur", baddur)
        OPT("nolabel", nolabel)
        OPT("frames", frames)
        OPT("nostates", nostates)
        OPT("binmlf", binmlf)
        if (k == 4 && !strncmp(argv[a], "seed", 4)) {
            g.seed = (uint64_t)v;
            continue;
        }
        fprintf(stderr, "htk_gen: unknown option '%s'\n", argv[a]);
        return 2;
    }
    if (g.utts < 1 || g.dim < 1 || g.classes < 1) {
        fprintf(stderr, "htk_gen: utts, dim and classes must be at least 1\n");
        return 2;
    }
    int rc = htk_gen_write(&g, argv[1]);
    htk_gen_free(&g);
    if (rc)
        fprintf(stderr, "htk_gen: cannot write into %s\n", argv[1]);
    return rc ? 1 : 0;
}
#endif
