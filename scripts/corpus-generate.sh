#!/usr/bin/env bash
# Makes, with the ffmpeg CLI, clips that imitate what phones and editors produce and what
# the real-world corpus (corpus/) misses: late audio, an edit list that starts between key
# frames, rotation and mirror matrices, variable frame rate, 10-bit HEVC with HDR tags, PCM
# and FLAC tracks in MOV/MKV, fragmented MP4 with sidx, truncated files, a first timestamp
# that is not 0, a container that says duration 0, odd audio rates and sample formats.
#
#   scripts/corpus-generate.sh OUT_DIR [NAME...]
#
# Writes OUT_DIR/NAME for each clip (all of them without NAME); a clip already there is
# kept. Needs ffmpeg (Debian's, 5.1 or later, with libx264, libx265 and libopus), python3
# (standard library: it patches box fields that the ffmpeg CLI cannot write, and
# scripts/corpus-audio.py writes the audio cases no encoder writes as such) and, for the WavPack
# DSD clip, the wavpack command (WavPack 5, which packs a DSF file).
set -euo pipefail

out=${1:?usage: corpus-generate.sh OUT_DIR [NAME...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }

# Sets, in an MP4/MOV file, every mvhd/tkhd/mdhd duration (version 0 boxes) to 0, or the
# first video track's tkhd matrix to a horizontal mirror. Box walking, no parsing library.
patch_mp4() {
    python3 - "$@" <<'PY'
import struct, sys
mode, path = sys.argv[1], sys.argv[2]
data = bytearray(open(path, 'rb').read())
containers = {b'moov', b'trak', b'mdia', b'minf', b'stbl', b'edts'}
found = []
def walk(start, end):
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack('>I4s', data[pos:pos + 8])
        header = 8
        if size == 1:
            size = struct.unpack('>Q', data[pos + 8:pos + 16])[0]; header = 16
        elif size == 0:
            size = end - pos
        if size < header: break
        found.append((kind, pos, size))
        if kind in containers: walk(pos + header, pos + size)
        pos += size
walk(0, len(data))
if mode == 'duration0':
    offsets = {b'mvhd': 24, b'tkhd': 28, b'mdhd': 24}
    for kind, pos, size in found:
        if kind in offsets:
            assert data[pos + 8] == 0, 'version 1 box'
            struct.pack_into('>I', data, pos + offsets[kind], 0)
elif mode == 'hflip':
    width = int(sys.argv[3])
    tkhd = next(pos for kind, pos, size in found if kind == b'tkhd' and
                struct.unpack('>I', data[pos + 84:pos + 88])[0] != 0)   # a track with a width: video
    # matrix {a b u; c d v; x y w} at offset 48: a = -1.0, x = width (16.16 fixed point).
    struct.pack_into('>iiiiiiiii', data, tkhd + 48,
                     -0x10000, 0, 0, 0, 0x10000, 0, width << 16, 0, 0x40000000)
open(path, 'wb').write(data)
PY
}

# The base clips: the issue's reproduction (1080x720 at 30000/1001, 1 s, AAC) and a 3 s
# clip with one key frame a second for cuts.
base() {
    [ -f "$work/a.mp4" ] || ff -f lavfi -i testsrc2=s=1080x720:r=30000/1001:d=1 -f lavfi -i sine=r=44100:d=1 \
        -c:v libx264 -c:a aac -shortest "$work/a.mp4"
    [ -f "$work/gop.mp4" ] || ff -f lavfi -i testsrc2=s=320x240:r=30:d=3 -f lavfi -i sine=r=48000:d=3 \
        -c:v libx264 -g 30 -keyint_min 30 -sc_threshold 0 -bf 2 -c:a aac -shortest "$work/gop.mp4"
}

make_clip() {
    local name=$1 target="$out/$1"
    [ -f "$target" ] && return 0
    base
    case $name in
    late-audio-100ms.mp4)       # the issue's reproduction: -itsoffset 0.1, audio 76 ms after video (an empty edit; AAC priming)
        ff -i "$work/a.mp4" -itsoffset 0.1 -i "$work/a.mp4" -map 0:v -map 1:a -c copy "$target" ;;
    late-audio-67ms.mp4)        # audio 67 ms late behind an empty edit (90 ms less the 23 ms of AAC priming)
        ff -i "$work/a.mp4" -itsoffset 0.090 -i "$work/a.mp4" -map 0:v -map 1:a -c copy "$target" ;;
    late-audio-43ms.mkv)        # audio 43 ms late in Matroska (block timestamps, no edit list; 23 ms of it is priming)
        ff -i "$work/a.mp4" -itsoffset 0.066 -i "$work/a.mp4" -map 0:v -map 1:a -c copy "$target" ;;
    late-audio-priming.mov)     # audio 1024 samples (23 ms) late behind an edit list that also skips the AAC priming
        ff -i "$work/a.mp4" -itsoffset 0.046440 -i "$work/a.mp4" -map 0:v -map 1:a -c copy "$target" ;;
    late-video-67ms.mp4)        # the reverse: video 67 ms after audio
        ff -itsoffset 0.067 -i "$work/a.mp4" -i "$work/a.mp4" -map 0:v -map 1:a -c copy "$target" ;;
    editlist-midgop.mp4)        # a cut at 1.5 s copied without re-encoding: pre-roll from the key frame at 1 s
        ff -ss 1.5 -i "$work/gop.mp4" -c copy "$target" ;;
    rotate-90.mp4|rotate-180.mp4|rotate-270.mp4)
        local degrees=${name#rotate-}; degrees=${degrees%.mp4}
        ff -i "$work/gop.mp4" -c copy -metadata:s:v:0 rotate="$degrees" "$target" ;;
    mirror.mp4)                 # a horizontal mirror in the track matrix (front cameras)
        ff -i "$work/gop.mp4" -c copy "$work/mirror.mp4" && patch_mp4 hflip "$work/mirror.mp4" 320 && mv "$work/mirror.mp4" "$target" ;;
    vfr.mp4)                    # variable frame rate: gaps of 1, 2 and 3 frame times
        ff -f lavfi -i testsrc2=s=320x240:r=30:d=2 -vf "setpts='(N+floor(N/4)+floor(N/7))/30/TB'" \
            -vsync vfr -enc_time_base 1/90000 -c:v libx264 -bf 0 "$target" ;;
    hevc-10bit-hdr.mp4)         # 10-bit HEVC tagged BT.2020/PQ with mastering metadata, hvc1 like phones
        ff -f lavfi -i testsrc2=s=640x360:r=30:d=1 -f lavfi -i sine=r=48000:d=1 -pix_fmt yuv420p10le \
            -c:v libx265 -x265-params "log-level=error:hdr10=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400" \
            -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc -tag:v hvc1 -c:a aac -shortest "$target" ;;
    pcm-s16.mov)                # PCM audio track in QuickTime (editors)
        ff -i "$work/gop.mp4" -map 0:v -map 0:a -c:v copy -c:a pcm_s16le "$target" ;;
    pcm-s24.mov)
        ff -i "$work/gop.mp4" -map 0:v -map 0:a -c:v copy -c:a pcm_s24le "$target" ;;
    flac.mkv)                   # FLAC audio track in Matroska
        ff -i "$work/gop.mp4" -map 0:v -map 0:a -c:v copy -c:a flac "$target" ;;
    flac-24bit.mp4)             # 24-bit FLAC in MP4
        ff -i "$work/gop.mp4" -map 0:v -map 0:a -c:v copy -c:a flac -sample_fmt s32 -bits_per_raw_sample 24 -strict experimental "$target" ;;
    fragmented-sidx.mp4)        # fragmented MP4, one fragment a second, a global sidx (DASH on-demand)
        ff -i "$work/gop.mp4" -c copy -movflags +frag_keyframe+default_base_moof+global_sidx+faststart "$target" ;;
    truncated-60pc.mp4)         # moov at the front, cut at 60 % of the file
        ff -i "$work/gop.mp4" -c copy -movflags +faststart "$work/t.mp4"
        head -c $(( $(stat -c%s "$work/t.mp4") * 6 / 10 )) "$work/t.mp4" > "$target" ;;
    truncated-60pc.mkv)
        ff -i "$work/gop.mp4" -c copy "$work/t.mkv"
        head -c $(( $(stat -c%s "$work/t.mkv") * 6 / 10 )) "$work/t.mkv" > "$target" ;;
    truncated-60pc.ts)
        ff -i "$work/gop.mp4" -c copy "$work/t.ts"
        head -c $(( $(stat -c%s "$work/t.ts") * 6 / 10 )) "$work/t.ts" > "$target" ;;
    start-3of30.avi|start-3of30-pcm.avi)   # first video timestamp 3/30: the stream header's dwStart is 3
        if [ "$name" = start-3of30.avi ]; then   # video only
            ff -f lavfi -i testsrc2=s=320x240:r=30:d=1 -c:v mpeg4 -q:v 5 "$work/s.avi"
        else                                     # with PCM audio from 0
            ff -f lavfi -i testsrc2=s=320x240:r=30:d=1 -f lavfi -i sine=r=44100:d=1 -c:v mpeg4 -q:v 5 -c:a pcm_s16le "$work/s.avi"
        fi
        python3 - "$work/s.avi" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
strh = data.find(b'strh')
assert data[strh + 8:strh + 12] == b'vids'
struct.pack_into('<I', data, strh + 36, 3)   # fccType, handler, flags, priority+language, initialFrames, scale, rate, start
open(sys.argv[1], 'wb').write(data)
PY
        mv "$work/s.avi" "$target" ;;
    duration0-5frames.mp4)      # five frames; mvhd, tkhd and mdhd say duration 0
        ff -f lavfi -i testsrc2=s=320x240:r=30 -frames:v 5 -c:v libx264 -bf 0 -use_editlist 0 "$work/d0.mp4"
        patch_mp4 duration0 "$work/d0.mp4" && mv "$work/d0.mp4" "$target" ;;
    audio-wav-80k-20samples.wav)    # 20 samples at 80 kHz
        ff -f lavfi -i sine=r=80000 -af atrim=end_sample=20 -c:a pcm_s16le "$target" ;;
    audio-wav-8k.wav)
        ff -f lavfi -i sine=r=8000:d=1 -c:a pcm_s16le "$target" ;;
    audio-wav-11025-u8.wav)
        ff -f lavfi -i sine=r=11025:d=1 -c:a pcm_u8 "$target" ;;
    audio-wav-192k-s32.wav)
        ff -f lavfi -i sine=r=192000:d=1 -c:a pcm_s32le "$target" ;;
    audio-wav-384k-f32.wav)
        ff -f lavfi -i sine=r=384000:d=0.5 -c:a pcm_f32le "$target" ;;
    audio-wav-96k-s24-6ch.wav)
        ff -f lavfi -i sine=r=96000:d=1 -af "pan=5.1|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0" -c:a pcm_s24le "$target" ;;
    audio-flac-24bit-96k.flac)
        ff -f lavfi -i sine=r=96000:d=1 -c:a flac -sample_fmt s32 -bits_per_raw_sample 24 "$target" ;;
    audio-m4b-cut-after-moov.m4b)   # moov at the front, the file ends a little after it
        ff -f lavfi -i sine=r=44100:d=3 -c:a aac -movflags +faststart -f ipod "$work/b.m4b"
        python3 - "$work/b.m4b" "$target" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
pos = 0
while pos < len(data):
    size, kind = struct.unpack('>I4s', data[pos:pos + 8])
    if kind == b'moov':
        end = pos + size + 8 + 4000   # past moov, the mdat header and about 4 kB of samples
        break
    pos += size
open(sys.argv[2], 'wb').write(data[:end])
PY
        ;;
    audio-opus.ogg)
        ff -f lavfi -i sine=r=48000:d=1 -c:a libopus "$target" ;;
    audio-mp3-vbr.mp3)
        ff -f lavfi -i sine=r=44100:d=1 -c:a libmp3lame -q:a 4 "$target" ;;
    audio-truncated.flac)
        ff -f lavfi -i sine=r=44100:d=2 -c:a flac "$work/t.flac"
        head -c $(( $(stat -c%s "$work/t.flac") / 2 )) "$work/t.flac" > "$target" ;;
    # The audio cases that mutagen's GPL test files covered until they left the corpus.
    audio-wav-16k-u8.wav)           # 8-bit unsigned PCM at 16 kHz, 2 s
        ff -f lavfi -i sine=r=16000:d=2 -c:a pcm_u8 "$target" ;;
    audio-m4b-chapters.m4b)         # an audiobook: AAC with a chapter (text) track and Nero chapters
        printf ';FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1500\ntitle=One\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1500\nEND=3000\ntitle=Two\n' > "$work/chapters.txt"
        ff -f lavfi -i sine=r=44100:d=3 -i "$work/chapters.txt" -map 0:a -map_chapters 1 -c:a aac -f ipod "$target" ;;
    audio-flac-16bit.flac)
        ff -f lavfi -i sine=r=44100:d=1 -c:a flac -sample_fmt s16 "$target" ;;
    audio-flac-cover.flac)          # a FLAC with a PNG picture block
        ff -f lavfi -i testsrc2=s=64x64:d=1 -frames:v 1 "$work/cover.png"
        ff -f lavfi -i sine=r=44100:d=1 -i "$work/cover.png" -map 0:a -map 1:v -c:a flac -c:v png \
            -disposition:v attached_pic "$target" ;;
    audio-aac.m4a)                  # AAC in M4A, the encoder's priming behind an edit list
        ff -f lavfi -i sine=r=44100:d=1 -c:a aac "$target" ;;
    audio-alac.m4a)
        ff -f lavfi -i sine=r=44100:d=1 -c:a alac "$target" ;;
    audio-vorbis.ogg)
        ff -f lavfi -i sine=r=44100:d=1 -c:a libvorbis "$target" ;;
    audio-mp3-cbr-lame.mp3)         # 0.1 s CBR with the encoder's Xing/LAME header
        ff -f lavfi -i sine=r=44100:d=0.1 -c:a libmp3lame -b:a 128k "$target" ;;
    audio-mp3-mpeg2-24k.mp3)        # MPEG-2 layer 3
        ff -f lavfi -i sine=r=24000:d=1 -c:a libmp3lame -b:a 64k "$target" ;;
    audio-mp3-mpeg25-12k.mp3)       # MPEG-2.5 layer 3
        ff -f lavfi -i sine=r=12000:d=1 -c:a libmp3lame -b:a 32k "$target" ;;
    audio-aiff-8k-mono.aif)
        ff -f lavfi -i sine=r=8000:d=1 -c:a pcm_s16be "$target" ;;
    audio-aiff-8k-4ch.aif)
        ff -f lavfi -i sine=r=8000:d=1 -af "pan=4.0|c0=c0|c1=c0|c2=c0|c3=c0" -c:a pcm_s16be "$target" ;;
    audio-aiff-11k-s8.aif)
        ff -f lavfi -i sine=r=11025:d=2 -c:a pcm_s8 "$target" ;;
    audio-ac3.ac3)
        ff -f lavfi -i sine=r=44100:d=1 -ac 2 -c:a ac3 "$target" ;;
    audio-eac3.eac3)
        ff -f lavfi -i sine=r=44100:d=1 -ac 2 -c:a eac3 "$target" ;;
    audio-wavpack.wv)
        ff -f lavfi -i sine=r=44100:d=1 -c:a wavpack "$target" ;;
    audio-wma2.wma)                 # WMA v2 in ASF
        ff -f lavfi -i sine=r=44100:d=1 -c:a wmav2 "$target" ;;
    # The four mutagen cases no encoder writes as such, made at the byte level (corpus-audio.py).
    audio-vorbis-setup-pages.ogg)   # Ogg Vorbis whose setup header spans several pages (4 segments each)
        ff -f lavfi -i sine=r=44100:d=1 -c:a libvorbis "$work/v.ogg"
        python3 "$here/corpus-audio.py" ogg-setup-pages "$work/v.ogg" "$target" 4 ;;
    audio-wavpack-dsd64.wv)         # WavPack DSD: DSD64 stereo (1 and 1.5 kHz tones), FFmpeg decodes it at 352.8 kHz
        python3 "$here/corpus-audio.py" dsf "$work/d.dsf"
        wavpack -q -y "$work/d.dsf" -o "$target" ;;
    audio-aac-adif.aac)             # AAC LC in ADIF: FFmpeg has no ADIF demuxer (it refuses, or misreads it as MPEG)
        ff -f lavfi -i sine=r=44100:d=1 -ac 2 -c:a aac -b:a 128k -f adts "$work/a.aac"
        python3 "$here/corpus-audio.py" adif "$work/a.aac" "$target" ;;
    audio-m4b-nero-chapters-no-samples.m4b)   # Nero chapters, a chapter track and a cover; no sample; 169022 s long
        printf ';FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1500\ntitle=One\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1500\nEND=3000\ntitle=Two\n' > "$work/nero.txt"
        ff -f lavfi -i testsrc2=s=64x64:d=1 -frames:v 1 "$work/nero.png"
        ff -f lavfi -i sine=r=44100:d=3 -i "$work/nero.txt" -i "$work/nero.png" -map 0:a -map 2:v -map_chapters 1 \
            -c:a aac -c:v png -disposition:v attached_pic -movflags +faststart -f ipod "$work/nero.m4b"
        python3 "$here/corpus-audio.py" m4b-no-samples "$work/nero.m4b" "$target" ;;
    *) echo "corpus-generate.sh: no clip named $name" >&2; return 1 ;;
    esac
}

all=(late-audio-100ms.mp4 late-audio-67ms.mp4 late-audio-43ms.mkv late-audio-priming.mov late-video-67ms.mp4 editlist-midgop.mp4
     rotate-90.mp4 rotate-180.mp4 rotate-270.mp4 mirror.mp4 vfr.mp4 hevc-10bit-hdr.mp4
     pcm-s16.mov pcm-s24.mov flac.mkv flac-24bit.mp4 fragmented-sidx.mp4
     truncated-60pc.mp4 truncated-60pc.mkv truncated-60pc.ts start-3of30.avi start-3of30-pcm.avi duration0-5frames.mp4
     audio-wav-80k-20samples.wav audio-wav-8k.wav audio-wav-11025-u8.wav audio-wav-192k-s32.wav
     audio-wav-384k-f32.wav audio-wav-96k-s24-6ch.wav audio-flac-24bit-96k.flac audio-m4b-cut-after-moov.m4b
     audio-opus.ogg audio-mp3-vbr.mp3 audio-truncated.flac
     audio-wav-16k-u8.wav audio-m4b-chapters.m4b audio-flac-16bit.flac audio-flac-cover.flac audio-aac.m4a
     audio-alac.m4a audio-vorbis.ogg audio-mp3-cbr-lame.mp3 audio-mp3-mpeg2-24k.mp3 audio-mp3-mpeg25-12k.mp3
     audio-aiff-8k-mono.aif audio-aiff-8k-4ch.aif audio-aiff-11k-s8.aif audio-ac3.ac3 audio-eac3.eac3
     audio-wavpack.wv audio-wma2.wma
     audio-vorbis-setup-pages.ogg audio-wavpack-dsd64.wv audio-aac-adif.aac audio-m4b-nero-chapters-no-samples.m4b)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=("${all[@]}")
for name in "${names[@]}"; do
    make_clip "$name"
done
