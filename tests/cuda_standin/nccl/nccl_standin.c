/* The NCCL stand-in (tests only): the NCCL 2 functions the cuda plugin loads with dlopen
 * (XPB_NCCL_LIBRARY=<this library>), for ranks that are processes of one host, with device
 * memory that is host memory (the CUDA runtime stand-in). Semantics follow NCCL's API
 * documentation: ncclGetUniqueId makes the id rank 0 hands the others; ncclCommInitRank
 * "implicitly synchronizes with other ranks" (with a non-blocking configuration it returns
 * ncclInProgress and completes in the background, polled with ncclCommGetAsyncError);
 * ncclAllReduce "reduces data arrays of length count in sendbuff using op operation and leaves
 * identical copies of the result in each recvbuff", in place when sendbuff == recvbuff, as work
 * on the given stream: run in stream order, recorded into a graph while the stream captures
 * (through the stream's xpbsi_stream_abi, include/xpbsi/stream_abi.h). Every rank reduces the
 * ranks' values in rank order, so all get the same bits; ncclAvg is the sum divided by the
 * number of ranks. The ranks meet in a POSIX shared-memory segment named by the unique id
 * (unlinked once all ranks attached); a rank that aborts, or does not arrive within
 * XPB_STANDIN_NCCL_TIMEOUT seconds (default 120), makes the others' collectives fail with an
 * asynchronous error. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nccl.h>

#include "xpbsi/stream_abi.h"

#define COMM_MAGIC 0x4e43434cu /* "NCCL" */
#define SLOT_BYTES ((size_t)1 << 20)
#define MAX_RANKS 64
#define ID_PREFIX "xpbsi-nccl:"

struct shm_hdr {
    _Atomic uint32_t nranks; /* set by the first rank that attaches */
    _Atomic uint64_t rank_mask;
    _Atomic uint32_t joined;
    _Atomic uint32_t count; /* barrier arrivals */
    _Atomic uint32_t gen;   /* barrier generation */
    _Atomic uint32_t aborted;
};

struct ncclComm {
    uint32_t magic;
    int rank, nranks, device;
    char name[NCCL_UNIQUE_ID_BYTES];
    struct shm_hdr *hdr;
    unsigned char *slots;
    size_t map_len;
    _Atomic int async; /* ncclSuccess, ncclInProgress or the first asynchronous error */
    char last[256];
    pthread_t init_thread;
    int init_pending;
};

static _Thread_local char t_last[256];
static _Thread_local int t_group;

static void say(ncclComm_t comm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(ncclComm_t comm, const char *fmt, ...)
{
    char *buf = comm ? comm->last : t_last;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof t_last, fmt, ap);
    va_end(ap);
    if (getenv("NCCL_DEBUG"))
        fprintf(stderr, "xpbsi nccl: %s\n", buf);
}

static double timeout_s(void)
{
    const char *v = getenv("XPB_STANDIN_NCCL_TIMEOUT");
    double s = v && v[0] ? atof(v) : 0.0;
    return s > 0.0 ? s : 120.0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pause_briefly(void)
{
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
}

/* Waits until every rank arrived: ncclSuccess, or ncclRemoteError when a rank aborted and
 * ncclSystemError when one did not arrive in time. */
static ncclResult_t barrier(ncclComm_t comm)
{
    struct shm_hdr *h = comm->hdr;
    uint32_t gen = atomic_load(&h->gen);
    if (atomic_fetch_add(&h->count, 1) == (uint32_t)comm->nranks - 1) {
        atomic_store(&h->count, 0);
        atomic_fetch_add(&h->gen, 1);
        return ncclSuccess;
    }
    double limit = now_s() + timeout_s();
    while (atomic_load(&h->gen) == gen) {
        if (atomic_load(&h->aborted)) {
            say(comm, "rank %d: another rank aborted the communicator", comm->rank);
            return ncclRemoteError;
        }
        if (now_s() > limit) {
            say(comm, "rank %d: the other ranks did not arrive within %.0f s", comm->rank,
                timeout_s());
            return ncclSystemError;
        }
        pause_briefly();
    }
    return ncclSuccess;
}

/* Attaches to the segment and waits for all ranks. */
static ncclResult_t rendezvous(ncclComm_t comm)
{
    comm->map_len = sizeof(struct shm_hdr) + (size_t)comm->nranks * SLOT_BYTES;
    int fd = shm_open(comm->name, O_RDWR | O_CREAT, 0600);
    if (fd < 0) {
        say(comm, "shm_open(%s): %s", comm->name, strerror(errno));
        return ncclSystemError;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 ||
        ((size_t)st.st_size < comm->map_len && ftruncate(fd, (off_t)comm->map_len) != 0)) {
        say(comm, "sizing %s: %s", comm->name, strerror(errno));
        close(fd);
        return ncclSystemError;
    }
    void *p = mmap(NULL, comm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        say(comm, "mmap(%s): %s", comm->name, strerror(errno));
        return ncclSystemError;
    }
    comm->hdr = p;
    comm->slots = (unsigned char *)p + sizeof(struct shm_hdr);
    uint32_t zero = 0;
    if (!atomic_compare_exchange_strong(&comm->hdr->nranks, &zero, (uint32_t)comm->nranks) &&
        zero != (uint32_t)comm->nranks) {
        say(comm, "rank %d says %d ranks, another rank said %u", comm->rank, comm->nranks, zero);
        return ncclInvalidArgument;
    }
    uint64_t bit = (uint64_t)1 << comm->rank;
    if (atomic_fetch_or(&comm->hdr->rank_mask, bit) & bit) {
        say(comm, "rank %d joined twice", comm->rank);
        return ncclInvalidArgument;
    }
    atomic_fetch_add(&comm->hdr->joined, 1);
    double limit = now_s() + timeout_s();
    while (atomic_load(&comm->hdr->joined) < (uint32_t)comm->nranks) {
        if (now_s() > limit) {
            say(comm, "rank %d: only %u of %d ranks joined within %.0f s", comm->rank,
                atomic_load(&comm->hdr->joined), comm->nranks, timeout_s());
            shm_unlink(comm->name);
            return ncclSystemError;
        }
        pause_briefly();
    }
    ncclResult_t r = barrier(comm); /* everyone is attached: the name can go */
    if (comm->rank == 0)
        shm_unlink(comm->name);
    return r;
}

static void *init_in_background(void *arg)
{
    ncclComm_t comm = arg;
    atomic_store(&comm->async, rendezvous(comm));
    return NULL;
}

static size_t type_size(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8:
    case ncclUint8:
        return 1;
    case ncclFloat16:
    case ncclBfloat16:
        return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
        return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
        return 8;
    default:
        return 0;
    }
}

/* fp16 and bf16 <-> fp32, round to nearest even (IEEE 754 binary16; bf16 the top half). */
static float half_to_float(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31u, m = h & 1023u, u;
    if (e == 31)
        u = s | 0x7F800000u | (m << 13);
    else if (e)
        u = s | ((e + 112) << 23) | (m << 13);
    else {
        float f = ldexpf((float)m, -24);
        return s ? -f : f;
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint16_t float_to_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint16_t s = (uint16_t)((u >> 16) & 0x8000u);
    float a = fabsf(f);
    if (a != a)
        return (uint16_t)(s | 0x7E00u);
    if (a >= 65520.0f)
        return (uint16_t)(s | 0x7C00u);
    if (a < 6.103515625e-05f) /* subnormal: multiples of 2^-24, nearest even by rintf */
        return (uint16_t)(s | (uint16_t)rintf(a * 16777216.0f));
    uint32_t e = ((u >> 23) & 255u) - 112, m = u & 0x7FFFFFu;
    uint32_t r = (e << 10) | (m >> 13), rest = m & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (r & 1u)))
        r++;
    return (uint16_t)(s | r);
}

static float bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu))
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static double load(ncclDataType_t t, const unsigned char *p, size_t i)
{
    switch (t) {
    case ncclInt8:
        return ((const int8_t *)p)[i];
    case ncclUint8:
        return ((const uint8_t *)p)[i];
    case ncclInt32:
        return ((const int32_t *)p)[i];
    case ncclUint32:
        return ((const uint32_t *)p)[i];
    case ncclInt64:
        return (double)((const int64_t *)p)[i];
    case ncclUint64:
        return (double)((const uint64_t *)p)[i];
    case ncclFloat16:
        return half_to_float(((const uint16_t *)p)[i]);
    case ncclBfloat16:
        return bf16_to_float(((const uint16_t *)p)[i]);
    case ncclFloat32:
        return ((const float *)p)[i];
    default:
        return ((const double *)p)[i];
    }
}

/* Stores v; floats are rounded once from the fp32 (fp64 for ncclFloat64) accumulation. */
static void store(ncclDataType_t t, unsigned char *p, size_t i, double v)
{
    switch (t) {
    case ncclInt8:
        ((int8_t *)p)[i] = (int8_t)v;
        break;
    case ncclUint8:
        ((uint8_t *)p)[i] = (uint8_t)v;
        break;
    case ncclInt32:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    case ncclUint32:
        ((uint32_t *)p)[i] = (uint32_t)v;
        break;
    case ncclInt64:
        ((int64_t *)p)[i] = (int64_t)v;
        break;
    case ncclUint64:
        ((uint64_t *)p)[i] = (uint64_t)v;
        break;
    case ncclFloat16:
        ((uint16_t *)p)[i] = float_to_half((float)v);
        break;
    case ncclBfloat16:
        ((uint16_t *)p)[i] = float_to_bf16((float)v);
        break;
    case ncclFloat32:
        ((float *)p)[i] = (float)v;
        break;
    default:
        ((double *)p)[i] = v;
        break;
    }
}

static double combine(ncclRedOp_t op, ncclDataType_t t, double a, double b)
{
    double r;
    switch (op) {
    case ncclProd:
        r = a * b;
        break;
    case ncclMax:
        r = a > b ? a : b;
        break;
    case ncclMin:
        r = a < b ? a : b;
        break;
    default:
        r = a + b;
        break;
    }
    /* the accumulation is in the type's own precision for fp32 and below */
    return t == ncclFloat64 || t == ncclInt64 || t == ncclUint64 ? r : (double)(float)r;
}

struct all_reduce {
    ncclComm_t comm;
    const unsigned char *send;
    unsigned char *recv;
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t op;
};

static void run_all_reduce(void *arg)
{
    const struct all_reduce *a = arg;
    ncclComm_t comm = a->comm;
    if (atomic_load(&comm->async) != ncclSuccess)
        return;
    size_t es = type_size(a->type), per = SLOT_BYTES / es;
    for (size_t off = 0; off < a->count; off += per) {
        size_t n = a->count - off < per ? a->count - off : per;
        memcpy(comm->slots + (size_t)comm->rank * SLOT_BYTES, a->send + off * es, n * es);
        ncclResult_t r = barrier(comm);
        for (size_t i = 0; r == ncclSuccess && i < n; i++) {
            double acc = load(a->type, comm->slots, i);
            for (int k = 1; k < comm->nranks; k++)
                acc = combine(a->op, a->type, acc,
                              load(a->type, comm->slots + (size_t)k * SLOT_BYTES, i));
            if (a->op == ncclAvg)
                acc = combine(ncclProd, a->type, acc, 1.0) / comm->nranks;
            store(a->type, a->recv + off * es, i, acc);
        }
        if (r == ncclSuccess)
            r = barrier(comm); /* the slots are read before anyone overwrites them */
        if (r != ncclSuccess) {
            int expected = ncclSuccess;
            atomic_compare_exchange_strong(&comm->async, &expected, (int)r);
            return;
        }
    }
}

static ncclComm_t comm_of(ncclComm_t c)
{
    return c && c->magic == COMM_MAGIC ? c : NULL;
}

static void detach(ncclComm_t comm)
{
    if (comm->init_pending)
        pthread_join(comm->init_thread, NULL);
    if (comm->hdr)
        munmap(comm->hdr, comm->map_len);
    comm->magic = 0;
    free(comm);
}

ncclResult_t ncclGetVersion(int *version)
{
    if (!version)
        return ncclInvalidArgument;
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
    if (!uniqueId)
        return ncclInvalidArgument;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    memset(uniqueId, 0, sizeof *uniqueId);
    snprintf(uniqueId->internal, sizeof uniqueId->internal, ID_PREFIX "/xpbsi-nccl-%d-%lx-%lx",
             (int)getpid(), (long)ts.tv_sec, (long)ts.tv_nsec);
    return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t *config)
{
    if (!comm)
        return ncclInvalidArgument;
    *comm = NULL;
    if (nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks ||
        strncmp(commId.internal, ID_PREFIX, strlen(ID_PREFIX)) != 0) {
        say(NULL, "ncclCommInitRank: rank %d of %d, or an id not made by ncclGetUniqueId", rank,
            nranks);
        return ncclInvalidArgument;
    }
    if (config && config->magic != 0xcafebeef) {
        say(NULL, "ncclCommInitRankConfig: the configuration was not set from "
                  "NCCL_CONFIG_INITIALIZER");
        return ncclInvalidArgument;
    }
    ncclComm_t c = calloc(1, sizeof *c);
    if (!c)
        return ncclSystemError;
    c->magic = COMM_MAGIC;
    c->rank = rank;
    c->nranks = nranks;
    snprintf(c->name, sizeof c->name, "%s", commId.internal + strlen(ID_PREFIX));
    *comm = c;
    if (config && config->blocking == 0) {
        atomic_store(&c->async, ncclInProgress);
        c->init_pending = pthread_create(&c->init_thread, NULL, init_in_background, c) == 0;
        if (!c->init_pending)
            atomic_store(&c->async, ncclSystemError);
        return c->init_pending ? ncclInProgress : ncclSystemError;
    }
    ncclResult_t r = rendezvous(c);
    atomic_store(&c->async, r);
    return r;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    return ncclCommInitRankConfig(comm, nranks, commId, rank, NULL);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    if (!comm_of(comm) || !asyncError)
        return ncclInvalidArgument;
    *asyncError = (ncclResult_t)atomic_load(&comm->async);
    return ncclSuccess;
}

/* Every collective ran when its stream work ran: nothing is left to flush. */
ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    return comm_of(comm) ? ncclSuccess : ncclInvalidArgument;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    if (!comm_of(comm))
        return ncclInvalidArgument;
    detach(comm);
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    if (!comm_of(comm))
        return ncclInvalidArgument;
    if (comm->init_pending)
        pthread_join(comm->init_thread, NULL);
    comm->init_pending = 0;
    if (comm->hdr)
        atomic_store(&comm->hdr->aborted, 1);
    detach(comm);
    return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result)
{
    switch (result) {
    case ncclSuccess:
        return "no error";
    case ncclUnhandledCudaError:
        return "unhandled cuda error";
    case ncclSystemError:
        return "unhandled system error";
    case ncclInternalError:
        return "internal error";
    case ncclInvalidArgument:
        return "invalid argument";
    case ncclInvalidUsage:
        return "invalid usage";
    case ncclRemoteError:
        return "remote process exited or there was a network error";
    case ncclInProgress:
        return "NCCL operation in progress";
    default:
        return "unknown result code";
    }
}

const char *ncclGetLastError(ncclComm_t comm)
{
    return comm_of(comm) ? comm->last : t_last;
}

ncclResult_t ncclGroupStart(void)
{
    t_group++;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
    if (t_group == 0)
        return ncclInvalidUsage;
    t_group--;
    return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream)
{
    if (!comm_of(comm))
        return ncclInvalidArgument;
    int state = atomic_load(&comm->async);
    if (state == ncclInProgress) {
        say(comm, "ncclAllReduce before the non-blocking initialisation completed");
        return ncclInvalidUsage;
    }
    if (state != ncclSuccess)
        return (ncclResult_t)state;
    if (!type_size(datatype) || (unsigned)op > (unsigned)ncclAvg ||
        (count && (!sendbuff || !recvbuff))) {
        say(comm, "ncclAllReduce: type %d, op %d, %zu elements at %p -> %p", (int)datatype, (int)op,
            count, sendbuff, recvbuff);
        return ncclInvalidArgument;
    }
    if (count == 0)
        return ncclSuccess;
    struct all_reduce *a = malloc(sizeof *a);
    if (!a)
        return ncclSystemError;
    *a = (struct all_reduce){comm, sendbuff, recvbuff, count, datatype, op};
    const xpbsi_stream_abi *abi = NULL;
    if (stream && stream != cudaStreamLegacy && stream != cudaStreamPerThread)
        memcpy(&abi, (const void *)stream, sizeof abi);
    if (!abi || abi->magic != XPBSI_STREAM_ABI_MAGIC) {
        run_all_reduce(a); /* the default streams: in order with everything before */
        free(a);
        return ncclSuccess;
    }
    int e = abi->enqueue(stream, "ncclAllReduce", run_all_reduce, a, free);
    if (e != 0) {
        say(comm, "ncclAllReduce: the stream refused the work (cudaError %d)", e);
        return ncclUnhandledCudaError;
    }
    return ncclSuccess;
}
