#ifndef REEL_CFFMPEG_SHIM_H
#define REEL_CFFMPEG_SHIM_H

#include <malloc.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libavutil/channel_layout.h>
#include <libavutil/display.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/dovi_meta.h>
#include <libavutil/samplefmt.h>
#include <libavutil/log.h>
#include <libavutil/md5.h>
#include <libavutil/sha.h>
#include <libavutil/audio_fifo.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersrc.h>
#include <libavfilter/buffersink.h>

// Macros Swift cannot import, as static inline shims.
static inline int reel_averror(int errnum) { return AVERROR(errnum); }
static inline int reel_averror_eof(void) { return AVERROR_EOF; }
static inline int reel_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int reel_averror_exit(void) { return AVERROR_EXIT; }
static inline int reel_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int64_t reel_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int reel_avseek_size(void) { return AVSEEK_SIZE; }
static inline int reel_avseek_force(void) { return AVSEEK_FORCE; }
static inline int reel_av_time_base(void) { return AV_TIME_BASE; }
static inline AVRational reel_av_time_base_q(void) { return AV_TIME_BASE_Q; }

// APIs that moved between FFmpeg versions, behind one name each.

/// A decoded frame's duration in its time base (`duration` since libavutil 57.30,
/// FFmpeg 6.0; `pkt_duration` before, removed in FFmpeg 7).
static inline int64_t reel_frame_duration(const AVFrame *frame) {
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(57, 30, 100)
    return frame->duration;
#else
    return frame->pkt_duration;
#endif
}

/// The callbacks through which a format context opens nested resources (HLS/DASH playlists,
/// segments, keys). `io_close2` (libavformat 59.10, FFmpeg 5.0) replaces `io_close`, which
/// FFmpeg 7 removed; the close callback returns an error code either way and the shim drops
/// it where `io_close` cannot return one.
typedef int (*ReelIOOpen)(AVFormatContext *_Nonnull s, AVIOContext *_Nullable *_Nonnull pb,
                          const char *_Nonnull url, int flags, AVDictionary *_Nullable *_Nullable options);
typedef int (*ReelIOClose)(AVFormatContext *_Nonnull s, AVIOContext *_Nullable pb);
#if LIBAVFORMAT_VERSION_INT < AV_VERSION_INT(59, 10, 100)
static ReelIOClose reel_io_close_target;
static inline void reel_io_close_void(AVFormatContext *s, AVIOContext *pb) { (void)reel_io_close_target(s, pb); }
#endif
static inline void reel_set_io_callbacks(AVFormatContext *_Nonnull s, ReelIOOpen _Nonnull open, ReelIOClose _Nonnull close) {
    s->io_open = (int (*)(struct AVFormatContext *, AVIOContext **, const char *, int, AVDictionary **))open;
#if LIBAVFORMAT_VERSION_INT >= AV_VERSION_INT(59, 10, 100)
    s->io_close2 = (int (*)(struct AVFormatContext *, AVIOContext *))close;
#else
    reel_io_close_target = close;
    s->io_close = reel_io_close_void;
#endif
}

/// Whether a decoded frame is a key frame (`AV_FRAME_FLAG_KEY` in `flags` since libavutil
/// 58.7, FFmpeg 6.1; `key_frame` before, removed in FFmpeg 8).
static inline int reel_frame_is_key(const AVFrame *_Nonnull frame) {
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 7, 100)
    return (frame->flags & AV_FRAME_FLAG_KEY) != 0;
#else
    return frame->key_frame != 0;
#endif
}

/// A stream's side data of `type` (in the stream's `codecpar->coded_side_data` since
/// libavcodec 60.29, FFmpeg 6.1; `av_stream_get_side_data` before, removed in FFmpeg 8),
/// or NULL with `*size` 0.
static inline const uint8_t *_Nullable reel_stream_side_data(
    const AVStream *_Nonnull stream, enum AVPacketSideDataType type, size_t *_Nonnull size) {
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 29, 100)
    const AVPacketSideData *data = av_packet_side_data_get(
        stream->codecpar->coded_side_data, stream->codecpar->nb_coded_side_data, type);
    *size = data ? data->size : 0;
    return data ? data->data : NULL;
#else
    size_t found = 0;
    const uint8_t *data = av_stream_get_side_data(stream, type, &found);
    *size = data ? found : 0;
    return data;
#endif
}

/// A stream's Dolby Vision configuration record (AV_PKT_DATA_DOVI_CONF, libavutil 56.54+),
/// read field by field (later FFmpeg versions append fields to the struct). Returns 1 and
/// fills the values when the stream has one, else 0.
static inline int reel_stream_dovi(const AVStream *_Nonnull stream, int *_Nonnull profile, int *_Nonnull level,
                                   int *_Nonnull compatibility, int *_Nonnull baseLayer, int *_Nonnull enhancementLayer,
                                   int *_Nonnull rpu) {
    size_t size = 0;
    const uint8_t *data = reel_stream_side_data(stream, AV_PKT_DATA_DOVI_CONF, &size);
    if (!data || size < 8) return 0;
    const AVDOVIDecoderConfigurationRecord *record = (const AVDOVIDecoderConfigurationRecord *)data;
    *profile = record->dv_profile;
    *level = record->dv_level;
    *compatibility = record->dv_bl_signal_compatibility_id;
    *baseLayer = record->bl_present_flag;
    *enhancementLayer = record->el_present_flag;
    *rpu = record->rpu_present_flag;
    return 1;
}

/// Adds `size` zeroed bytes of side data of `type` to a stream being muxed (set after
/// `avcodec_parameters_from_context`, before the header is written); NULL when out of
/// memory. `av_packet_side_data_new` on `codecpar` since libavcodec 60.29 (FFmpeg 6.1),
/// `av_stream_new_side_data` before (removed in FFmpeg 8).
static inline uint8_t *_Nullable reel_stream_new_side_data(
    AVStream *_Nonnull stream, enum AVPacketSideDataType type, size_t size) {
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 29, 100)
    AVPacketSideData *data = av_packet_side_data_new(
        &stream->codecpar->coded_side_data, &stream->codecpar->nb_coded_side_data, type, size, 0);
    if (!data) return NULL;
    memset(data->data, 0, size);
    return data->data;
#else
    return av_stream_new_side_data(stream, type, size);
#endif
}

// libavfilter, loaded on first use. Linking it would load its 30-odd dependencies
// (speech synthesis voices, LAPACK, Vulkan…) into every process, about 11 MB resident,
// although only time-stretching at a rate other than 1 and the clip encoder need it.
// The pointers take their types from the headers Reel is built against.
#define REEL_LAVFI_FUNCTIONS(X) \
    X(avfilter_version) X(avfilter_graph_alloc) X(avfilter_graph_free) X(avfilter_get_by_name) \
    X(avfilter_graph_create_filter) X(avfilter_link) X(avfilter_graph_config) \
    X(avfilter_graph_send_command) X(avfilter_graph_parse_ptr) X(avfilter_inout_alloc) \
    X(avfilter_inout_free) X(av_buffersrc_add_frame) X(av_buffersink_get_frame) \
    X(av_buffersink_get_time_base)

typedef struct ReelLavfi {
#define REEL_LAVFI_FIELD(name) __typeof__(name) *_Nonnull name;
    REEL_LAVFI_FUNCTIONS(REEL_LAVFI_FIELD)
#undef REEL_LAVFI_FIELD
} ReelLavfi;

/// Fills `table` with libavfilter's functions and returns 1, or writes why not into `error`
/// and returns 0. Keeps no state: the caller loads once (the library stays loaded).
static inline int reel_lavfi_load(ReelLavfi *_Nonnull table, char *_Nonnull error, size_t capacity) {
    char name[64];
    snprintf(name, sizeof name, "libavfilter.so.%d", LIBAVFILTER_VERSION_MAJOR);
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(error, capacity, "%s", dlerror());
        return 0;
    }
#define REEL_LAVFI_LOAD(symbol) \
    *(void **)&table->symbol = dlsym(library, #symbol); \
    if (!table->symbol) { \
        snprintf(error, capacity, "%s: no %s", name, #symbol); \
        return 0; \
    }
    REEL_LAVFI_FUNCTIONS(REEL_LAVFI_LOAD)
#undef REEL_LAVFI_LOAD
    return 1;
}

// libswscale: FFmpeg 8 made struct SwsContext public, so Swift sees a typed pointer where 5.1
// to 7 gave an opaque one, and turned the SWS_* flags into an enum (SwsFlags). Reel holds the
// context as an untyped pointer and passes flags as int through these, on every version.
typedef void *reel_sws_context;
static inline int reel_sws_area(void) { return SWS_AREA; }
static inline int reel_sws_bilinear(void) { return SWS_BILINEAR; }
static inline int reel_sws_bicubic(void) { return SWS_BICUBIC; }
static inline reel_sws_context reel_sws_get_cached_context(reel_sws_context context, int srcW, int srcH,
                                                           enum AVPixelFormat srcFormat, int dstW, int dstH,
                                                           enum AVPixelFormat dstFormat, int flags) {
    return sws_getCachedContext((struct SwsContext *)context, srcW, srcH, srcFormat, dstW, dstH, dstFormat,
                                flags, NULL, NULL, NULL);
}
static inline void reel_sws_free_context(reel_sws_context context) { sws_freeContext((struct SwsContext *)context); }
// A new context whose source chroma sits where the frame says: `chromaX`, `chromaY` in 1/256 of a
// luma sample from the first luma sample (0 co-sited, 128 halfway; swscale's own default, -513,
// is the centre). sws_getCachedContext cannot set these; the AVOption names are the same on 5.1
// to 8. Accurate rounding keeps swscale off its unscaled YUV-to-RGB shortcut (which takes the
// nearest chroma sample and ignores the siting), full chroma interpolation upsamples chroma to
// every output pixel instead of every other. NULL when swscale refuses the conversion.
static inline reel_sws_context reel_sws_sited_context(int srcW, int srcH, enum AVPixelFormat srcFormat, int dstW,
                                                      int dstH, enum AVPixelFormat dstFormat, int flags,
                                                      int chromaX, int chromaY) {
    struct SwsContext *context = sws_alloc_context();
    if (!context) return NULL;
    if (av_opt_set_int(context, "srcw", srcW, 0) < 0 || av_opt_set_int(context, "srch", srcH, 0) < 0 ||
        av_opt_set_int(context, "src_format", srcFormat, 0) < 0 || av_opt_set_int(context, "dstw", dstW, 0) < 0 ||
        av_opt_set_int(context, "dsth", dstH, 0) < 0 || av_opt_set_int(context, "dst_format", dstFormat, 0) < 0 ||
        av_opt_set_int(context, "sws_flags", flags | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, 0) < 0 || av_opt_set_int(context, "src_h_chr_pos", chromaX, 0) < 0 ||
        av_opt_set_int(context, "src_v_chr_pos", chromaY, 0) < 0 || sws_init_context(context, NULL, NULL) < 0) {
        sws_freeContext(context);
        return NULL;
    }
    return (reel_sws_context)context;
}
static inline int reel_sws_scale(reel_sws_context context, const uint8_t *const source[], const int sourceStride[],
                                 int sliceY, int sliceH, uint8_t *const destination[], const int destinationStride[]) {
    return sws_scale((struct SwsContext *)context, source, sourceStride, sliceY, sliceH, destination, destinationStride);
}
static inline int reel_sws_get_colorspace_details(reel_sws_context context, int **inverse, int *sourceRange, int **table,
                                                  int *destinationRange, int *brightness, int *contrast, int *saturation) {
    return sws_getColorspaceDetails((struct SwsContext *)context, inverse, sourceRange, table, destinationRange,
                                    brightness, contrast, saturation);
}
static inline int reel_sws_set_colorspace_details(reel_sws_context context, const int inverse[4], int sourceRange,
                                                  const int table[4], int destinationRange, int brightness, int contrast,
                                                  int saturation) {
    return sws_setColorspaceDetails((struct SwsContext *)context, inverse, sourceRange, table, destinationRange,
                                    brightness, contrast, saturation);
}

// Header versions (AV_VERSION_INT is a macro Swift cannot evaluate).
static inline unsigned reel_header_avformat_version(void) { return LIBAVFORMAT_VERSION_INT; }
static inline unsigned reel_header_avcodec_version(void) { return LIBAVCODEC_VERSION_INT; }
static inline unsigned reel_header_avutil_version(void) { return LIBAVUTIL_VERSION_INT; }
static inline unsigned reel_header_swscale_version(void) { return LIBSWSCALE_VERSION_INT; }
static inline unsigned reel_header_swresample_version(void) { return LIBSWRESAMPLE_VERSION_INT; }
static inline unsigned reel_header_avfilter_version(void) { return LIBAVFILTER_VERSION_INT; }

#endif
