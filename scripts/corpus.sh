#!/usr/bin/env bash
# Plays the whole real-world corpus with reel and compares it with FFmpeg: every file under
# corpus/files, every stream in corpus/streams/ENTRIES (HLS and DASH packaged by other tools,
# played from the directory), and the clips scripts/corpus-generate.sh makes. Each plays
# headless with the fast clock (`reel play FILE --headless --clock fast --trace T`); a video's
# presented frames must be FFmpeg's (`ffmpeg -noautorotate -i FILE -map 0:v -f framemd5`, the
# frames at or after the start, same hash and pts); an audio-only item must play to its end
# (exit 0 and an `end` event); items FFmpeg itself cannot play are listed with the reason in
# corpus/EXCEPTIONS.tsv and must be refused cleanly (exit 3). Prints one line per item, what
# differs for each failure, and N/N. Exit status 0 only when every item passes.
#
#   scripts/corpus.sh [--reel PATH] [--timeout SECONDS] [--jobs N] [--json FILE] [--only TEXT]...
#
# --reel defaults to .build/debug/reel (built with `swift build --product reel` when missing);
# --timeout (default 60) bounds each reel and FFmpeg run: a run past it is reported as a hang.
# Needs ffmpeg/ffprobe and python3. Generated clips go to .build/corpus-generated (kept).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reel=""
rest=()
while [ $# -gt 0 ]; do
    case $1 in
    --reel) reel=$2; shift 2 ;;
    --reel=*) reel=${1#--reel=}; shift ;;
    *) rest+=("$1"); shift ;;
    esac
done
if [ -z "$reel" ]; then
    reel=$root/.build/debug/reel
    [ -x "$reel" ] || (cd "$root" && swift build --product reel)
fi
[ -x "$reel" ] || { echo "corpus.sh: no reel binary at $reel" >&2; exit 2; }
generated=$root/.build/corpus-generated
"$root/scripts/corpus-generate.sh" "$generated"
exec python3 "$root/scripts/corpus-check.py" --reel "$reel" --corpus "$root/corpus" --generated "$generated" \
    --exceptions "$root/corpus/EXCEPTIONS.tsv" "${rest[@]+"${rest[@]}"}"
