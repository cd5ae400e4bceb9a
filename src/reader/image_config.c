/* The ImageDeserializer's config (CNTK's composite reader form):
 *
 *   deserializers = ({ type = "ImageDeserializer" ; module = "ImageReader"
 *       file = "map.txt"                # PATH<TAB>LABEL (or KEY<TAB>PATH<TAB>LABEL) a line
 *       input = { features = { transforms = ( { type = "Crop" ; ... } : { type = "Scale" ;
 *                     width = 32 ; height = 32 ; channels = 3 } : { type = "Transpose" } ) }
 *                 labels = { labelDim = 10 } } })
 *
 * The features stream is the input block with transforms, the labels stream the one with
 * labelDim, whatever their names (as CNTK tells them apart). The transforms run in the
 * order written; the last Scale fixes the features' size, which the stream needs before
 * any image is read. Keys and defaults are CNTK's (ImageTransformers.cpp); what partrain
 * does not build is refused by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reader/image.h"

#define TF(m) CFG_OUT(struct img_tf, m)

/* "a" or "a:b" (CNTK's number list: a missing second value repeats the first) into
 * out[0..2); each within [lo, hi] (excl_lo: > lo). */
static int ratio_pair(struct cfg_val *v, const char *key, double lo, int excl_lo, double hi,
                      double *out, struct pt_err *e)
{
    char *end = NULL;
    const char *s = v->s;
    out[0] = strtod(s, &end);
    out[1] = out[0];
    if (end != s && *end == ':') {
        const char *t = end + 1;
        out[1] = strtod(t, &end);
        if (end == t)
            end = (char *)s;
    }
    int bad = end == s || *end != '\0' || !isfinite(out[0]) || !isfinite(out[1]) ||
              out[0] > out[1] || (excl_lo ? out[0] <= lo : out[0] < lo) || out[1] > hi;
    if (bad)
        return cfg_error(e, cfg_value_origin(v->node),
                         "%s: expected a number or min:max with %g %s min <= max <= %g, got "
                         "\"%s\"",
                         key, lo, excl_lo ? "<" : "<=", hi, s);
    return 0;
}

static int set_side(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block;
    return v->node ? ratio_pair(v, "sideRatio", 0, 1, 1, ((struct img_tf *)out)->side, e) : 0;
}

static int set_area(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block;
    return v->node ? ratio_pair(v, "areaRatio", 0, 1, 1, ((struct img_tf *)out)->area, e) : 0;
}

static int set_aspect(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block;
    struct img_tf *t = out;
    t->aspect[0] = t->aspect[1] = 1.0;
    return v->node ? ratio_pair(v, "aspectRatio", 0, 1, 1e9, t->aspect, e) : 0;
}

static int set_crop_size(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block;
    struct img_tf *t = out;
    if (!v->node)
        return 0;
    char *end = NULL;
    long w = strtol(v->s, &end, 10), h = w;
    if (end != v->s && *end == ':') {
        const char *s = end + 1;
        h = strtol(s, &end, 10);
        if (end == s)
            end = (char *)v->s;
    }
    if (end == v->s || *end || w < 1 || h < 1 || w > 65536 || h > 65536)
        return cfg_error(e, cfg_value_origin(v->node),
                         "cropSize: expected the window in whole pixels, W or W:H, got \"%s\"",
                         v->s);
    t->crop_w = (int)w;
    t->crop_h = (int)h;
    return 0;
}

static const struct cfg_key type_key = {.name = "type",
                                        .type = CFG_ENUM,
                                        .flags = CFG_REQUIRED | CFG_LOCAL,
                                        .choices = "Crop|Scale|Mean|Transpose|Color|Intensity",
                                        .unsupported = "Cast",
                                        .help = "the transform"};

const struct cfg_key image_crop_keys[] = {
    type_key,
    {.name = "cropType",
     .type = CFG_ENUM,
     .def = "center",
     .choices = "center|randomSide|randomArea|multiview10",
     .unsupported = "random",
     .help = "center, or a random window (randomSide: sideRatio of the shorter side; "
             "randomArea: areaRatio of the area); multiview10 takes the top-left view",
     TF(crop_type)},
    {.name = "cropSize",
     .type = CFG_STRING,
     .help = "the window in pixels, W or W:H (instead of the ratios)",
     .set = set_crop_size},
    {.name = "sideRatio",
     .type = CFG_STRING,
     .help = "the window's side over the image's shorter side: r or min:max, in (0, 1]",
     .set = set_side},
    {.name = "areaRatio",
     .type = CFG_STRING,
     .help = "the window's area over the image's: r or min:max, in (0, 1]",
     .set = set_area},
    {.name = "aspectRatio",
     .type = CFG_STRING,
     .def = "1",
     .help = "the window's width over its height: r or min:max (a random one of the two "
             "ways round)",
     .set = set_aspect},
    {.name = "jitterType",
     .type = CFG_ENUM,
     .def = "none",
     .choices = "none|uniRatio",
     .unsupported = "uniLength|uniArea",
     .help = "none: the ratios' min; uniRatio: uniform between min and max",
     TF(jitter)},
    {.name = "hflip",
     .type = CFG_BOOL,
     .def = "false",
     .flags = CFG_LOCAL,
     .help = "mirror half of the windows left to right (default: true for the random crops)",
     TF(hflip)},
    {.name = "seed", .type = CFG_INT, .def = "0", .help = "CNTK's per-transform seed (ignored)"},
    {.name = NULL},
};

const struct cfg_key image_scale_keys[] = {
    type_key,
    {.name = "width",
     .type = CFG_INT,
     .flags = CFG_REQUIRED | CFG_HAS_MIN | CFG_HAS_MAX,
     .min = 1,
     .max = 16384,
     .help = "the image's width after the transform",
     TF(width)},
    {.name = "height",
     .type = CFG_INT,
     .flags = CFG_REQUIRED | CFG_HAS_MIN | CFG_HAS_MAX,
     .min = 1,
     .max = 16384,
     .help = "its height",
     TF(height)},
    {.name = "channels",
     .type = CFG_INT,
     .flags = CFG_REQUIRED | CFG_HAS_MIN | CFG_HAS_MAX,
     .min = 1,
     .max = 3,
     .help = "1 (with grayscale = true) or 3 (blue, green, red)",
     TF(channels)},
    {.name = "interpolations",
     .type = CFG_ENUM,
     .def = "linear",
     .choices = "nearest|linear|cubic",
     .unsupported = "lanczos",
     .help = "OpenCV's resize: nearest, linear or cubic",
     TF(interp)},
    {.name = "scaleMode",
     .type = CFG_ENUM,
     .def = "fill",
     .choices = "fill|crop|pad",
     .help = "fill: stretch to width x height; crop: keep the aspect, cut the middle; pad: "
             "keep the aspect, pad the rest",
     TF(scale_mode)},
    {.name = "padValue",
     .type = CFG_INT,
     .def = "-1",
     .flags = CFG_HAS_MIN | CFG_HAS_MAX,
     .min = -1,
     .max = 255,
     .help = "scaleMode=pad: the value of the padding (-1: the edge pixels repeated)",
     TF(pad_value)},
    {.name = "seed", .type = CFG_INT, .def = "0", .help = "ignored"},
    {.name = NULL},
};

static const struct cfg_key mean_keys[] = {
    type_key,
    {.name = "meanFile",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED,
     .help = "OpenCV's XML of the mean image (MeanImg), subtracted from every image",
     TF(file)},
    {.name = "seed", .type = CFG_INT, .def = "0", .help = "ignored"},
    {.name = NULL},
};

const struct cfg_key image_color_keys[] = {
    type_key,
    {.name = "brightnessRadius",
     .type = CFG_REAL,
     .def = "0",
     .flags = CFG_HAS_MIN | CFG_HAS_MAX,
     .min = 0,
     .max = 1,
     .help = "add U(-r, r) times the image's mean value",
     TF(brightness)},
    {.name = "contrastRadius",
     .type = CFG_REAL,
     .def = "0",
     .flags = CFG_HAS_MIN | CFG_HAS_MAX,
     .min = 0,
     .max = 1,
     .help = "multiply by 1 + U(-r, r)",
     TF(contrast)},
    {.name = "saturationRadius",
     .type = CFG_REAL,
     .def = "0",
     .flags = CFG_HAS_MIN | CFG_HAS_MAX,
     .min = 0,
     .max = 1,
     .help = "scale the saturation by 1 + U(-r, r)",
     TF(saturation)},
    {.name = "seed", .type = CFG_INT, .def = "0", .help = "ignored"},
    {.name = NULL},
};

const struct cfg_key image_intensity_keys[] = {
    type_key,
    {.name = "intensityStdDev",
     .type = CFG_REAL,
     .def = "0",
     .flags = CFG_HAS_MIN,
     .min = 0,
     .help = "the spread of AlexNet's lighting noise along the principal components",
     TF(intensity_std)},
    {.name = "intensityFile",
     .type = CFG_PATH,
     .help = "OpenCV's XML of the components (EigVal 1 x 3, EigVec 3 x 3)",
     TF(file)},
    {.name = "seed", .type = CFG_INT, .def = "0", .help = "ignored"},
    {.name = NULL},
};

static const struct cfg_key transpose_keys[] = {type_key, {.name = NULL}};

static const struct cfg_schema tf_schemas[] = {
    [IMG_CROP] = {.name = "Crop transform", .where = "in transforms", .keys = image_crop_keys},
    [IMG_SCALE] = {.name = "Scale transform", .where = "in transforms", .keys = image_scale_keys},
    [IMG_MEAN] = {.name = "Mean transform", .where = "in transforms", .keys = mean_keys},
    [IMG_TRANSPOSE] = {.name = "Transpose transform",
                       .where = "in transforms",
                       .keys = transpose_keys},
    [IMG_COLOR] = {.name = "Color transform", .where = "in transforms", .keys = image_color_keys},
    [IMG_INTENSITY] = {.name = "Intensity transform",
                       .where = "in transforms",
                       .keys = image_intensity_keys},
};

static const struct cfg_key image_input_keys[] = {
    {.name = "transforms",
     .type = CFG_TEXT,
     .flags = CFG_LOCAL,
     .help = "the image stream's transforms, in order: ( { type = \"Crop\" ; ... } : ... )"},
    {.name = "labelDim",
     .type = CFG_INT,
     .flags = CFG_LOCAL | CFG_HAS_MIN,
     .min = 1,
     .help = "the class stream's dimension: classes 0 .. labelDim - 1, one-hot"},
    {.name = NULL},
};

const struct cfg_schema image_input_schema = {
    .name = "image input stream",
    .where = "inside an ImageDeserializer's input",
    .help = "The image (transforms = ...) or its class (labelDim = N).",
    .keys = image_input_keys,
};

static const struct cfg_key image_keys[] = {
    {.name = "type",
     .type = CFG_ENUM,
     .flags = CFG_LOCAL,
     .choices = "ImageDeserializer",
     .unsupported = "Base64ImageDeserializer",
     .help = "the deserializer (this or module is required)"},
    {.name = "module",
     .type = CFG_ENUM,
     .flags = CFG_LOCAL,
     .choices = "ImageReader",
     .help = "its library"},
    {.name = "file",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED | CFG_LOCAL,
     .help = "the map file: PATH<TAB>LABEL (or KEY<TAB>PATH<TAB>LABEL) a line; a relative PATH "
             "from the working directory, one starting '...' from the map file's"},
    {.name = "input",
     .type = CFG_BLOCK_MAP,
     .flags = CFG_REQUIRED | CFG_LOCAL,
     .sub = &image_input_schema,
     .help = "the image stream (transforms) and its class stream (labelDim)"},
    {.name = "grayscale",
     .type = CFG_BOOL,
     .def = "false",
     .help = "decode the images to one channel (Scale's channels = 1)"},
    {.name = "multiViewCrop",
     .type = CFG_BOOL,
     .def = "false",
     .help = "ten views of every image: not supported (true is refused)"},
    {.name = "verbosity", .type = CFG_INT, .def = "0", .help = "ignored"},
    {.name = "precision",
     .type = CFG_ENUM,
     .def = "float",
     .choices = "float",
     .unsupported = "double",
     .help = "float"},
    {.name = NULL},
};

const struct cfg_schema image_deserializer_schema = {
    .name = "ImageDeserializer",
    .where = "inside reader.deserializers = ({ ... })",
    .help = "CNTK's image reader: a map file of images and their classes.",
    .keys = image_keys,
};

int image_deserializer(struct cfg_node *d)
{
    static const char *const keys[] = {"type", "module"};
    static const char *const names[] = {"ImageDeserializer", "ImageReader"};
    for (int i = 0; i < 2; i++) {
        struct cfg_node *n = NULL;
        const char *v = NULL;
        struct pt_err ignored;
        pt_err_clear(&ignored);
        if (cfg_find_local(d, keys[i], &n, &ignored) == 0 && n && !cfg_is_block(n) &&
            cfg_value(n, &v, &ignored) == 0 && !strcasecmp(v, names[i]))
            return 1;
    }
    return 0;
}

/* One transform block into t. */
static int read_transform(struct cfg_check *ck, struct cfg_node *b, struct img_tf *t,
                          struct pt_err *e)
{
    struct cfg_node *type = NULL;
    const char *name = NULL;
    int rc = cfg_find_local(b, "type", &type, e);
    if (rc == 0 && !type)
        return cfg_error(e, cfg_origin_of(b),
                         "a transform needs type = \"Crop\", \"Scale\", \"Mean\", \"Color\", "
                         "\"Intensity\" or \"Transpose\"");
    if (rc == 0)
        rc = cfg_value(type, &name, e);
    static const char *const kinds[] = {
        [IMG_CROP] = "Crop",           [IMG_SCALE] = "Scale", [IMG_MEAN] = "Mean",
        [IMG_TRANSPOSE] = "Transpose", [IMG_COLOR] = "Color", [IMG_INTENSITY] = "Intensity"};
    int kind = -1;
    for (int k = 0; rc == 0 && k < (int)(sizeof kinds / sizeof *kinds); k++)
        kind = !strcmp(name, kinds[k]) ? k : kind; /* CNTK's names are case-sensitive */
    if (rc == 0 && kind < 0)
        return cfg_error(e, cfg_value_origin(type),
                         "type=%s: not a transform partrain builds (Crop, Scale, Mean, Color, "
                         "Intensity, Transpose; as CNTK, the case matters)",
                         name);
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->where = *cfg_origin_of(b);
    if (rc == 0)
        rc = cfg_schema_check(ck, b, &tf_schemas[kind], e);
    if (rc == 0)
        rc = cfg_schema_read(b, &tf_schemas[kind], t, e);
    if (rc == 0 && kind == IMG_CROP) {
        struct cfg_node *flip = NULL;
        rc = cfg_find_local(b, "hflip", &flip, e);
        if (rc == 0 && !flip) /* CNTK: the random windows are mirrored unless told not to */
            t->hflip = t->crop_type == IMG_CROP_SIDE || t->crop_type == IMG_CROP_AREA;
        if (rc == 0 && t->side[0] > 0 && t->area[0] > 0)
            rc = cfg_error(e, cfg_origin_of(b), "Crop: sideRatio and areaRatio exclude each other");
        if (rc == 0 && t->crop_type == IMG_CROP_MULTIVIEW)
            t->hflip = 0;
    }
    if (rc)
        cfg_schema_free(&tf_schemas[kind], t);
    return rc;
}

/* The features' transforms: the features' size from the last Scale (a Crop after it would
 * make the images' sizes differ). */
static int read_transforms(struct cfg_check *ck, struct cfg_node *in, struct image_config *img,
                           struct pt_err *e)
{
    struct cfg_node *list = NULL, *b = NULL;
    int rc = cfg_find_local(in, "transforms", &list, e);
    if (rc == 0 && cfg_is_block(list))
        b = list; /* a single { ... } */
    else if (rc == 0)
        rc = cfg_block_array(list, &b, e);
    int scaled = 0;
    for (; rc == 0 && b; b = b == list ? NULL : cfg_next(b)) {
        if (img->ntf == IMG_MAX_TF)
            return cfg_error(e, cfg_origin_of(b), "more than %d transforms", IMG_MAX_TF);
        struct img_tf *t = &img->tf[img->ntf];
        if (img->planar)
            return cfg_error(e, cfg_origin_of(b),
                             "a transform after Transpose (which lays the channels out in planes "
                             "for the network: put it last)");
        if ((rc = read_transform(ck, b, t, e)) != 0)
            break;
        img->ntf++;
        if (t->kind == IMG_SCALE) {
            scaled = 1;
            img->width = t->width;
            img->height = t->height;
            img->channels = t->channels;
        } else if (t->kind == IMG_CROP && scaled) {
            rc = cfg_error(e, cfg_origin_of(b),
                           "a Crop after the last Scale: the images would differ in size (put "
                           "the Scale last)");
        } else if (t->kind == IMG_TRANSPOSE) {
            img->planar = 1;
        }
    }
    if (rc == 0 && !scaled)
        rc = cfg_error(e, cfg_origin_of(in),
                       "the image stream needs a Scale transform ({ type = \"Scale\" ; width = "
                       "W ; height = H ; channels = C }): partrain sizes the stream from it, "
                       "before any image is read");
    return rc;
}

int image_config_read(struct cfg_check *ck, struct cfg_node *d, struct reader_config *rc,
                      struct pt_err *e)
{
    struct image_config *img = &rc->img;
    struct cfg_node *inputs = NULL;
    int grayscale = 0, views = 0, r = cfg_schema_check(ck, d, &image_deserializer_schema, e);
    memset(img, 0, sizeof *img);
    img->on = 1;
    struct cfg_node *f = NULL;
    const char *path = NULL;
    if (r == 0)
        r = cfg_find_local(d, "file", &f, e);
    if (r == 0)
        r = cfg_value(f, &path, e);
    if (r == 0 && strlen(path) >= sizeof rc->file)
        r = cfg_error(e, cfg_value_origin(f), "file: the path is too long");
    if (r == 0) {
        snprintf(rc->file, sizeof rc->file, "%s", path);
        rc->file_origin = *cfg_value_origin(f);
    }
    struct cfg_node *n = NULL;
    const char *v = NULL;
    if (r == 0)
        r = cfg_get_bool(d, "grayscale", 0, &grayscale, NULL, e);
    if (r == 0)
        r = cfg_get_bool(d, "multiViewCrop", 1, &views, &n, e);
    if (r == 0 && views)
        r = cfg_error(e, cfg_value_origin(n),
                      "multiViewCrop=true (ten views of every image) is not supported by "
                      "partrain");
    img->grayscale = grayscale;
    if (r == 0)
        r = cfg_find_local(d, "input", &inputs, e);
    if (r == 0)
        r = cfg_parse_block(inputs, e);
    int nf = 0, nl = 0;
    rc->ninputs = 0;
    for (struct cfg_node *in = r ? NULL : cfg_first(inputs); r == 0 && in; in = cfg_next(in)) {
        if (rc->ninputs == CTF_MAX_INPUTS)
            return cfg_error(e, cfg_origin_of(in), "reader: more than %d inputs", CTF_MAX_INPUTS);
        struct reader_input *ri = &rc->inputs[rc->ninputs];
        memset(ri, 0, sizeof *ri);
        if (strlen(cfg_key(in)) >= sizeof ri->name)
            return cfg_error(e, cfg_origin_of(in), "input name '%.40s...' is too long",
                             cfg_key(in));
        snprintf(ri->name, sizeof ri->name, "%s", cfg_key(in));
        snprintf(ri->alias, sizeof ri->alias, "%s", cfg_key(in));
        struct cfg_node *tf = NULL, *ld = NULL;
        if ((r = cfg_find_local(in, "transforms", &tf, e)) != 0 ||
            (r = cfg_find_local(in, "labelDim", &ld, e)) != 0)
            break;
        if (tf && !ld) {
            img->features = rc->ninputs;
            nf++;
            r = read_transforms(ck, in, img, e);
        } else if (ld && !tf) {
            long long dim = 0;
            img->labels = rc->ninputs;
            nl++;
            if ((r = cfg_value(ld, &v, e)) == 0)
                r = cfg_to_int(ld, v, &dim, e);
            if (r == 0 && (dim < 1 || dim > (1 << 24)))
                r = cfg_error(e, cfg_value_origin(ld), "labelDim: expected 1 to %d, got %lld",
                              1 << 24, dim);
            img->label_dim = ri->dim = (int)dim;
        }
        rc->ninputs++;
    }
    if (r == 0 && (nf != 1 || nl != 1))
        r = cfg_error(e, cfg_origin_of(inputs),
                      "an ImageDeserializer's input has one stream with transforms = ( ... ) "
                      "(the image) and one with labelDim = N (its class); found %d and %d",
                      nf, nl);
    if (r == 0 && img->channels == 1 && !grayscale)
        r = cfg_error(e, &img->tf[img->ntf - 1].where,
                      "Scale: channels = 1 needs grayscale = true in the deserializer (CNTK "
                      "would pack a colour image's bytes as one channel)");
    if (r == 0 && img->channels != 1 && grayscale)
        r = cfg_error(e, &img->tf[img->ntf - 1].where,
                      "Scale: channels = %d, but grayscale = true decodes one channel",
                      img->channels);
    if (r == 0)
        rc->inputs[img->features].dim = img->width * img->height * img->channels;
    return r;
}
