/* Upload tokens. An administrator creates one per submitter (`xpubench-leaderboard token
 * create NAME`); the token is shown once and only its salted hash is stored.
 *
 * A token reads "xpb_<public id: 16 hex>_<secret: 64 hex>" (32 random bytes of secret). The
 * public id finds the row; the row holds a per-token random salt and
 * sha256(salt ":" secret), compared in constant time. An unknown id costs the same hash
 * and comparison as a known one, so timing does not tell which ids exist. Revoked tokens stay
 * in the table (their submissions keep their submitter) but no longer authenticate. */
#ifndef LB_AUTH_H
#define LB_AUTH_H

#include <stdio.h>

#include "base/errmsg.h"
#include "db/lb_db.h"

#define LB_TOKEN_LEN (4 + 16 + 1 + 64) /* without the NUL */
#define LB_TOKEN_NAME_MAX 64

/* Creates a token for `name` (1..64 letters, digits, '-', '_', '.'; unique) and writes the
 * token text (LB_TOKEN_LEN + 1 bytes) to token_out. XPB_INVALID_ARGUMENT for a bad or taken
 * name, XPB_IO_ERROR for database or random-source failures. */
xpb_status lb_auth_create(char token_out[LB_TOKEN_LEN + 1], struct lb_db *db, const char *name,
                          xpb_err *err);

/* Revokes the token named `name`. XPB_NOT_FOUND when there is none (or it is already revoked). */
xpb_status lb_auth_revoke(struct lb_db *db, const char *name, xpb_err *err);

/* Prints one line per token: name, public id, created, last used, revoked (never a secret). */
xpb_status lb_auth_list(FILE *out, struct lb_db *db, xpb_err *err);

/* Checks an Authorization header value ("Bearer <token>"). On success *token_id and name_out
 * (LB_TOKEN_NAME_MAX + 1 bytes) identify the token (lb_store_submit records its use).
 * XPB_REJECTED (err says why, without echoing the token) for a missing, malformed, unknown or
 * revoked token; XPB_IO_ERROR for a database failure. */
xpb_status lb_auth_check(long long *token_id, char name_out[LB_TOKEN_NAME_MAX + 1],
                         struct lb_db *db, const char *authorization, xpb_err *err);

/* 1 when the two n-byte strings are equal; runs in time independent of where they differ. */
int lb_ct_equal(const char *a, const char *b, size_t n);

#endif
