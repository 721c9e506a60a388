#!/bin/bash
# Live latency: Reel's segment reader against FFmpeg's HLS demuxer, same playlist, same run.
# Usage, from the repository after `swift build`: scripts/bench/live-latency.sh segments|parts
# segments: 2 s fMP4 segments (FFmpeg's HLS muxer); parts: the same as CMAF chunks of four
# 0.5 s fragments (FFmpeg's DASH muxer), published by `reel serve --live` as LL-HLS parts.
set -e
B=${B:-$PWD/.build/debug/reel}
MODE=${1:-parts}
DIR=$(mktemp -d /tmp/reel-live-latency-XXXX)
mkdir -p "$DIR/s"
SRC=(-f lavfi -i testsrc2=size=320x240:rate=30 -t 80 -c:v libx264 -g 15 -keyint_min 15 -sc_threshold 0 -bf 0 -pix_fmt yuv420p)
if [ "$MODE" = segments ]; then
  ffmpeg -v error -y "${SRC[@]}" -f hls -hls_time 2 -hls_playlist_type vod -hls_segment_type fmp4 \
    -hls_fmp4_init_filename init.mp4 -hls_segment_filename "$DIR/s/seg-%03d.m4s" "$DIR/s/index.m3u8"
  PL=s/index.m3u8
else
  ffmpeg -v error -y "${SRC[@]}" -f dash -seg_duration 2 -frag_type duration -frag_duration 0.5 \
    -hls_playlist 1 -use_template 1 -use_timeline 0 "$DIR/s/manifest.mpd"
  PL=s/media_0.m3u8
fi
cd "$DIR"
set +e
pkill -f "port 18440" 2>/dev/null
$B serve "$DIR" --port 18440 --live $PL > serve.log 2>&1 &
for i in $(seq 100); do grep -q http serve.log && break; sleep 0.05; done
t0=$(date +%s.%N)
sleep 9
URL=http://127.0.0.1:18440/live/$PL
t1=$(date +%s.%N); timeout 66 $B play $URL --headless --no-cache --scheduler reel --trace reel.jsonl > reel.log 2>&1 &
t2=$(date +%s.%N); timeout 66 $B play $URL --headless --no-cache --scheduler ffmpeg --trace ffmpeg.jsonl > ffmpeg.log 2>&1 &
wait %2 %3
pkill -f "port 18440"
python3 - "$t0" "$t1" "$t2" <<'PY'
import json, sys, statistics
t0, t1, t2 = map(float, sys.argv[1:4])
def stats(path, launch):
    frames = [json.loads(l) for l in open(path) if '"type":"frame"' in l]
    stalls = [json.loads(l) for l in open(path) if '"type":"stall"' in l]
    fetch = [json.loads(l) for l in open(path) if '"liveFetch"' in l]
    lat = [(launch - t0 + f["presentedAt"]) - f["seconds"] for f in frames]
    first = frames[0]
    stalled = 0.0; since = None
    for s in stalls:
        if s["stalled"]: since = s["at"]
        elif since is not None: stalled += s["at"] - since; since = None
    urls = [f["url"] + " " + f.get("range", "whole") for f in fetch]
    return dict(frames=len(frames), firstPresentedAt=round(first["presentedAt"],3), firstPts=first["seconds"],
                latencyMedian=round(statistics.median(lat),3), latencyP95=round(sorted(lat)[int(len(lat)*0.95)],3),
                latencyMin=round(min(lat),3), stalls=sum(1 for s in stalls if s["stalled"]), stalledSeconds=round(stalled,2),
                playedSeconds=round(frames[-1]["seconds"]-frames[0]["seconds"],2), fetches=len(urls), refetched=len(urls)-len(set(urls)))
r = stats("reel.jsonl", t1); f = stats("ffmpeg.jsonl", t2)
for k in r: print(f"{k:18} reel {r[k]!s:>10}   ffmpeg {f[k]!s:>10}")
print("latency median ratio reel/ffmpeg:", round(r["latencyMedian"]/f["latencyMedian"],3))
PY
