#ifndef REEL_CSDL2_SHIM_H
#define REEL_CSDL2_SHIM_H

#include <SDL2/SDL.h>
#include <SDL2/SDL_ttf.h>

#endif
