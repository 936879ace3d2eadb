/* The rankings kept up to date as submissions arrive (internal to the store), so that showing
 * a table costs the rows shown, not the runs stored:
 *   - runs.ranked marks the LB_RANKED_PER_SUBMITTER fastest finished runs of each submitter
 *     in each table (model, variant, mode, precision, world size), ties to the older run: the
 *     default view of a table is these runs, read in speed order from an index;
 *   - board_members counts each submitter's finished runs per table, board_groups each
 *     table's runs and submitters, the token that opened it and in which of its turns, and its
 *     latest submission: the list of tables, in order, (and the menus of their columns) is
 *     read from there; board_backends counts each backend's finished runs, for its menu.
 * Schema migration 3 computed them for what was stored before; lb_store_submit keeps them,
 * in the same transaction as the runs. */
#ifndef LB_STORE_INDEX_H
#define LB_STORE_INDEX_H

#include "base/errmsg.h"
#include "db/lb_db.h"
#include "store/lb_store.h"

/* A submitter's runs ranked per table (the value migration 3 was written with). */
#define LB_RANKED_PER_SUBMITTER 10

/* Accounts for the run `run_id` (a row of runs, finished with a throughput) of token
 * `token_id` in submission `submission_id`: its ranked flag (and the one it displaces), and
 * the table's counts, its latest submission and, for a new table, who opened it and in which
 * turn (the order of the tables, lb_store_groups). */
xpb_status lb_store_index_run(struct lb_db *db, long long run_id, long long submission_id,
                              const struct lb_run_row *r, long long token_id, xpb_err *err);

#endif
