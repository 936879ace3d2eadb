/* YAML text -> node tree with positions (see yaml_tree.h). libyaml does the parsing; this
 * file checks the bytes first (so that binary junk gets an exact line and column), refuses
 * what scenarios never need (anchors, aliases, tags, several documents, deep nesting) and
 * builds the tree without recursion on the way in. */
#include "scenario/yaml_tree.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

/* ---- positions and messages ---- */

char *xpb_yorigin_where(char *buf, size_t size, const struct xpb_yorigin *origin, int line,
                        int column)
{
    if (origin && origin->set) {
        /* The option as typed, with control characters escaped. */
        size_t o = 0;
        int n = snprintf(buf, size, "--set ");
        o = n > 0 && (size_t)n < size ? (size_t)n : 0;
        for (const char *p = origin->set; *p && o + 5 < size; p++) {
            unsigned char c = (unsigned char)*p;
            if (c < 0x20 || c == 0x7f)
                o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
            else
                buf[o++] = (char)c;
        }
        if (o < size)
            buf[o] = '\0';
        return buf;
    }
    snprintf(buf, size, "%s:%d:%d", origin && origin->file ? origin->file : "<scenario>", line,
             column);
    return buf;
}

char *xpb_yaml_quote(char *buf, size_t size, const char *text, size_t len)
{
    enum { MAX_SHOWN = 48 };
    size_t o = 0;
    if (size < 8) {
        if (size)
            buf[0] = '\0';
        return buf;
    }
    buf[o++] = '\'';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (i == MAX_SHOWN || o + 8 >= size) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        if (c < 0x20 || c == 0x7f || c >= 0x80 || c == '\'' || c == '\\')
            o += (size_t)snprintf(buf + o, size - o, c >= 0x20 && c < 0x7f ? "\\%c" : "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

int xpb_ynode_is_null(const struct xpb_ynode *node)
{
    if (!node || node->kind != XPB_YNODE_SCALAR || node->quoted)
        return 0;
    return node->len == 0 || strcmp(node->text, "~") == 0 || strcmp(node->text, "null") == 0 ||
           strcmp(node->text, "Null") == 0 || strcmp(node->text, "NULL") == 0;
}

char *xpb_ynode_describe(char *buf, size_t size, const struct xpb_ynode *node)
{
    if (!node) {
        snprintf(buf, size, "nothing");
    } else if (node->kind == XPB_YNODE_MAPPING) {
        snprintf(buf, size, node->n_items ? "a mapping" : "an empty mapping");
    } else if (node->kind == XPB_YNODE_SEQUENCE) {
        snprintf(buf, size, node->n_items ? "a list" : "an empty list");
    } else if (xpb_ynode_is_null(node)) {
        snprintf(buf, size, node->len == 0 ? "nothing" : "null");
    } else if (node->quoted) {
        char q[128];
        size_t n = strlen(xpb_yaml_quote(q, sizeof q, node->text, node->len));
        q[0] = q[n - 1] = '"'; /* "64" rather than '64': it was written in quotes */
        snprintf(buf, size, "the quoted string %s", q);
    } else {
        xpb_yaml_quote(buf, size, node->text, node->len);
    }
    return buf;
}

size_t xpb_ynode_map_size(const struct xpb_ynode *map)
{
    return map->n_items / 2;
}

const struct xpb_ynode *xpb_ynode_map_key(const struct xpb_ynode *map, size_t i)
{
    return map->items[2 * i];
}

const struct xpb_ynode *xpb_ynode_map_value(const struct xpb_ynode *map, size_t i)
{
    return map->items[2 * i + 1];
}

/* ---- the bytes: UTF-8 and printable, as YAML 1.1 requires ---- */

/* Decodes one UTF-8 sequence at text[i]; returns its length, or 0 when it is not valid UTF-8
 * (bad lead byte, bad continuation, truncated, overlong, surrogate or above U+10FFFF). */
static size_t utf8_decode(const unsigned char *text, size_t len, size_t i, uint32_t *cp)
{
    unsigned c = text[i];
    size_t n;
    uint32_t v;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        v = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        v = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        v = c & 0x07;
    } else {
        return 0;
    }
    if (n > len - i)
        return 0;
    for (size_t k = 1; k < n; k++) {
        if ((text[i + k] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (text[i + k] & 0x3f);
    }
    if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10ffff ||
        (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

/* YAML 1.1 c-printable. */
static int printable(uint32_t cp)
{
    return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0x7e) || cp == 0x85 ||
           (cp >= 0xa0 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || cp >= 0x10000;
}

/* Line and column (1-based, columns in characters) of byte `offset`, counting line breaks as
 * libyaml does (LF, CR LF, CR, NEL, LS, PS). Invalid bytes count as one character each. */
static void position_of(const char *text, size_t len, size_t offset, int *line, int *column)
{
    const unsigned char *t = (const unsigned char *)text;
    int l = 1, c = 1;
    size_t i = 0;
    if (offset > len)
        offset = len;
    while (i < offset) {
        uint32_t cp = 0;
        size_t n = utf8_decode(t, len, i, &cp);
        if (n == 0) {
            n = 1;
            cp = 0xfffd;
        }
        if (cp == '\r' && i + 1 < len && t[i + 1] == '\n') {
            n = 2;
            cp = '\n';
        }
        if (cp == '\n' || cp == '\r' || cp == 0x85 || cp == 0x2028 || cp == 0x2029) {
            l++;
            c = 1;
        } else {
            c++;
        }
        i += n;
    }
    *line = l;
    *column = c;
}

static xpb_status check_bytes(const struct xpb_yorigin *origin, const char *text, size_t len,
                              xpb_err *err)
{
    const unsigned char *t = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        uint32_t cp = 0;
        size_t n = utf8_decode(t, len, i, &cp);
        if (n == 0 || !printable(cp)) {
            char where[512];
            int line, column;
            position_of(text, len, i, &line, &column);
            xpb_yorigin_where(where, sizeof where, origin, line, column);
            if (n == 0)
                return xpb_err_set(err, XPB_PARSE_ERROR,
                                   "%s: expected UTF-8 text, found the byte 0x%02x", where, t[i]);
            return xpb_err_set(err, XPB_PARSE_ERROR,
                               "%s: expected printable text, found the control character "
                               "U+%04X",
                               where, (unsigned)cp);
        }
        i += n;
    }
    return XPB_OK;
}

/* ---- tree building ---- */

void xpb_ynode_free(struct xpb_ynode *node)
{
    if (!node)
        return;
    /* Depth is bounded by XPB_YAML_MAX_DEPTH, so recursion is bounded too. */
    for (size_t i = 0; i < node->n_items; i++)
        xpb_ynode_free(node->items[i]);
    free(node->items);
    free(node->text);
    free(node);
}

struct builder {
    const struct xpb_yorigin *origin;
    const char *text;
    size_t len;
    struct xpb_ynode *root;
    struct xpb_ynode *stack[XPB_YAML_MAX_DEPTH]; /* open sequences and mappings */
    int depth;
    int documents;
    xpb_err *err;
};

static xpb_status fail_at(struct builder *b, yaml_mark_t mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets "<where>: <message>" for a problem at `mark`; returns XPB_PARSE_ERROR. */
static xpb_status fail_at(struct builder *b, yaml_mark_t mark, const char *fmt, ...)
{
    char where[512], msg[600];
    va_list ap;
    xpb_yorigin_where(where, sizeof where, b->origin, (int)mark.line + 1, (int)mark.column + 1);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return xpb_err_set(b->err, XPB_PARSE_ERROR, "%s: %s", where, msg);
}

/* A new empty node at `mark`, owned by the caller (NULL when out of memory). */
static struct xpb_ynode *new_node(int kind, yaml_mark_t mark)
{
    struct xpb_ynode *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->kind = kind;
    n->line = (int)mark.line + 1;
    n->column = (int)mark.column + 1;
    return n;
}

/* Adds `node` under the innermost open collection (or as the root). Takes ownership of node
 * even on failure. */
static xpb_status attach(struct builder *b, struct xpb_ynode *node, yaml_mark_t mark)
{
    if (b->depth == 0) {
        if (b->root) { /* cannot happen: one document, one root */
            xpb_ynode_free(node);
            return fail_at(b, mark, "expected one value per document, found another");
        }
        b->root = node;
        return XPB_OK;
    }
    struct xpb_ynode *parent = b->stack[b->depth - 1];
    if (parent->kind == XPB_YNODE_MAPPING && parent->n_items % 2 == 0 &&
        node->kind != XPB_YNODE_SCALAR) {
        const char *found = node->kind == XPB_YNODE_MAPPING ? "a mapping" : "a list";
        xpb_ynode_free(node);
        return fail_at(b, mark, "expected a scalar as mapping key, found %s", found);
    }
    if (parent->n_items == parent->cap_items) {
        size_t cap = parent->cap_items ? parent->cap_items * 2 : 8;
        struct xpb_ynode **items = realloc(parent->items, cap * sizeof *items);
        if (!items) {
            xpb_ynode_free(node);
            return xpb_err_set(b->err, XPB_OUT_OF_MEMORY, "out of memory reading YAML");
        }
        parent->items = items;
        parent->cap_items = cap;
    }
    parent->items[parent->n_items++] = node;
    return XPB_OK;
}

/* Refuses anchors and tags on a node event. */
static xpb_status check_node_props(struct builder *b, const yaml_event_t *ev,
                                   const yaml_char_t *anchor, const yaml_char_t *tag)
{
    if (anchor)
        return fail_at(b, ev->start_mark,
                       "expected a plain value, found the anchor '&%s' (anchors and aliases are "
                       "not supported)",
                       (const char *)anchor);
    if (tag) {
        static const char core[] = "tag:yaml.org,2002:";
        const char *t = (const char *)tag;
        int shorthand = strncmp(t, core, sizeof core - 1) == 0;
        return fail_at(b, ev->start_mark,
                       "expected a plain value, found the tag '%s%s' (YAML tags are not "
                       "supported)",
                       shorthand ? "!!" : "", shorthand ? t + sizeof core - 1 : t);
    }
    return XPB_OK;
}

static xpb_status on_scalar(struct builder *b, const yaml_event_t *ev)
{
    xpb_status st = check_node_props(b, ev, ev->data.scalar.anchor, ev->data.scalar.tag);
    if (st != XPB_OK)
        return st;
    const char *value = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    if (memchr(value, '\0', len))
        return fail_at(b, ev->start_mark,
                       "expected text, found a string containing a NUL "
                       "character");
    struct xpb_ynode *n = new_node(XPB_YNODE_SCALAR, ev->start_mark);
    if (!n || !(n->text = malloc(len + 1))) {
        xpb_ynode_free(n);
        return xpb_err_set(b->err, XPB_OUT_OF_MEMORY, "out of memory reading YAML");
    }
    memcpy(n->text, value, len);
    n->text[len] = '\0';
    n->len = len;
    n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    return attach(b, n, ev->start_mark);
}

static xpb_status on_collection_start(struct builder *b, const yaml_event_t *ev, int kind)
{
    const yaml_char_t *anchor =
        kind == XPB_YNODE_MAPPING ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    const yaml_char_t *tag =
        kind == XPB_YNODE_MAPPING ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
    xpb_status st = check_node_props(b, ev, anchor, tag);
    if (st != XPB_OK)
        return st;
    if (b->depth == XPB_YAML_MAX_DEPTH)
        return fail_at(b, ev->start_mark,
                       "expected at most %d levels of nesting, found a list or mapping nested "
                       "deeper",
                       XPB_YAML_MAX_DEPTH);
    struct xpb_ynode *n = new_node(kind, ev->start_mark);
    if (!n)
        return xpb_err_set(b->err, XPB_OUT_OF_MEMORY, "out of memory reading YAML");
    st = attach(b, n, ev->start_mark);
    if (st != XPB_OK)
        return st;
    b->stack[b->depth++] = n;
    return XPB_OK;
}

/* Turns a libyaml failure into "<where>: invalid YAML: <problem> (<context> at L:C)". */
static xpb_status libyaml_error(struct builder *b, const yaml_parser_t *p)
{
    char where[512];
    int line, column;
    if (p->error == YAML_MEMORY_ERROR)
        return xpb_err_set(b->err, XPB_OUT_OF_MEMORY, "out of memory reading YAML");
    if (p->error == YAML_READER_ERROR) {
        /* The reader reports a byte offset, not a mark. */
        position_of(b->text, b->len, p->problem_offset, &line, &column);
    } else {
        line = (int)p->problem_mark.line + 1;
        column = (int)p->problem_mark.column + 1;
    }
    xpb_yorigin_where(where, sizeof where, b->origin, line, column);
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (p->context && p->error != YAML_READER_ERROR)
        return xpb_err_set(b->err, XPB_PARSE_ERROR, "%s: invalid YAML: %s (%s at %d:%d)", where,
                           problem, p->context, (int)p->context_mark.line + 1,
                           (int)p->context_mark.column + 1);
    return xpb_err_set(b->err, XPB_PARSE_ERROR, "%s: invalid YAML: %s", where, problem);
}

xpb_status xpb_yaml_parse(struct xpb_ynode **out, const struct xpb_yorigin *origin,
                          const char *text, size_t len, xpb_err *err)
{
    *out = NULL;
    xpb_status st = check_bytes(origin, text, len, err);
    if (st != XPB_OK)
        return st;

    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory reading YAML");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);

    struct builder b = {.origin = origin, .text = text, .len = len, .err = err};
    int done = 0;
    while (!done && st == XPB_OK) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            st = libyaml_error(&b, &parser);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (b.documents++ > 0)
                st = fail_at(&b, ev.start_mark,
                             "expected a single YAML document, found a second document");
            break;
        case YAML_ALIAS_EVENT:
            st = fail_at(&b, ev.start_mark,
                         "expected a plain value, found the alias '*%s' (anchors and aliases "
                         "are not supported)",
                         (const char *)ev.data.alias.anchor);
            break;
        case YAML_SCALAR_EVENT:
            st = on_scalar(&b, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            st = on_collection_start(&b, &ev, XPB_YNODE_SEQUENCE);
            break;
        case YAML_MAPPING_START_EVENT:
            st = on_collection_start(&b, &ev, XPB_YNODE_MAPPING);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (b.depth > 0)
                b.depth--;
            break;
        default: /* stream start, document end, no event */
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    if (st != XPB_OK) {
        xpb_ynode_free(b.root);
        return st;
    }
    if (xpb_ynode_is_null(b.root)) {
        xpb_ynode_free(b.root);
        b.root = NULL;
    }
    *out = b.root;
    return XPB_OK;
}
