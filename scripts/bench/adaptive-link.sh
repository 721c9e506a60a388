#!/bin/bash
# Adaptive switching on a scripted link: Reel's segment scheduler (adaptive, the default) beside the top
# variant held fixed (--variant-plan 0:2), the same 30 s 3-variant ladder, each on its own
# origin with the same link (3 Mbit/s, 0.5 Mbit/s from 5 s, 8 Mbit/s from 15 s), in one run.
# Checks every frame shown against FFmpeg's decode of the variant it came from.
# Usage, from the repository after `swift build`: scripts/bench/adaptive-link.sh
set -e
B=${B:-$PWD/.build/debug/reel}
DIR=$(mktemp -d /tmp/reel-adaptive-XXXX)
cd "$DIR"
for v in "0 180x320 250k" "1 360x640 700k" "2 720x1280 1800k"; do
  set -- $v
  mkdir -p v$1
  ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=$2:rate=30:duration=30 -f lavfi -i sine=frequency=440:duration=30 \
    -c:v libx264 -preset veryfast -b:v $3 -maxrate $3 -bufsize $3 -g 60 -keyint_min 60 -sc_threshold 0 -pix_fmt yuv420p \
    -c:a aac -b:a 64k -f hls -hls_time 2 -hls_playlist_type vod -hls_segment_type fmp4 \
    -hls_fmp4_init_filename init.mp4 -hls_segment_filename "v$1/s%d.m4s" v$1/index.m3u8
  (cat v$1/init.mp4; for i in $(seq 0 14); do cat v$1/s$i.m4s; done) > whole$1.mp4
  ffmpeg -v error -i whole$1.mp4 -map 0:v -f framemd5 - | grep -v '^#' | awk -F', *' '{print $6}' > ref$1.txt
done
printf '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=360000,RESOLUTION=180x320\nv0/index.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=830000,RESOLUTION=360x640\nv1/index.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=720x1280\nv2/index.m3u8\n' > master.m3u8
# Each origin serves its own copy (two `reel serve` of one directory share its data store).
for name in adaptive fixed; do mkdir -p $name && cp -r master.m3u8 v0 v1 v2 $name/; done
set +e
run() { # name, port, options…
  local name=$1 port=$2; shift 2
  $B serve "$DIR/$name" --port $port --link 0:3000,5:500,15:8000 > serve-$name.log 2>&1 &
  for i in $(seq 100); do grep -q http serve-$name.log && break; sleep 0.05; done
  timeout 120 $B play http://127.0.0.1:$port/master.m3u8 --headless --no-cache --trace $name.jsonl "$@" > $name.log 2>&1
  pkill -f "port $port"
}
run adaptive 18450 &
run fixed 18451 --variant-plan 0:2 &
wait
python3 - <<'PY'
import json, itertools
refs = [open(f"ref{v}.txt").read().split() for v in range(3)]
def stats(name):
    objects = [json.loads(l) for l in open(f"{name}.jsonl")]
    frames = [o for o in objects if o["type"] == "frame"]
    stalled = 0.0; since = None; count = 0
    for o in objects:
        if o["type"] != "stall": continue
        if o["stalled"]: since = o["at"]; count += 1
        elif since is not None: stalled += o["at"] - since; since = None
    source = [next((v for v in range(3) if i < len(refs[v]) and refs[v][i] == f["md5"]), None) for i, f in enumerate(frames)]
    runs = [(k, len(list(g))) for k, g in itertools.groupby(source)]
    switches = [o for o in objects if o["type"] == "variant" and o.get("switch")]
    return dict(frames=len(frames), bitExact=all(s is not None for s in source), variantsByFrame=runs,
                stalls=count, stalledSeconds=round(stalled, 2),
                switches=[(o["sequence"], o["fromRank"], o["rank"], o["why"]) for o in switches])
a = stats("adaptive"); f = stats("fixed")
for k in a: print(f"{k:16} adaptive {a[k]!s}\n{'':16} fixed    {f[k]!s}")
print("stall ratio adaptive/fixed:", round(a["stalledSeconds"] / f["stalledSeconds"], 3) if f["stalledSeconds"] else "n/a")
PY
