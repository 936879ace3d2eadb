/* How the report's numbers were computed (see report_sections.h), written at the end of every
 * report so that a reader of the page alone knows the method (docs/report.md says the same). */
#include "report/report_sections.h"

static const char *const paragraphs[] = {
    "Throughput is the samples per second of each timed repeat (its steps × batch / its "
    "seconds); tables show the median over the repeats. Its 95% interval is Student's "
    "t-interval on the mean of the logarithms of the repeat throughputs, exponentiated: an "
    "interval for the geometric mean. Repeats, not steps, are the unit of replication: the "
    "steps of one repeat are not independent of each other.",
    "A speedup is the ratio of two runs' geometric mean throughputs; its 95% interval is "
    "Welch's t-interval on the difference of their mean log throughputs (Welch-Satterthwaite "
    "degrees of freedom), exponentiated. It needs at least two repeats on each side. A speedup "
    "whose interval contains 1 is marked n.s.: no significant difference. † marks a speedup the "
    "report computed from the repeats in the same way because the file (schema version 1) "
    "records none.",
    "Fits are least-squares polynomials of degree 0 to 3 in the batch size; the degree is the "
    "one with the smallest leave-one-out error (each point predicted by the fit to the others), "
    "so that a curve is only as bent as the points show. R² is the share of the variation the "
    "fit explains. Projections beyond the largest measured batch are extrapolations: the "
    "hold-out column shows how well the fit without the largest batch predicted it.",
    "Memory is the backend's peak (device_peak_bytes) where the backend reports it, otherwise "
    "how much the host process grew during the run (host_run_peak_bytes). Energy is measured "
    "by the backend's meter or RAPL; W = joules over the timed steps / their wall time and "
    "samples/J = samples/s per W.",
    "! marks a run during which other processes took more than 5% of the machine: its numbers "
    "are not its own. Every number in the tables is the file's, formatted with four significant "
    "digits (integers in full); the HTML page keeps each one's exact value and its place in the "
    "file (data-v, data-src attributes). Numbers without a place (fits, shares, projections) "
    "are derived from the file's.",
};

xpb_status xpb_report_method(xpb_report *r)
{
    xpb_report_section *s = xpb_report_section_new(r, "method", "Method");
    if (!s)
        return XPB_OUT_OF_MEMORY;
    for (size_t i = 0; i < sizeof paragraphs / sizeof paragraphs[0]; i++)
        if (xpb_report_text(r, s, "%s", paragraphs[i]) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    return XPB_OK;
}
