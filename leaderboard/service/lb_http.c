/* Request/response helpers (see lb_http.h). */
#include "service/lb_http.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *lb_query(const struct lb_request *req, const char *key)
{
    for (size_t i = 0; i < req->n_query; i++)
        if (strcmp(req->query[i].key, key) == 0)
            return req->query[i].value;
    return NULL;
}

long long lb_query_count(const struct lb_request *req, const char *key, long long def,
                         long long max)
{
    const char *v = lb_query(req, key);
    if (!v || !*v)
        return def;
    if (strspn(v, "0123456789") != strlen(v) || strlen(v) > 18)
        return -1;
    long long n = strtoll(v, NULL, 10);
    return n <= max ? n : -1;
}

static int dump_to_buf(const char *text, size_t size, void *data)
{
    struct xpb_text *b = data;
    xpb_text_add(b, text, size);
    return b->failed ? -1 : 0;
}

void lb_text_json(struct xpb_text *b, const json_t *value)
{
    if (json_dump_callback(value, dump_to_buf, b,
                           JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) != 0)
        b->failed = 1;
}

void lb_respond_json(struct lb_response *res, int status, json_t *obj)
{
    res->status = status;
    res->content_type = "application/json; charset=utf-8";
    xpb_text_free(&res->body);
    if (obj) {
        lb_text_json(&res->body, obj);
        xpb_text_puts(&res->body, "\n");
    }
    json_decref(obj);
    if (!obj || (res->body.failed && !res->body.too_large)) {
        xpb_text_free(&res->body);
        res->status = 500;
        xpb_text_puts(&res->body, "{\"error\":\"out of memory\",\"status\":500}\n");
    }
}

void lb_respond_error(struct lb_response *res, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* json_string rejects invalid UTF-8 (a message quoting bad input): fall back to ASCII */
    json_t *text = json_string(msg);
    if (!text) {
        for (char *p = msg; *p; p++)
            if ((unsigned char)*p >= 0x80)
                *p = '?';
        text = json_string(msg);
    }
    lb_respond_json(res, status, json_pack("{s:o, s:i}", "error", text, "status", status));
}

void lb_note_internal(struct lb_response *res, const char *what)
{
    snprintf(res->internal, sizeof res->internal, "%s", what ? what : "");
}

void lb_respond_internal(struct lb_response *res, int status, long retry_after, const char *message,
                         const char *what)
{
    res->retry_after = retry_after;
    lb_respond_error(res, status, "%s", message);
    lb_note_internal(res, what);
}

const char *lb_status_text(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 204:
        return "No Content";
    case 304:
        return "Not Modified";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 409:
        return "Conflict";
    case 413:
        return "Content Too Large";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Content";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Unknown";
    }
}
