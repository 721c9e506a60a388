#!/usr/bin/env bash
# Builds the newest FFmpeg release from its source, small (what Reel and its tests use), into a
# prefix; builds Reel against it through pkg-config; runs the player's corpus tests against it.
# Not part of CI: it takes minutes. Needs Debian's build packages (installed with apt-get when
# run as root) and the FFmpeg release tarball: from ffmpeg.org, or else the same release's
# original tarball from Debian's archive (unless FFMPEG_TARBALL or FFMPEG_SOURCE points at one
# already here).
#
#   scripts/ffmpeg-from-source.sh                  # FFmpeg 9.0.2 into /tmp/reel-ffmpeg-9.0.2
#   FFMPEG_VERSION=8.1.2 scripts/ffmpeg-from-source.sh
#   FFMPEG_SOURCE=~/src/ffmpeg scripts/ffmpeg-from-source.sh
#
# Environment: FFMPEG_VERSION, FFMPEG_SOURCE (an unpacked source tree), FFMPEG_TARBALL,
# PREFIX (where FFmpeg goes), SCRATCH (Reel's build directory for this FFmpeg), JOBS,
# TEST_FILTER (the suites to run; default: the player's corpus and the bridges).
# Exit status: 0 when the tests pass, else the failing step's.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

version=${FFMPEG_VERSION:-9.0.2}
prefix=${PREFIX:-/tmp/reel-ffmpeg-$version}
scratch=${SCRATCH:-/tmp/reel-build-ffmpeg-$version}
jobs=${JOBS:-$(nproc)}
filter=${TEST_FILTER:-'ReelMediaTests|SystemLibraryTests|MutatedMedia'}

step() { printf '\n== %s\n' "$*"; }

# Debian packages: the toolchain bits and the external codecs the fixtures are made with
# (libx264, libx265, libvpx, libaom, libopus, libmp3lame), dav1d for AV1, libxml2 for DASH,
# freetype and harfbuzz for drawtext (titles drawn on demo clips), GnuTLS for the https
# protocol (below).
packages=(build-essential pkg-config nasm curl xz-utils libgnutls28-dev
          libdav1d-dev libx264-dev libx265-dev libvpx-dev libaom-dev libopus-dev libmp3lame-dev
          libxml2-dev libfreetype-dev libharfbuzz-dev zlib1g-dev)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    step "installing ${missing[*]}"
    if [ "$(id -u)" -eq 0 ]; then apt-get install -y --no-install-recommends "${missing[@]}"
    else sudo apt-get install -y --no-install-recommends "${missing[@]}"; fi
fi

if [ -z "${FFMPEG_SOURCE:-}" ]; then
    tarball=${FFMPEG_TARBALL:-/tmp/ffmpeg-$version.tar.xz}
    if [ ! -f "$tarball" ]; then
        step "downloading FFmpeg $version"
        # Debian's archive keeps the release tarball as uploaded (ffmpeg_<version>.orig.tar.xz).
        if curl -fL --retry 2 -m 300 -o "$tarball.part" "https://ffmpeg.org/releases/ffmpeg-$version.tar.xz" \
            || curl -fL --retry 2 -m 300 -o "$tarball.part" "http://deb.debian.org/debian/pool/main/f/ffmpeg/ffmpeg_$version.orig.tar.xz"; then
            mv "$tarball.part" "$tarball"
        else
            echo "ffmpeg-from-source.sh: cannot download FFmpeg $version (set FFMPEG_TARBALL or FFMPEG_SOURCE)" >&2
            exit 1
        fi
    fi
    FFMPEG_SOURCE=/tmp/ffmpeg-$version
    if [ ! -f "$FFMPEG_SOURCE/configure" ]; then
        rm -rf "$FFMPEG_SOURCE"
        mkdir -p "$FFMPEG_SOURCE"
        tar -xJf "$tarball" -C "$FFMPEG_SOURCE" --strip-components=1
    fi
fi

# libpostproc left FFmpeg in 8.0; older releases build it under --enable-gpl unless told not to.
# drawtext needs libharfbuzz beside libfreetype in newer releases (8.1.2, 9.0.2); older ones
# have no such option. configure drops a listed component whose dependencies are off, or whose
# name it does not know, with only a warning: those warnings stop the script (below), and the
# filters a listed one is built on are listed too (negate on lut).
optional=()
"$FFMPEG_SOURCE/configure" --help | grep -q -- --disable-postproc && optional+=(--disable-postproc)
"$FFMPEG_SOURCE/configure" --help | grep -q -- --enable-libharfbuzz && optional+=(--enable-libharfbuzz)
# The http, https (through GnuTLS, as Debian builds it) and crypto protocols are never used to
# open anything — Reel's loader opens every URL and the demuxers get an empty protocol
# whitelist — but the HLS demuxer looks a segment's scheme up among the protocols built in and
# refuses one it does not know. The dash muxer packages the DASH fixture.
configuration=(--prefix="$prefix"
    --enable-shared --disable-static --disable-programs --disable-doc
    --disable-autodetect --enable-pthreads --enable-zlib
    --disable-everything --disable-avdevice "${optional[@]}"
    --enable-avformat --enable-avcodec --enable-swscale --enable-swresample --enable-avfilter
    --enable-gpl --enable-libx264 --enable-libx265 --enable-libvpx --enable-libaom
    --enable-libdav1d --enable-libopus --enable-libmp3lame --enable-libxml2 --enable-libfreetype
    --enable-gnutls
    --enable-protocol=file,pipe,data,http,https,tcp,tls,crypto
    --enable-demuxer=mov,matroska,hls,dash,avi,wav,mp3,aac,ogg,flac,mpegts,image2,image_png_pipe,image_jpeg_pipe,image_webp_pipe,concat
    --enable-muxer=mp4,mov,matroska,webm,avi,wav,null,framemd5,image2,mjpeg,mpegts,hls,dash
    --enable-decoder=h264,hevc,vp8,vp9,mpeg4,libdav1d,aac,opus,mp3,mp3float,flac,vorbis,pcm_s16le,pcm_f32le,png,mjpeg,webp,rawvideo
    --enable-encoder=libx264,libx265,mpeg4,libvpx_vp9,libaom_av1,aac,libopus,libmp3lame,png,mjpeg,pcm_s16le,rawvideo,wrapped_avframe
    --enable-parser=h264,hevc,vp8,vp9,av1,aac,opus,mpegaudio,mpeg4video,png,mjpeg,flac,vorbis,webp
    --enable-bsf=aac_adtstoasc,h264_mp4toannexb,hevc_mp4toannexb,extract_extradata,vp9_superframe,vp9_superframe_split,av1_frame_split,av1_frame_merge,null
    --enable-filter=buffer,buffersink,abuffer,abuffersink,atempo,aformat,aresample,asetnsamples,anull,null,volume,sine,trim,atrim,format,scale,color,hstack,vstack,drawtext,testsrc,testsrc2,smptehdbars,rgbtestsrc,colorchart,colorspectrum,mandelbrot,life,gradients,cellauto,sierpinski,hue,negate,lut,fps,setpts,asetpts,settb,asettb,pad,crop)
# An installed prefix is reused only when it was configured exactly so.
stamp="$prefix/share/reel-ffmpeg-configuration"
if [ ! -f "$prefix/lib/pkgconfig/libavformat.pc" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${configuration[*]}" ]; then
    step "configuring FFmpeg $version (small) for $prefix"
    build=$(mktemp -d /tmp/ffmpeg-build.XXXXXX)
    (
        cd "$build"
        "$FFMPEG_SOURCE/configure" "${configuration[@]}" | tee configure.out
        if grep -E 'WARNING: (Disabled .* because not all dependencies|Option .* did not match)' configure.out; then
            echo "ffmpeg-from-source.sh: FFmpeg $version leaves out components Reel uses (above)" >&2
            exit 1
        fi
        step "building FFmpeg with $jobs jobs"
        make -j"$jobs"
        make install
    )
    rm -rf "$build"
    mkdir -p "$(dirname "$stamp")"
    printf '%s' "${configuration[*]}" > "$stamp"
fi

# SwiftPM reads the .pc files itself and drops only -L/usr/lib from them, so the other system
# libraries' pkg-config names (SDL2_ttf, sdl2, libargon2) put -L/usr/lib/<multiarch> on the link
# line, and where one of them comes before CFFmpeg (the test binary) the linker takes the
# system's libavcodec over the prefix's. Copies of those .pc files without their -L, ahead in
# PKG_CONFIG_PATH, keep the prefix's directory the first one searched; the compiler driver still
# searches the system's directory after it. The rpath makes the binaries (and the libavfilter
# that ReelMedia opens) load the prefix's libraries without LD_LIBRARY_PATH.
shadow="$scratch/system-pkgconfig"
rm -rf "$shadow"
mkdir -p "$shadow"
queue=($(sed -n 's/.*pkgConfig: *"\([^"]*\)".*/\1/p' Package.swift | grep -v '^libav'))
for ((i = 0; i < ${#queue[@]}; i++)); do
    name=${queue[$i]}
    [ -f "$shadow/$name.pc" ] && continue
    sed '/^Libs:/ s/-L *\${libdir}//' "$(pkg-config --variable=pcfiledir "$name")/$name.pc" > "$shadow/$name.pc"
    queue+=($(pkg-config --print-requires "$name" | awk '{print $1}'))
done
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$shadow${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
step "FFmpeg for Reel: $(pkg-config --modversion libavformat) (libavformat) from $prefix"
link=(-Xlinker -rpath -Xlinker "$prefix/lib")

step "building Reel against it in $scratch"
swift build --build-tests --scratch-path "$scratch" -j "$jobs" "${link[@]}"
step "version"
"$scratch/debug/reel" version
if ldd "$scratch/debug/reel" | grep -E 'lib(avformat|avcodec|avutil|swscale|swresample)\.' | grep -v "$prefix/lib/"; then
    echo "ffmpeg-from-source.sh: reel loads an FFmpeg library from outside $prefix (above)" >&2
    exit 1
fi

step "the player's corpus tests: $filter"
swift test --skip-build --scratch-path "$scratch" "${link[@]}" --filter "$filter"
step "FFmpeg $version: passed"
