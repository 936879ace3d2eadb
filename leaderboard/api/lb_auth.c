/* Upload tokens: creation, revocation, listing and verification (see lb_auth.h). */
#include "api/lb_auth.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "base/sha256.h"

#define PUBLIC_HEX 16
#define SECRET_HEX 64
#define SALT_HEX 32

static xpb_status random_bytes(unsigned char *out, size_t n, xpb_err *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(out + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return xpb_err_set(err, XPB_IO_ERROR, "no random bytes: %s", strerror(errno));
        got += (size_t)r;
    }
    return XPB_OK;
}

static void to_hex(char *out, const unsigned char *in, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[in[i] >> 4];
        out[2 * i + 1] = hex[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static int is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int lb_ct_equal(const char *a, const char *b, size_t n)
{
    volatile unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

/* sha256(salt ":" secret) as hex. */
static void token_hash(char out[65], const char *salt, const char *secret)
{
    struct xpb_sha256_ctx ctx;
    unsigned char digest[32];
    xpb_sha256_init(&ctx);
    xpb_sha256_update(&ctx, salt, strlen(salt));
    xpb_sha256_update(&ctx, ":", 1);
    xpb_sha256_update(&ctx, secret, strlen(secret));
    xpb_sha256_final(&ctx, digest);
    xpb_sha256_to_hex(out, digest);
}

static int name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > LB_TOKEN_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return 0;
    }
    return 1;
}

static const char SQL_INSERT_TOKEN[] =
    "INSERT INTO tokens(name, public_id, salt, hash, created) VALUES ($1, $2, $3, $4, $5)";
static const char SQL_REVOKE_TOKEN[] =
    "UPDATE tokens SET revoked = $2 WHERE name = $1 AND revoked IS NULL RETURNING id";
static const char SQL_LIST_TOKENS[] =
    "SELECT name, public_id, created, coalesce(last_used, '-'), coalesce(revoked, '-') "
    "FROM tokens ORDER BY id";
static const char SQL_FIND_TOKEN[] =
    "SELECT id, name, salt, hash, CASE WHEN revoked IS NULL THEN 0 ELSE 1 END FROM tokens "
    "WHERE public_id = $1";

xpb_status lb_auth_create(char token_out[LB_TOKEN_LEN + 1], struct lb_db *db, const char *name,
                          xpb_err *err)
{
    if (!name_ok(name))
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "token name '%s' is not 1 to %d letters, digits, '-', '_' or '.'", name,
                           LB_TOKEN_NAME_MAX);
    unsigned char raw[PUBLIC_HEX / 2 + SECRET_HEX / 2 + SALT_HEX / 2];
    xpb_status st = random_bytes(raw, sizeof raw, err);
    if (st != XPB_OK)
        return st;
    char pub[PUBLIC_HEX + 1], secret[SECRET_HEX + 1], salt[SALT_HEX + 1], hash[65], now[32];
    to_hex(pub, raw, PUBLIC_HEX / 2);
    to_hex(secret, raw + PUBLIC_HEX / 2, SECRET_HEX / 2);
    to_hex(salt, raw + PUBLIC_HEX / 2 + SECRET_HEX / 2, SALT_HEX / 2);
    token_hash(hash, salt, secret);
    lb_utc_time(now, 0);

    struct lb_stmt *s = lb_db_stmt(db, SQL_INSERT_TOKEN, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_text(s, 1, name);
    lb_stmt_text(s, 2, pub);
    lb_stmt_text(s, 3, salt);
    lb_stmt_text(s, 4, hash);
    lb_stmt_text(s, 5, now);
    int rc = lb_stmt_step(s);
    lb_stmt_done(s);
    if (rc == LB_STEP_CONFLICT)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "a token named '%s' exists already", name);
    if (rc != LB_STEP_DONE)
        return xpb_err_set(err, XPB_IO_ERROR, "cannot store the token: %s", lb_db_errmsg(db));
    snprintf(token_out, LB_TOKEN_LEN + 1, "xpb_%s_%s", pub, secret);
    explicit_bzero(secret, sizeof secret);
    explicit_bzero(raw, sizeof raw);
    return XPB_OK;
}

xpb_status lb_auth_revoke(struct lb_db *db, const char *name, xpb_err *err)
{
    char now[32];
    lb_utc_time(now, 0);
    struct lb_stmt *s = lb_db_stmt(db, SQL_REVOKE_TOKEN, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_text(s, 1, name);
    lb_stmt_text(s, 2, now);
    int rc = lb_stmt_step(s);
    lb_stmt_done(s);
    if (rc == LB_STEP_ERROR)
        return xpb_err_set(err, XPB_IO_ERROR, "cannot revoke: %s", lb_db_errmsg(db));
    if (rc == LB_STEP_DONE) /* RETURNING gave no row: nothing changed */
        return xpb_err_set(err, XPB_NOT_FOUND, "no active token named '%s'", name);
    return XPB_OK;
}

xpb_status lb_auth_list(FILE *out, struct lb_db *db, xpb_err *err)
{
    struct lb_stmt *s = lb_db_stmt(db, SQL_LIST_TOKENS, err);
    if (!s)
        return XPB_IO_ERROR;
    fprintf(out, "%-24s %-16s %-20s %-20s %s\n", "NAME", "ID", "CREATED", "LAST USED", "REVOKED");
    int rc;
    while ((rc = lb_stmt_step(s)) == LB_STEP_ROW)
        fprintf(out, "%-24s %-16s %-20s %-20s %s\n", lb_col_str(s, 0), lb_col_str(s, 1),
                lb_col_str(s, 2), lb_col_str(s, 3), lb_col_str(s, 4));
    lb_stmt_done(s);
    if (rc != LB_STEP_DONE)
        return xpb_err_set(err, XPB_IO_ERROR, "cannot list tokens: %s", lb_db_errmsg(db));
    return XPB_OK;
}

xpb_status lb_auth_check(long long *token_id, char name_out[LB_TOKEN_NAME_MAX + 1],
                         struct lb_db *db, const char *authorization, xpb_err *err)
{
    *token_id = 0;
    name_out[0] = '\0';
    if (!authorization || !*authorization)
        return xpb_err_set(err, XPB_REJECTED,
                           "missing bearer token (Authorization: Bearer <token>)");
    if (strncasecmp(authorization, "Bearer ", 7) != 0)
        return xpb_err_set(err, XPB_REJECTED, "the Authorization header is not a Bearer token");
    const char *tok = authorization + 7;
    while (*tok == ' ')
        tok++;
    size_t len = strcspn(tok, " \t");
    if (len != LB_TOKEN_LEN || strncmp(tok, "xpb_", 4) != 0 || tok[4 + PUBLIC_HEX] != '_' ||
        !is_hex(tok + 4, PUBLIC_HEX) || !is_hex(tok + 5 + PUBLIC_HEX, SECRET_HEX))
        return xpb_err_set(err, XPB_REJECTED, "malformed token");
    char pub[PUBLIC_HEX + 1], secret[SECRET_HEX + 1];
    memcpy(pub, tok + 4, PUBLIC_HEX);
    pub[PUBLIC_HEX] = '\0';
    memcpy(secret, tok + 5 + PUBLIC_HEX, SECRET_HEX);
    secret[SECRET_HEX] = '\0';

    struct lb_stmt *s = lb_db_stmt(db, SQL_FIND_TOKEN, err);
    if (!s)
        return XPB_IO_ERROR;
    lb_stmt_text(s, 1, pub);
    int rc = lb_stmt_step(s);
    /* unknown ids hash and compare against a dummy row so they cost the same */
    char salt[SALT_HEX + 1] = "00000000000000000000000000000000", stored[65], computed[65];
    memset(stored, '0', 64);
    stored[64] = '\0';
    long long id = 0;
    int revoked = 0, found = rc == LB_STEP_ROW;
    if (found) {
        id = lb_col_int(s, 0);
        lb_col_text(name_out, LB_TOKEN_NAME_MAX + 1, s, 1);
        lb_col_text(salt, sizeof salt, s, 2);
        lb_col_text(stored, sizeof stored, s, 3);
        revoked = (int)lb_col_int(s, 4);
    }
    lb_stmt_done(s);
    if (rc != LB_STEP_ROW && rc != LB_STEP_DONE)
        return xpb_err_set(err, XPB_IO_ERROR, "token lookup failed: %s", lb_db_errmsg(db));
    token_hash(computed, salt, secret);
    explicit_bzero(secret, sizeof secret);
    int match = lb_ct_equal(computed, stored, 64);
    if (!found || !match || strlen(stored) != 64) {
        name_out[0] = '\0';
        return xpb_err_set(err, XPB_REJECTED, "unknown token");
    }
    if (revoked) {
        name_out[0] = '\0';
        return xpb_err_set(err, XPB_REJECTED, "this token has been revoked");
    }
    *token_id = id;
    return XPB_OK;
}
