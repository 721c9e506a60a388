#ifndef REEL_CSDL2_SHIM_H
#define REEL_CSDL2_SHIM_H

#include <SDL2/SDL.h>
#include <SDL2/SDL_ttf.h>
// GL types, enums and PFNGL…PROC function pointer types (no prototypes are linked:
// every GL function is loaded through SDL_GL_GetProcAddress).
#include <SDL2/SDL_opengl.h>

// SDL macros Swift cannot import.
static inline Uint32 reel_sdl_windowpos_centered(void) { return SDL_WINDOWPOS_CENTERED; }

#endif
