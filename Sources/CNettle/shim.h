// Nettle (GnuTLS's hash library; libavformat links it already through GnuTLS): MD5 and
// SHA-256 for ReelDigest. Nettle 4 dropped the length argument of the digest functions;
// these wrappers are the one place that knows, so Swift sees one signature.
#include <nettle/version.h>
#include <nettle/md5.h>
#include <nettle/sha2.h>

static inline void reel_md5_digest(struct md5_ctx *ctx, uint8_t *digest) {
#if NETTLE_VERSION_MAJOR >= 4
    md5_digest(ctx, digest);
#else
    md5_digest(ctx, MD5_DIGEST_SIZE, digest);
#endif
}

static inline void reel_sha256_digest(struct sha256_ctx *ctx, uint8_t *digest) {
#if NETTLE_VERSION_MAJOR >= 4
    sha256_digest(ctx, digest);
#else
    sha256_digest(ctx, SHA256_DIGEST_SIZE, digest);
#endif
}
