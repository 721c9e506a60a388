#!/usr/bin/env bash
# Runs the suites under the sanitizers and fails on any report:
#
#   ThreadSanitizer   the engine, loading, feed, origin and core suites, the stress runs and the
#                     terminal renderer (every thread of a player, the loaders, the feed's pool)
#   AddressSanitizer  the player's corpus and behaviour tests, the mutated media, the stress runs
#                     (LeakSanitizer included: a pipeline left in a retain cycle is a report)
#
#   scripts/sanitize.sh [thread|address]...     (both by default)
#
# Each sanitizer builds into a scratch directory of its own (.build-tsan, .build-asan): the
# first run takes 10-20 minutes on two cores. Not part of CI. Reports are kept in
# .build-<name>/sanitizer-report.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
./setup.sh

kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(thread address)

# SDL under Xvfb and the tmux terminal tests are left out: their system libraries (Mesa,
# SDL's X11 and audio threads) are not instrumented and add nothing about Reel's own threads.
thread_filter='ReelCoreTests|ReelMediaTests|ReelLoadingTests|ReelFeedTests|ReelOriginTests|ReelTestSupportTests|ReelStressTests|TerminalRendererTests|TerminalSessionTests'
address_filter='MediaPlaybackTests|PlayerBehaviourTests|AudioRenderStageTests|AudioRingTests|PipelineMonitorTests|CachedPlaybackTests|StalledCloseTests|ImageDecoderTests|FrameScalerOverrunTests|MutatedMediaTests|ReelStressTests'

status=0
for kind in "${kinds[@]}"; do
    case "$kind" in
        thread) scratch=.build-tsan; filter=$thread_filter; pattern='WARNING: ThreadSanitizer' ;;
        address) scratch=.build-asan; filter=$address_filter; pattern='ERROR: (Address|Leak)Sanitizer' ;;
        *) echo "sanitize.sh: unknown sanitizer '$kind' (thread or address)" >&2; exit 2 ;;
    esac
    echo "== $kind: building into $scratch" >&2
    if ! swift build --build-tests --sanitize="$kind" --scratch-path "$scratch" >&2; then
        echo "sanitize.sh: the $kind build failed" >&2
        status=1
        continue
    fi
    report="$scratch/sanitizer-report.txt"
    echo "== $kind: running $filter" >&2
    TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
    ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}" \
    LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp ${LSAN_OPTIONS:-}" \
        swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" --filter "$filter" > "$report" 2>&1
    tests=$?
    reports=$(grep -Ec "$pattern" "$report")
    summary=$(grep -E "Test run with" "$report" | tail -1)
    echo "== $kind: $reports reports; $summary (tests exit $tests); details in $report" >&2
    if [ "$reports" -ne 0 ] || [ "$tests" -ne 0 ]; then status=1; fi
done
exit $status
