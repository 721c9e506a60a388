#!/bin/sh
# Plays a large corpus of mutated media through `reel play --headless`, on the realtime
# clock and on --clock fast, and lists every file that hung, crashed or failed without a
# one-line error, named by its source and seed (MediaMutator.mutate(source, seed:) makes
# it again). The default is 700 files: 10 sources (8 clips of every codec and container,
# 2 pictures) x 70 seeds. It runs the MutatedMediaTests suite with more seeds.
#
#   scripts/mutate-corpus.sh [SEEDS-PER-SOURCE] [DIRECTORY-TO-KEEP-THE-FILES]
#
# REEL_MUTATION_JOBS sets how many runs go at once (default 8).
set -eu
cd "$(dirname "$0")/.."
REEL_MUTATION_SEEDS="${1:-70}"
export REEL_MUTATION_SEEDS
REEL_MUTATION_JOBS="${REEL_MUTATION_JOBS:-8}"
export REEL_MUTATION_JOBS
if [ $# -ge 2 ]; then
    mkdir -p "$2"
    REEL_MUTATION_DIR="$(cd "$2" && pwd)"
    export REEL_MUTATION_DIR
fi
swift build --build-tests
exec swift test --skip-build --filter MutatedMediaTests
