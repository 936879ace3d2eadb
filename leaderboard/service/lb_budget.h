/* A budget shared by concurrent requests, in units of the caller's choice. The service keeps
 * two: the bytes that upload bodies being received may hold together (an upload reserves its
 * announced size, or the body limit when it does not announce one, before any of its body is
 * read, and gives it back when done; when the budget is spent, new uploads are refused with 503
 * instead of growing the service's memory), and the rankings pages rendered at once (so that
 * expensive renders never occupy every worker thread). Thread-safe. */
#ifndef LB_BUDGET_H
#define LB_BUDGET_H

#include <stddef.h>

struct lb_budget;

/* NULL when out of memory. The caller owns it: lb_budget_free. */
struct lb_budget *lb_budget_new(size_t capacity);
void lb_budget_free(struct lb_budget *b);

/* Reserves n bytes: 1 when granted, 0 when fewer than n are left (nothing is reserved). */
int lb_budget_take(struct lb_budget *b, size_t n);

/* lb_budget_take, waiting up to `seconds` for enough to be given back: 1 when granted. */
int lb_budget_wait(struct lb_budget *b, size_t n, double seconds);

/* Gives back n bytes reserved by lb_budget_take. */
void lb_budget_give(struct lb_budget *b, size_t n);

/* Bytes reserved now. */
size_t lb_budget_used(struct lb_budget *b);

#endif
