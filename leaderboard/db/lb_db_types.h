/* What the database interface (lb_db.h) and its drivers (lb_db_driver.h) both speak of: which
 * store a connection is, what running a statement answers, and how many parameters a
 * statement binds. Its own header, so that neither of the two includes the other: the drivers
 * sit below lb_db.c, which dispatches to them. */
#ifndef LB_DB_TYPES_H
#define LB_DB_TYPES_H

/* Most parameters one statement binds. */
#define LB_DB_MAX_PARAMS 32

enum lb_db_kind { LB_DB_SQLITE, LB_DB_POSTGRES };

/* What lb_stmt_step returns. */
enum lb_step {
    LB_STEP_ERROR = -1,   /* failed: lb_db_errmsg says why */
    LB_STEP_DONE = 0,     /* no (more) rows */
    LB_STEP_ROW = 1,      /* a row is available through lb_col_* */
    LB_STEP_CONFLICT = 2, /* a UNIQUE constraint refused the statement */
};

#endif
