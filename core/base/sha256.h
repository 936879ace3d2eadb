/* SHA-256 (FIPS 180-4), for scenario and result hashes. Self-contained: no library needed. */
#ifndef XPB_CORE_SHA256_H
#define XPB_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Incremental interface, for data that arrives in pieces (a file plus its --set overrides). */
struct xpb_sha256_ctx {
    uint32_t state[8];
    uint64_t bytes;    /* total message length so far */
    uint8_t block[64]; /* pending bytes of the current block */
    size_t used;       /* how many of block[] are filled */
};

void xpb_sha256_init(struct xpb_sha256_ctx *ctx);
void xpb_sha256_update(struct xpb_sha256_ctx *ctx, const void *data, size_t len);
/* Writes the 32-byte digest; ctx must be initialised again before reuse. */
void xpb_sha256_final(struct xpb_sha256_ctx *ctx, uint8_t out[32]);

/* Lower-case hex of a 32-byte digest, NUL-terminated (65 bytes). */
void xpb_sha256_to_hex(char out[65], const uint8_t digest[32]);

/* One-shot digest of `len` bytes at `data` (data may be NULL when len is 0). */
void xpb_sha256(uint8_t out[32], const void *data, size_t len);
/* One-shot digest as 64 lower-case hex digits plus NUL. */
void xpb_sha256_hex(char out[65], const void *data, size_t len);

#endif
