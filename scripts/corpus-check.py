#!/usr/bin/env python3
"""Plays every corpus item with `reel play --headless --clock fast --trace` and compares it
with FFmpeg's decode of the same input. Run through scripts/corpus.sh (see its header).

A video item passes when reel exits 0 with an `end` event and the frames it presented are,
in order, FFmpeg's frames at or after the item's start: the same framemd5 hash and the same
pts. An audio-only item passes when reel exits 0 with an `end` event. An item listed in the
exceptions file passes when reel ends as that file says (`refused`: exit 3 and
one `error` event, within the timeout; `ends`: exit 0 or 3 within the timeout, for a file
FFmpeg decodes in part and then fails on) — each line gives FFmpeg's own behaviour as the reason.
Standard library only."""

import argparse
import concurrent.futures
import difflib
import json
import os
import signal
import subprocess
import sys
import tempfile
from fractions import Fraction

def run(args, timeout):
    """(returncode or None on timeout, stdout, stderr). The child runs in its own process
    group, killed whole on timeout."""
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        out, err = child.communicate(timeout=timeout)
        return child.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
        return None, out, err


def probe(path, timeout):
    code, out, _ = run(["ffprobe", "-v", "error", "-show_entries",
                        "stream=index,codec_type,codec_name:stream_disposition=attached_pic:format=start_time",
                        "-of", "json", path], timeout)
    if code != 0:
        return None
    try:
        return json.loads(out)
    except ValueError:
        return None


def reference_frames(path, stream_index, timeout):
    """FFmpeg's decode of one video stream: [(pts as Fraction, md5)], pts in seconds with the
    stream's own timestamps (-copyts), every decoded frame (-fps_mode passthrough), no
    rotation applied. None when FFmpeg fails."""
    code, out, err = run(["ffmpeg", "-nostdin", "-v", "error", "-noautorotate", "-copyts", "-i", path,
                          "-map", f"0:{stream_index}", "-fps_mode", "passthrough", "-enc_time_base", "-1",
                          "-f", "framemd5", "-"], timeout)
    if code != 0:
        return None, err.decode(errors="replace").strip().splitlines()[-1:] or ["exit %s" % code]
    frames, timebase = [], Fraction(1)
    for line in out.decode().splitlines():
        if line.startswith("#tb 0:"):
            timebase = Fraction(line.split(":", 1)[1].strip())
        elif line and not line.startswith("#"):
            fields = [f.strip() for f in line.split(",")]
            frames.append((int(fields[2]) * timebase, fields[5]))
    return frames, None


def audio_decodes(path, timeout):
    """Whether FFmpeg decodes at least one frame of the first audio stream, and its last
    error line."""
    code, out, err = run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-f", "framemd5", "-"], timeout)
    decoded = sum(1 for line in out.decode().splitlines() if line and not line.startswith("#"))
    why = err.decode(errors="replace").strip().splitlines()[-1:]
    if code == 0 and decoded == 0:
        why = ["FFmpeg decodes no audio sample"]
    return code == 0 and decoded > 0, why


def parse_pts(text):
    if not isinstance(text, str) or "/" not in text:
        return None
    value, scale = text.split("@")[0].split("/")
    return Fraction(int(value), int(scale))


def fmt(t):
    return "none" if t is None else f"{float(t):.3f}s"


def play(reel, path, timeout, trace_dir):
    trace = os.path.join(trace_dir, "trace.jsonl")
    code, _, err = run([reel, "play", path, "--headless", "--clock", "fast", "--trace", trace], timeout)
    events = []
    if os.path.exists(trace):
        with open(trace) as f:
            for line in f:
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass
    return code, err.decode(errors="replace").strip(), events


def compare(reference, shown):
    """What differs between FFmpeg's frames and reel's, in words; [] when equal. Frames are
    matched by (pts, hash), or by hash alone when reel's timestamps match none of FFmpeg's."""
    if not shown:
        return [f"presented no frame (FFmpeg decodes {len(reference)})"]
    if reference == shown:
        return []
    problems = []
    by_key = set(reference) & set(shown)
    key = (lambda f: f) if by_key else (lambda f: f[1])
    ref_keys = [key(f) for f in reference]
    got_keys = [key(f) for f in shown]
    if not by_key and [m for _, m in reference] == [m for _, m in shown]:
        r, g = next((r, g) for (r, _), (g, _) in zip(reference, shown) if r != g)
        return [f"same pictures, other timestamps (first: reel {fmt(g)}, FFmpeg {fmt(r)})"]
    first_pts, first_md5 = shown[0]
    candidates = [i for i, (p, m) in enumerate(reference) if m == first_md5]
    leading = 0
    if candidates:
        k = min(candidates, key=lambda i: abs(reference[i][0] - first_pts) if first_pts is not None else i)
        leading = k
        if k > 0:
            problems.append(f"dropped {k} frame(s) at the start: first shown is FFmpeg's frame {k} "
                            f"(pts {fmt(reference[k][0])}; FFmpeg's first is {fmt(reference[0][0])})")
        if first_pts is not None and first_pts != reference[k][0]:
            problems.append(f"first frame stamped {fmt(first_pts)}, FFmpeg's {fmt(reference[k][0])}")
    else:
        problems.append(f"first frame shown (pts {fmt(first_pts)}) is not one FFmpeg shows at or after the start "
                        f"(FFmpeg's first: {fmt(reference[0][0]) if reference else 'none'})")
    repeated = len(shown) - len(set(shown))
    if repeated:
        problems.append(f"{repeated} frame(s) presented twice")
    matcher = difflib.SequenceMatcher(a=ref_keys, b=got_keys, autojunk=False)
    extra = 0
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op in ("delete", "replace") and a0 >= leading:
            where = "right after the first frame" if a0 == 1 and leading == 0 else f"from FFmpeg's frame {a0}"
            problems.append(f"{a1 - a0} frame(s) not shown {where}: FFmpeg's frames {a0}-{a1 - 1} "
                            f"(pts {fmt(reference[a0][0])}-{fmt(reference[a1 - 1][0])})")
        if op in ("insert", "replace"):
            extra += b1 - b0
    if extra - repeated > 0:
        problems.append(f"{extra - repeated} frame(s) that FFmpeg does not show at those times")
    problems.append(f"reel {len(shown)} frames, FFmpeg {len(reference)}")
    return problems


def check(item, args, exceptions):
    name, path = item
    result = {"item": name, "ok": False, "kind": None, "problems": []}
    with tempfile.TemporaryDirectory(prefix="reel-corpus-") as scratch:
        info = probe(path, args.timeout)   # playlists and manifests through FFmpeg's own demuxers
        video_index = None
        for s in (info or {}).get("streams") or []:
            if s.get("codec_type") == "video" and not s.get("disposition", {}).get("attached_pic"):
                video_index = s["index"]
                break
        reference, ffmpeg_error = (None, None)
        if video_index is not None:
            reference, ffmpeg_error = reference_frames(path, video_index, args.timeout)
            start = None
            try:
                start = Fraction(info["format"]["start_time"])
            except (KeyError, TypeError, ValueError):
                pass
            if reference is not None and start is not None:
                # ffprobe prints the start with 6 decimals: 1/15 is 0.066667.
                reference = [(p, m) for p, m in reference if p >= start - Fraction(1, 1000000)]
        has_audio = bool(info) and any(s.get("codec_type") == "audio" for s in info.get("streams") or [])
        audio_ok, audio_error = (audio_decodes(path, args.timeout) if has_audio and video_index is None else (False, None))
        if video_index is not None and reference:
            result["kind"] = "video"
        elif video_index is None and audio_ok:
            result["kind"] = "audio"
        else:
            result["kind"] = "ffmpeg-fails"
            why = ffmpeg_error or audio_error or (["no stream FFmpeg can read"] if not info else ["FFmpeg decodes no frame"])
            result["ffmpeg"] = " ".join(why)

        code, stderr, events = play(args.reel, path, args.timeout, scratch)
        frames = [(parse_pts(e.get("pts")), e.get("md5")) for e in events if e.get("type") == "frame"]
        ends = [e for e in events if e.get("type") == "end"]
        errors = [e.get("message", "") for e in events if e.get("type") == "error"]
        last_line = stderr.splitlines()[-1] if stderr else ""
        result.update(exit=code, frames=len(frames), end=bool(ends), error=errors[0] if errors else last_line)

        expected = exceptions.get(name)
        if code is None:
            result["problems"].append(f"hang: still running after {args.timeout} s ({len(frames)} frames presented)")
        elif code < 0 or code >= 128:
            result["problems"].append(f"crash: ended by signal {(-code) if code < 0 else code - 128}")
        elif expected:
            result["exception"] = expected["reason"]
            if ((expected["expect"] == "refused" and code == 3) or (expected["expect"] == "ends" and code in (0, 3))
                    or (expected["expect"] == "empty" and code == 0 and ends and not frames)):
                result["ok"] = True
            else:
                result["problems"].append(f"listed as {expected['expect']} ({expected['reason']}) but reel exited {code}"
                                          + (f" with {len(frames)} frames" if frames else ""))
        elif result["kind"] == "ffmpeg-fails":
            result["problems"].append(f"not in the exceptions list: FFmpeg fails ({result['ffmpeg']}); reel exited {code}")
        elif code != 0:
            what = "refused" if result["kind"] == "audio" else "failed"
            result["problems"].append(f"{what}: exit {code}: {result['error']}")
        else:
            if not ends:
                result["problems"].append("exit 0 without an end event")
            if result["kind"] == "video":
                result["problems"] += compare(reference, frames)
            result["ok"] = not result["problems"]
    return result


def items(args):
    found = []
    files = os.path.join(args.corpus, "files")
    for root, _, names in os.walk(files):
        for n in sorted(names):
            p = os.path.join(root, n)
            found.append((os.path.relpath(p, args.corpus), os.path.abspath(p)))
    entries = os.path.join(args.corpus, "streams", "ENTRIES")
    if os.path.exists(entries):
        for line in open(entries):
            line = line.strip()
            if line and not line.startswith("#"):
                # Absolute: FFmpeg's DASH demuxer resolves a relative manifest's segments wrongly.
                found.append(("streams/" + line, os.path.abspath(os.path.join(args.corpus, "streams", line))))
    if args.generated and os.path.isdir(args.generated):
        for n in sorted(os.listdir(args.generated)):
            found.append(("generated/" + n, os.path.abspath(os.path.join(args.generated, n))))
    found.sort()
    if args.only:
        found = [f for f in found if any(o in f[0] for o in args.only)]
    return found


def load_exceptions(path):
    table = {}
    if path and os.path.exists(path):
        for line in open(path):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            table[fields[0]] = {"expect": fields[1], "reason": fields[2] if len(fields) > 2 else ""}
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reel", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--generated")
    parser.add_argument("--exceptions")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", help="write every result here")
    parser.add_argument("--only", action="append", help="items whose name contains this (repeatable)")
    args = parser.parse_args()
    exceptions = load_exceptions(args.exceptions)
    todo = items(args)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for result in pool.map(lambda item: check(item, args, exceptions), todo):
            results.append(result)
            mark = "ok  " if result["ok"] else "FAIL"
            note = f"  (exception: {result['exception']})" if result.get("exception") and result["ok"] else ""
            print(f"{mark} {result['item']} [{result['kind']}, {result['frames']} frames]{note}", flush=True)
            for p in result["problems"]:
                print(f"       {p}", flush=True)
    passed = sum(r["ok"] for r in results)
    excepted = sum(1 for r in results if r["ok"] and r.get("exception"))
    print(f"\n{passed}/{len(results)} passed ({excepted} of them listed exceptions)")
    for r in results:
        if r["ok"] and r.get("exception"):
            print(f"  exception {r['item']}: {r['exception']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
