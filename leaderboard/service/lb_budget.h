/* A budget shared by concurrent requests, in units of the caller's choice. The service keeps
 * two, both in bytes: what upload bodies being received may hold together (an upload reserves
 * its announced size, or the body limit when it does not announce one, before any of its body
 * is read, and gives it back when done; when the budget is spent, new uploads are refused with
 * 503 instead of growing the service's memory), and what answers being sent may hold together
 * (an answer reserves its size when it is queued and gives it back when the library lets go of
 * it; large answers must leave a part of the budget to small ones). Thread-safe; nothing
 * waits. */
#ifndef LB_BUDGET_H
#define LB_BUDGET_H

#include <stddef.h>

struct lb_budget;

/* NULL when out of memory. The caller owns it: lb_budget_free. */
struct lb_budget *lb_budget_new(size_t capacity);
void lb_budget_free(struct lb_budget *b);

/* Reserves n bytes: 1 when granted, 0 when fewer than n are left (nothing is reserved). */
int lb_budget_take(struct lb_budget *b, size_t n);

/* lb_budget_take that also leaves at least `keep` unreserved: 1 when granted. */
int lb_budget_take_leaving(struct lb_budget *b, size_t n, size_t keep);

/* Gives back n bytes reserved by lb_budget_take. */
void lb_budget_give(struct lb_budget *b, size_t n);

/* Bytes reserved now. */
size_t lb_budget_used(struct lb_budget *b);

#endif
