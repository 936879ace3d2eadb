/* The limits of a results document: one definition for every reader and writer of results,
 * the CLI's (results.c) and the leaderboard's (leaderboard/service/lb_app.h takes its own
 * bounds from here), so that a file one accepts the other accepts. A JSON parser allocates one
 * node per value and object key (jansson: roughly 100-330 bytes each), so bounding the nodes
 * bounds the memory a file of any shape can make a reader spend: a 64 MiB file of `{}` values
 * would be 33 million nodes, several GB. docs/results.md states them. */
#ifndef XPB_CORE_RESULTS_LIMITS_H
#define XPB_CORE_RESULTS_LIMITS_H

/* Bytes of a results file. */
#define XPB_RESULTS_MAX_BYTES (64u * 1024u * 1024u)

/* Values and object keys of a results document (a 256-run sweep holds about 51,000; a run
 * with a per-op profile about 11 more per op of its program). */
#define XPB_RESULTS_MAX_NODES 250000

/* Nesting of a results document, "extra" objects included (the schema's own is 7). */
#define XPB_RESULTS_MAX_DEPTH 16

#endif
