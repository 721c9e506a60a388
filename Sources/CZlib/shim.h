#ifndef REEL_CZLIB_SHIM_H
#define REEL_CZLIB_SHIM_H
// zlib: the terminal's kitty graphics frames are sent compressed (o=z).
#include <zlib.h>
#endif
