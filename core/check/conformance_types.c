/* The spelling of conformance verdicts (see conformance_types.h). */
#include "check/conformance_types.h"

static const char *const verdict_names[XPB_CONFORMANCE_VERDICT_COUNT] = {
    [XPB_CONFORMANCE_PASS] = "PASS",
    [XPB_CONFORMANCE_FAIL] = "FAIL",
    [XPB_CONFORMANCE_UNSUPPORTED] = "UNSUPPORTED",
    [XPB_CONFORMANCE_ERROR] = "ERROR",
};

const char *xpb_conformance_verdict_name(uint32_t verdict)
{
    return verdict < XPB_CONFORMANCE_VERDICT_COUNT ? verdict_names[verdict] : "?";
}
