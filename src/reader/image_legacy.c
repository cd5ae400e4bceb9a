/* CNTK's legacy image reader, readerType = "ImageReader" (its ResNet ImageNet configs): the
 * map file and two blocks of any names, the image's (width, height, channels and the
 * transforms' keys, which image_config.c's tables define) and its class's (labelDim), read
 * into the ImageDeserializer's config with CNTK's fixed order of transforms: Crop, Scale,
 * Color, Intensity, Mean, Transpose. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "reader/image.h"

#define TF(m) CFG_OUT(struct img_tf, m)

static const struct cfg_key legacy_keys[] = {
    {.name = "meanFile",
     .type = CFG_PATH,
     .help = "OpenCV's XML of the mean image, subtracted from every image",
     TF(file)},
    {.name = "mbFormat",
     .type = CFG_ENUM,
     .def = "nchw",
     .choices = "nchw|nhwc|legacy",
     .help = "nchw: channel planes (the W:H:C of BrainScript's Input); nhwc, legacy: "
             "interleaved",
     TF(scale_mode)},
    {.name = NULL},
};

static const struct cfg_key *const legacy_more[] = {image_crop_keys + 1, image_color_keys + 1,
                                                    image_intensity_keys + 1, legacy_keys, NULL};

static const struct cfg_schema legacy_schema = {
    .name = "ImageReader image stream",
    .where = "inside a reader with readerType = \"ImageReader\"",
    .help = "The image's size and CNTK's transforms, in a fixed order.",
    .keys = image_scale_keys + 1,
    .more = legacy_more,
};

static const struct cfg_schema legacy_parts[] = {
    {.name = "Crop", .keys = image_crop_keys + 1},
    {.name = "Scale", .keys = image_scale_keys + 1},
    {.name = "Color", .keys = image_color_keys + 1},
    {.name = "Intensity", .keys = image_intensity_keys + 1},
    {.name = "Mean", .keys = legacy_keys},
};

int image_legacy_stream(struct cfg_node *block, struct cfg_node *n)
{
    struct cfg_node *t = NULL, *k = NULL;
    const char *v = NULL;
    struct pt_err quiet;
    pt_err_clear(&quiet);
    if (!cfg_is_block(n) || cfg_find(block, "readerType", &t, &quiet) || !t || cfg_is_block(t) ||
        cfg_value(t, &v, &quiet) || strcasecmp(v, "ImageReader"))
        return 0;
    return (cfg_find_local(n, "width", &k, &quiet) == 0 && k) ||
           (cfg_find_local(n, "labelDim", &k, &quiet) == 0 && k);
}

int image_legacy_read(struct cfg_check *ck, struct cfg_node *b, struct reader_config *rc,
                      struct pt_err *e)
{
    struct image_config *img = &rc->img;
    memset(img, 0, sizeof *img);
    img->on = 1;
    if (!rc->file[0])
        return cfg_error(e, cfg_origin_of(b),
                         "readerType = \"ImageReader\" needs file = the map file (PATH<TAB>LABEL a "
                         "line)");
    struct cfg_node *feat = NULL, *lab = NULL;
    int nf = 0, nl = 0, r = cfg_parse_block(b, e);
    rc->ninputs = 0;
    for (struct cfg_node *n = r ? NULL : cfg_first(b); n; n = cfg_next(n)) {
        if (!image_legacy_stream(b, n))
            continue;
        struct cfg_node *w = NULL;
        if ((r = cfg_find_local(n, "width", &w, e)) != 0)
            return r;
        struct reader_input *ri = &rc->inputs[rc->ninputs];
        if (rc->ninputs == 2 || strlen(cfg_key(n)) >= sizeof ri->name)
            return cfg_error(e, cfg_origin_of(n),
                             "an ImageReader has one image block (with width) and one class "
                             "block (with labelDim)");
        memset(ri, 0, sizeof *ri);
        snprintf(ri->name, sizeof ri->name, "%s", cfg_key(n));
        snprintf(ri->alias, sizeof ri->alias, "%s", cfg_key(n));
        if (w) {
            feat = n;
            img->features = rc->ninputs;
            nf++;
        } else {
            lab = n;
            img->labels = rc->ninputs;
            nl++;
        }
        rc->ninputs++;
    }
    if (r == 0 && (nf != 1 || nl != 1))
        return cfg_error(e, cfg_origin_of(b),
                         "readerType = \"ImageReader\" needs one block with width, height and "
                         "channels (the image) and one with labelDim (its class); found %d and %d",
                         nf, nl);
    if (r == 0)
        r = cfg_schema_check(ck, feat, &legacy_schema, e);
    /* Crop, Scale, Color, Intensity, Mean, then Transpose, as CNTK's ImageReader chains them */
    for (int k = 0; r == 0 && k < 5; k++) {
        struct img_tf *t = &img->tf[img->ntf];
        memset(t, 0, sizeof *t);
        t->kind = k == 0   ? IMG_CROP
                  : k == 1 ? IMG_SCALE
                  : k == 2 ? IMG_COLOR
                  : k == 3 ? IMG_INTENSITY
                           : IMG_MEAN;
        t->where = *cfg_origin_of(feat);
        r = cfg_schema_read(feat, &legacy_parts[k], t, e);
        if (r)
            break;
        if (k == 0) {
            struct cfg_node *flip = NULL;
            r = cfg_find_local(feat, "hflip", &flip, e);
            if (r == 0 && !flip)
                t->hflip = t->crop_type == IMG_CROP_SIDE || t->crop_type == IMG_CROP_AREA;
            if (r == 0 && t->side[0] > 0 && t->area[0] > 0)
                r = cfg_error(e, cfg_origin_of(feat), "sideRatio and areaRatio exclude each other");
        }
        if (k == 1) {
            img->width = t->width;
            img->height = t->height;
            img->channels = t->channels;
        }
        if (k == 4) { /* mbFormat (read with the mean): nchw lays the channels out in planes */
            img->planar = t->scale_mode == 0;
            if (!t->file[0]) /* no mean: nothing to subtract */
                t->kind = IMG_TRANSPOSE;
        }
        img->ntf++;
    }
    long long dim = 0;
    struct cfg_node *ld = NULL;
    const char *v = NULL;
    if (r == 0 && (r = cfg_find_local(lab, "labelDim", &ld, e)) == 0 &&
        (r = cfg_value(ld, &v, e)) == 0)
        r = cfg_to_int(ld, v, &dim, e);
    if (r == 0 && (dim < 1 || dim > (1 << 24)))
        r = cfg_error(e, cfg_value_origin(ld), "labelDim: expected 1 to %d, got %lld", 1 << 24,
                      dim);
    img->label_dim = rc->inputs[img->labels].dim = (int)dim;
    /* grayscale: as CNTK's legacy reader, by default when the image has one channel */
    int gray = img->channels == 1;
    if (r == 0)
        r = cfg_get_bool(b, "grayscale", 0, &gray, NULL, e);
    img->grayscale = gray;
    if (r == 0 && img->channels != 1 && gray)
        r = cfg_error(e, cfg_origin_of(feat), "channels = %d, but grayscale = true decodes one",
                      img->channels);
    if (r == 0)
        rc->inputs[img->features].dim = img->width * img->height * img->channels;
    return r;
}
