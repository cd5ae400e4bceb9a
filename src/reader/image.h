/* Private to src/reader: CNTK's ImageDeserializer. image_config.c reads its config,
 * image_reader.c its map file and minibatches, image_tf.c decodes an image and runs the
 * transforms (CNTK's ImageTransformers.cpp, in floats). */
#ifndef PT_READER_IMAGE_H
#define PT_READER_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "parsers/schema.h"
#include "reader/reader.h"

extern const struct cfg_schema image_deserializer_schema;
/* The transforms' keys (image_config.c; each table's first entry is `type`), which the
 * legacy form reads too (image_legacy.c). */
extern const struct cfg_key image_crop_keys[], image_scale_keys[], image_color_keys[],
    image_intensity_keys[];
extern const struct cfg_schema image_input_schema;

/* CNTK's legacy form, readerType = "ImageReader" in reader block b: its map file=, its
 * image block (the one with width) and class block (labelDim), whatever their names; the
 * transforms in CNTK's fixed order (Crop, Scale, Color, Intensity, Mean, Transpose unless
 * mbFormat is nhwc). image_legacy_stream: whether n is such a block (reader_schema.owns). */
int image_legacy_read(struct cfg_check *ck, struct cfg_node *b, struct reader_config *rc,
                      struct pt_err *e);
int image_legacy_stream(struct cfg_node *block, struct cfg_node *n);
/* Whether deserializer block d names the image reader (type or module). */
int image_deserializer(struct cfg_node *d);
/* Deserializer d (checked against its schema with ck) into rc: file, the inputs, rc->img. */
int image_config_read(struct cfg_check *ck, struct cfg_node *d, struct reader_config *rc,
                      struct pt_err *e);

/* An image: h rows of w pixels of c channels (blue, green, red), interleaved, as floats.
 * u8: still the decoder's bytes (a Scale rounds to them, as OpenCV keeps 8 bits). */
struct img {
    int w, h, c, u8;
    float *px;
    size_t cap;
};

/* What the transforms read from files (a Mean's image, an Intensity's components). */
struct img_aux {
    float *mean; /* mean_h x mean_w x mean_c, interleaved, in file order */
    int mean_w, mean_h, mean_c;
    float eigval[3], eigvec[9]; /* EigVec row-major */
};

/* Read a transform's file (Mean: meanFile; Intensity: intensityFile) into aux. */
int img_aux_load(const struct img_tf *t, struct img_aux *aux, struct pt_err *e);
void img_aux_free(struct img_aux *aux);

/* Decode path (PNG, JPEG, BMP, ...) with `channels` channels (1: gray; 3: blue, green, red);
 * why: the decoder's reason on failure (-1). */
int img_decode(const char *path, int channels, struct img *im, const char **why);
/* Transform t on im (tmp: scratch), its random draws from *rng. -1 with why on an error of
 * the data (a mean image of another size). */
int img_apply(const struct img_tf *t, const struct img_aux *aux, struct img *im, struct img *tmp,
              uint64_t *rng, char *why, size_t why_size);
/* im into dst (w * h * c floats): channel planes (planar) or as it is. */
void img_store(const struct img *im, int planar, float *dst);
void img_free(struct img *im);

#endif
