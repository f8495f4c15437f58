/* models.c — loom.h's face of the model table (provider/models.c): the
 * aliases people type, what each model's id is, its window and its dated
 * price, for /model, /cost and `loom doctor`. Owns nothing; pure functions
 * over constant data, safe from any thread. */
#include <string.h>

#include "api/internal.h"
#include "base/json.h"
#include "provider/models.h"

const char *loom_model_resolve(const char *name)
{
    return models_resolve(name);
}

static json_t *price_json(const model_price *p)
{
    json_t *o = json_pack("{s:f,s:f,s:f,s:f}", "input", p->input, "output", p->output,
                          "cache_write", p->cache_write, "cache_read", p->cache_read);
    if (p->cache_write_1h > 0)
        json_object_set_new(o, "cache_write_1h", json_real(p->cache_write_1h));
    if (p->as_of)
        json_object_set_new(o, "as_of", json_string(p->as_of));
    if (p->long_above > 0) {
        json_t *l = json_pack("{s:I,s:f,s:f,s:f,s:f}", "above", (json_int_t)p->long_above, "input",
                              p->long_input, "output", p->long_output, "cache_write",
                              p->long_cache_write, "cache_read", p->long_cache_read);
        if (p->long_cache_write_1h > 0)
            json_object_set_new(l, "cache_write_1h", json_real(p->long_cache_write_1h));
        json_object_set_new(o, "long_prompt", l);
    }
    return o;
}

static json_t *model_json(const char *id)
{
    model_info info = models_lookup(id);
    json_t *o = json_pack("{s:s,s:I,s:i}", "id", id, "context_window", (json_int_t)info.context_window,
                          "max_output_tokens", info.max_output_tokens);
    model_price p;
    if (models_price(id, &p))
        json_object_set_new(o, "price", price_json(&p));
    return o;
}

char *loom_model_info_json(const char *model)
{
    if (!model)
        return NULL;
    const char *id = models_resolve(model);
    json_t *o = model_json(id);
    if (models_is_alias(model))
        json_object_set_new(o, "alias", json_string(model));
    json_object_set_new(o, "table_date", json_string(MODELS_TABLE_DATE));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

char *loom_models_json(void)
{
    json_t *list = json_array();
    const model_alias *a;
    for (size_t i = 0; (a = models_alias_at(i)); i++) {
        json_t *o = model_json(a->id);
        json_object_set_new(o, "alias", json_string(a->alias));
        json_object_set_new(o, "provider", json_string(a->provider));
        json_array_append_new(list, o);
    }
    json_t *doc = json_pack("{s:s,s:o}", "date", MODELS_TABLE_DATE, "models", list);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return text;
}

char *loom_agent_model_info_json(loom_agent *a)
{
    if (!a)
        return NULL;
    const char *model = a->provider.model;
    json_t *o = model_json(model);
    json_object_del(o, "price");
    model_price p;
    const char *source = NULL;
    if (a->params.price_input_per_mtok > 0 || a->params.price_output_per_mtok > 0) {
        double in = a->params.price_input_per_mtok;
        p = (model_price){.input = in, .output = a->params.price_output_per_mtok,
                          .cache_write = in * 1.25, .cache_read = in * 0.1};
        source = "settings: price_input_per_mtok, price_output_per_mtok";
    } else if (api_agent_price(a, model, &p)) {
        model_price table;
        bool in_table = models_price(model, &table);
        source = in_table && !memcmp(&table, &p, sizeof p) ? "table" : "settings: models.<id>.price";
    }
    if (source) {
        json_object_set_new(o, "price", price_json(&p));
        json_object_set_new(o, "price_source", json_string(source));
    }
    json_object_set_new(o, "table_date", json_string(MODELS_TABLE_DATE));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}
