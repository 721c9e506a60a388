#ifndef REEL_CLIBASS_SHIM_H
#define REEL_CLIBASS_SHIM_H

#include <ass/ass.h>

// The header's version, for the test that compares it with ass_library_version().
static inline int reel_ass_header_version(void) { return LIBASS_VERSION; }

// Calls that exist only in newer libass, behind one function each: Swift sees the same
// signatures whichever version the headers are. Each returns 1 when the feature is on.

// Break lines where Unicode allows (CJK text without spaces), libass ≥ 0.16.0 (0x01600010).
static inline int reel_ass_wrap_unicode(ASS_Track *track) {
#if LIBASS_VERSION >= 0x01600010
    return ass_track_set_feature(track, ASS_FEATURE_WRAP_UNICODE, 1) == 0 ? 1 : 0;
#else
    (void)track;
    return 0;
#endif
}

// A log callback that drops libass's messages (it prints to stderr by default; Reel is
// quiet unless asked). libass passes a va_list, which Swift cannot take.
static inline void reel_ass_quiet_log(int level, const char *fmt, va_list args, void *data) {
    (void)level; (void)fmt; (void)args; (void)data;
}
static inline void reel_ass_set_quiet(ASS_Library *library) {
    ass_set_message_cb(library, reel_ass_quiet_log, 0);
}

#endif
