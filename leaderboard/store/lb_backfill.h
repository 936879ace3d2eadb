/* Steps of schema migrations that run in C: columns a migration adds are re-derived from the
 * documents stored with each submission (their canonical text), in the migration's
 * transaction, so that old submissions read like new ones. */
#ifndef LB_BACKFILL_H
#define LB_BACKFILL_H

#include "base/errmsg.h"
#include "db/lb_db.h"

/* Migration 2: runs' device_kind (from device.kind of a version-2 document; "unknown" for
 * version 1, whose devices do not say), is_cpu (kind "cpu"), world_size and the throughput
 * interval; submissions' schema_version. A document that no longer parses is left as the
 * migration's defaults made it. */
xpb_status lb_backfill_v2(struct lb_db *db, xpb_err *err);

#endif
