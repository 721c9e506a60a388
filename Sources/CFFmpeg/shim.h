#ifndef REEL_CFFMPEG_SHIM_H
#define REEL_CFFMPEG_SHIM_H

#include <malloc.h>
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
#include <libavutil/samplefmt.h>
#include <libavutil/log.h>
#include <libavutil/md5.h>
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

// Header versions (AV_VERSION_INT is a macro Swift cannot evaluate).
static inline unsigned reel_header_avformat_version(void) { return LIBAVFORMAT_VERSION_INT; }
static inline unsigned reel_header_avcodec_version(void) { return LIBAVCODEC_VERSION_INT; }
static inline unsigned reel_header_avutil_version(void) { return LIBAVUTIL_VERSION_INT; }
static inline unsigned reel_header_swscale_version(void) { return LIBSWSCALE_VERSION_INT; }
static inline unsigned reel_header_swresample_version(void) { return LIBSWRESAMPLE_VERSION_INT; }
static inline unsigned reel_header_avfilter_version(void) { return LIBAVFILTER_VERSION_INT; }

#endif
