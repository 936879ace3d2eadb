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

/* Migration 6: the finished time-to-accuracy runs of the version-3 documents stored before it
 * (the service accepted them, as runs without a throughput) kept on their board (tta_runs,
 * lb_store_tta.h) with the rules of an upload (lb_extract_tta); a run those rules refuse stays
 * stored but off the board, and a document that no longer parses is left as it is. */
xpb_status lb_backfill_tta(struct lb_db *db, xpb_err *err);

#endif
