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
    "Fits are least-squares polynomials of degree 0 to 3 in the batch size. Memory is a line (a "
    "fixed part plus a part per sample) unless the data reject it: a higher degree only when "
    "its AICc is lower by more than 10 and the line misses a point by more than 2% of the "
    "largest. Step time takes the degree with the smallest AICc (the corrected Akaike "
    "criterion, which charges every coefficient more the fewer the points), never more than "
    "the points support. Every fit gives its R² (the share of the variation it explains), its "
    "residual standard deviation and how far its projections extrapolate (times the largest "
    "measured batch); its 95% band is the prediction interval of a new point plus, beyond the "
    "measured batches, 25% of the projected increment (the model's own error), so it widens "
    "with the extrapolation. A fit with R² under 0.9, or of runs other processes disturbed, "
    "concludes nothing (no saturation, no best throughput, no largest batch). The hold-out "
    "column shows how well the memory fit without the largest batch predicted it.",
    "Memory is the backend's peak (device_peak_bytes) and how much the process grew during the "
    "run (host_run_peak_bytes, which holds the plan of a CPU backend and what the allocator and "
    "libraries add; the first run of a backend in a file also pays one-time costs and is left "
    "out of that fit); the largest batch that fits comes from the one that allows the fewest. "
    "Energy is measured by the backend's meter or RAPL; W = joules over the timed steps / their "
    "wall time and samples/J = samples/s per W.",
    "! marks a run during which other processes took more than 5% of what it needed of its own "
    "CPUs (its affinity set, as many CPUs as it has threads): its numbers "
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
