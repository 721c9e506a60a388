#!/usr/bin/env bash
# Installs the Debian packages Reel builds and tests with. Idempotent: packages
# already installed are skipped, and when nothing is missing it does nothing.
# Needs root (or sudo) only when something must be installed.
set -euo pipefail

packages=(
    pkg-config
    # FFmpeg: demux, decode, scale, resample, filter (atempo), and the encoders
    # that make test fixtures and the demo feed.
    libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libavfilter-dev
    # The ffmpeg command: the reference the tests and the corpus script compare every
    # frame with (`-f framemd5`), and the maker of clips shaped like phone uploads.
    ffmpeg
    # python3 (standard library only): scripts/corpus.sh's comparison, and the box
    # patches scripts/corpus-generate.sh makes in the clips the corpus tests generate.
    python3
    # SDL2 and SDL2_ttf: the window, GL context, audio device, text.
    libsdl2-dev libsdl2-ttf-dev
    # nginx: a real origin server for the HTTP loader and cache integration tests.
    nginx-light
    # libass: the window draws captions with it (styled ASS, CJK through fontconfig).
    libass-dev
    # The window under a virtual X server (tests, screenshots): Xvfb, its auth
    # helper, Mesa's software OpenGL (llvmpipe), and a CJK-capable font found
    # through fontconfig for titles.
    xvfb xauth libgl1-mesa-dri fontconfig fonts-wqy-microhei
    # Looking at the window by hand: screenshots of the virtual screen (ImageMagick's
    # `import -window root`) and keys and clicks sent to it (xdotool).
    imagemagick xdotool
    # The terminal renderer's end-to-end test drives Reel inside tmux.
    tmux
    # Accounts (reel serve): SQLite under GRDB, Argon2id password hashing.
    libsqlite3-dev libargon2-dev
    # Digests (ReelDigest): MD5 for the cache's names, SHA-256 for tokens. libavformat-dev
    # pulls it in through GnuTLS already; named here because Reel links it itself.
    nettle-dev
    # zlib (CZlib): the terminal renderer sends kitty graphics frames compressed (o=z).
    zlib1g-dev
    # Pixels in the terminal: xterm as a VT340 (the sixel end-to-end test, under xvfb-run),
    # libsixel's sixel2png (the tests check Reel's sixel against libsixel's reading of it),
    # kitty (the kitty graphics protocol, looked at by hand under Xvfb), and mpv, whose
    # --vo=sixel and --vo=tct reel bench terminal measures beside Reel's outputs.
    xterm libsixel-bin kitty mpv
    # WavPack 5's command: scripts/corpus-generate.sh packs a DSD (DSF) file with it, the
    # WavPack DSD case of the corpus (FFmpeg decodes WavPack DSD but cannot encode it).
    wavpack
)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
else
    echo "setup.sh: missing packages (${missing[*]}) and not root; run as root or install them" >&2
    exit 1
fi

echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
