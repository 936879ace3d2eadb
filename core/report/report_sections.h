/* The sections of a report, each built by its own file from the report's run index
 * (report_runs.h) and appended to r->sections in the order xpb_report_build calls them.
 * docs/report.md says what each shows. Each returns XPB_OK or XPB_OUT_OF_MEMORY. */
#ifndef XPB_CORE_REPORT_SECTIONS_H
#define XPB_CORE_REPORT_SECTIONS_H

#include "report/report_model.h"

/* report_env.c: environment and provenance of every document, and the devices the runs used. */
xpb_status xpb_report_env(xpb_report *r);

/* report_speedup.c: backend speedups in the study's shape (model rows, backend columns), each
 * with its 95% interval, and a chart of them. */
xpb_status xpb_report_speedups(xpb_report *r);

/* report_fusion.c: fused against unfused runs per model, the step time fusion saves and, where
 * both runs were profiled, where their steps go by op kind. */
xpb_status xpb_report_fusion(xpb_report *r);

/* report_precision.c: fp32 against the other precision policies, with the losses and a chart of
 * their loss curves. */
xpb_status xpb_report_precision(xpb_report *r);

/* report_batch.c: memory and step time against batch size with the fitted curves, the
 * projection, the largest batch that fits the memory budget and where throughput saturates. */
xpb_status xpb_report_batch(xpb_report *r);

/* report_threads.c: throughput against threads with the scaling over the fewest threads. */
xpb_status xpb_report_threads(xpb_report *r);

/* report_roofline.c: for every profiled run on a device with a known peak and bandwidth, its
 * ops by kind and its whole step against both ceilings (a log-log chart and a table). */
xpb_status xpb_report_roofline(xpb_report *r);

/* report_surface.c: ParaDnn's surfaces: a heat map of a metric (r->opts.surface_metric, the
 * fraction of peak by default) over every two swept axes, and speedup against parameter
 * count. */
xpb_status xpb_report_surfaces(xpb_report *r);

/* report_energy.c: samples/s, W and samples/J at batch 1 and 128 (the study's energy table),
 * every measured run's joules, and why energy was not measured where it was not. */
xpb_status xpb_report_energy(xpb_report *r);

/* report_tta.c: time and energy to the target of time-to-accuracy runs, with their spread and
 * the reference check, and test accuracy against time; no section without such runs. */
xpb_status xpb_report_tta(xpb_report *r);

/* report_interference.c: the runs that other processes disturbed. */
xpb_status xpb_report_interference(xpb_report *r);

/* report_all_runs.c: every run, as `xpubench show` lists them, with the runs that did not
 * finish and their errors. */
xpb_status xpb_report_all_runs(xpb_report *r);

/* report_method.c: how the numbers were computed (intervals, fits, sources). */
xpb_status xpb_report_method(xpb_report *r);

#endif
