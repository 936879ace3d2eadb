/* A fixed set of database connections that the server's threads share: one per worker thread,
 * so a request never waits for a connection held by a slow one elsewhere. */
#ifndef LB_POOL_H
#define LB_POOL_H

#include "base/errmsg.h"
#include "db/lb_db.h"

struct lb_pool;

/* Opens `size` connections to `target` (lb_db_open) and brings the schema up to date with the
 * first (lb_migrate). *out is owned by the caller: lb_pool_close. */
xpb_status lb_pool_open(struct lb_pool **out, const char *target, int size, xpb_err *err);

/* Takes a free connection, waiting while all are in use. It stays owned by the pool: give it
 * back with lb_pool_put. */
struct lb_db *lb_pool_get(struct lb_pool *pool);
void lb_pool_put(struct lb_pool *pool, struct lb_db *db);

/* Closes every connection (none may be in use) and frees the pool. NULL is a no-op. */
void lb_pool_close(struct lb_pool *pool);

#endif
