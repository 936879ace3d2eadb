/* The one fact about a stand-in stream that another stand-in library may rely on: the stream's
 * first member points to this table. The NCCL stand-in is a separate shared object that the
 * plugin loads with dlopen, while the runtime stand-in is linked statically into the plugin
 * (hidden), so the NCCL stand-in reaches the runtime through the cudaStream_t it is handed: its
 * collectives are then stream work like any other, recorded into a graph while the stream
 * captures and executed when the graph is launched, as NCCL's are on a GPU. */
#ifndef XPBSI_STREAM_ABI_H
#define XPBSI_STREAM_ABI_H

#define XPBSI_STREAM_ABI_MAGIC 0x78706273u /* "xpbs" */
#define XPBSI_STREAM_ABI_VERSION 1u

typedef struct xpbsi_stream_abi {
    unsigned magic;   /* XPBSI_STREAM_ABI_MAGIC */
    unsigned version; /* XPBSI_STREAM_ABI_VERSION */
    /* Runs fn(arg) in the order of `stream` (at once, or each time a graph captured from the
     * stream is launched); release(arg), when not NULL, is called once the work can never run
     * again (after it ran, or when its graph is destroyed). `what` names the work in
     * diagnostics. Returns a cudaError_t value (cudaSuccess = 0). */
    int (*enqueue)(void *stream, const char *what, void (*fn)(void *arg), void *arg,
                   void (*release)(void *arg));
} xpbsi_stream_abi;

#endif
