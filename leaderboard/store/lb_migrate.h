/* Schema migrations: an ordered list of SQL scripts, each applied once, in one transaction
 * together with its row in the `schema_migrations` table. The same list serves both stores:
 * a script names the few types that differ as @ID@ (an auto-numbered primary key), @BIGINT@ (a
 * 64-bit integer) and @REAL@ (a double), spelt for each store when it runs. A migration may add
 * a step in C that runs in the same transaction (re-deriving new columns from the stored
 * documents). A database written by a newer service (a version this build does not know) is
 * refused rather than misread. */
#ifndef LB_MIGRATE_H
#define LB_MIGRATE_H

#include "base/errmsg.h"
#include "db/lb_db.h"

/* The schema version this build creates and expects. */
int lb_migrate_latest(void);

/* Applies every migration `db` lacks, inside the write transaction (lb_db_begin_write: two
 * services starting at once migrate one after the other). XPB_IO_ERROR on a database failure
 * (nothing of the failing migration stays), XPB_INCOMPATIBLE for a database from a newer
 * service. */
xpb_status lb_migrate(struct lb_db *db, xpb_err *err);

/* The version a migrated database is at, or -1 on error. */
int lb_migrate_version(struct lb_db *db);

#endif
