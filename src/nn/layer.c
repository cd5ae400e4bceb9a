/* The layer-kind table: name -> ops. A new kind is its own file and one row here. */
#include <stdlib.h>
#include <string.h>

#include "nn/layer.h"

static const struct nn_layer_ops *const layer_kinds[] = {
    &nn_dense_ops,
    &nn_lstm_ops,
    &nn_dropout_ops,
    &nn_last_step_ops,
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct nn_layer_ops *find_kind(const char *name)
{
    for (size_t i = 0; i < COUNT(layer_kinds); i++)
        if (strcmp(layer_kinds[i]->name, name) == 0)
            return layer_kinds[i];
    return NULL;
}

int nn_layer_new(const struct nn_layer_spec *s, const struct nn_config *cfg, int index,
                 struct nn_layer **out, struct pt_err *e)
{
    *out = NULL;
    const struct nn_layer_ops *ops = find_kind(s->kind);
    if (!ops)
        return pt_err_set(e, PT_EINTERNAL, "error: internal: no layer kind '%s'", s->kind);
    struct nn_layer *l = pt_calloc(1, ops->state_size, e);
    if (!l)
        return e ? e->code : PT_ENOMEM;
    l->ops = ops;
    l->index = index;
    l->in_dim = s->in_dim;
    l->out_dim = s->out_dim;
    int rc = ops->setup ? ops->setup(l, s, cfg, e) : 0;
    if (rc) {
        free(l);
        return rc;
    }
    *out = l;
    return 0;
}

void nn_layer_free(struct nn_layer *l)
{
    if (!l)
        return;
    if (l->ops->release)
        l->ops->release(l);
    free(l);
}
