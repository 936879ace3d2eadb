/* Schema migrations: an ordered list of SQL scripts, each applied once, in one transaction
 * together with its row in the `schema_migrations` table. A database written by a newer
 * service (a version this build does not know) is refused rather than misread. */
#ifndef LB_MIGRATE_H
#define LB_MIGRATE_H

#include <sqlite3.h>

#include "error.h"

/* The schema version this build creates and expects. */
int lb_migrate_latest(void);

/* Applies every migration `db` lacks. XPB_IO_ERROR on an SQLite failure (nothing of the
 * failing migration stays), XPB_INCOMPATIBLE for a database from a newer service. */
xpb_status lb_migrate(sqlite3 *db, xpb_err *err);

/* The version a database is at (0 for a new one), or -1 on error. */
int lb_migrate_version(sqlite3 *db);

#endif
