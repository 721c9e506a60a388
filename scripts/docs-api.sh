#!/usr/bin/env bash
# Builds the API documentation of the library products an app embeds, one DocC archive each,
# from the doc comments and the catalogs in Sources/<Module>/<Module>.docc, with
# swift-docc-plugin (`swift package generate-documentation`). Fails on any DocC warning and
# on any public declaration without a doc comment (scripts/docs-coverage.py, which reads the
# symbol graphs the plugin extracted: DocC's own experimental coverage counts the members the
# compiler synthesizes, `!=` and `hash(into:)`, which no comment can reach).
#
#   scripts/docs-api.sh [MODULE...]        (default: ReelMedia ReelFeed ReelLoading ReelCaptions)
#
# Writes .build/docs/<Module>.doccarchive (open with `docc preview`, or serve the
# archive's static files: it is built with --transform-for-static-hosting). The first run
# builds the modules' symbol graphs, minutes on two cores; later runs reuse the build.
# Fails on any DocC warning (SwiftPM's own warnings about SDL2's pkg-config flags and a
# dependency's unhandled files are not DocC's).
set -euo pipefail
cd "$(dirname "$0")/.."

modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(ReelMedia ReelFeed ReelLoading ReelCaptions)
out=.build/docs
mkdir -p "$out"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

failed=0
for module in "${modules[@]}"; do
    if ! swift package --allow-writing-to-directory "$out" generate-documentation \
            --target "$module" --output-path "$out/$module.doccarchive" \
            --transform-for-static-hosting --hosting-base-path "$module" >"$log" 2>&1; then
        cat "$log" >&2
        echo "docs-api.sh: $module: the documentation did not build" >&2
        failed=1
        continue
    fi
    # DocC's warnings (unresolved links, malformed directives). SwiftPM's own are not DocC's:
    # a system library's pkg-config flags ("prohibited flag(s): -D_REENTRANT", SDL2's) and a
    # dependency's unhandled files ("found 1 file(s) which are unhandled").
    swiftpm="prohibited flag|which are unhandled"
    warnings=$(grep -E "^(.*: )?warning: " "$log" | grep -v -c -E "$swiftpm" || true)
    clean=1
    if [ "$warnings" -gt 0 ]; then
        grep -E -A4 "^(.*: )?warning: " "$log" | grep -v -E "$swiftpm" >&2
        echo "docs-api.sh: $module: $warnings DocC warnings" >&2
        clean=0
    fi
    # The symbol graphs this run extracted: .build/<triple>/extracted-symbols/<package>/<module>.
    graphs=$(ls -dt .build/*/extracted-symbols/*/"$module" 2>/dev/null | head -n 1)
    if [ -z "$graphs" ]; then
        echo "docs-api.sh: $module: no symbol graphs under .build/*/extracted-symbols" >&2
        clean=0
    elif ! undocumented=$(python3 scripts/docs-coverage.py "$module" "$graphs"); then
        echo "$undocumented" >&2
        echo "docs-api.sh: $module: $(echo "$undocumented" | grep -c .) public declarations without a doc comment" >&2
        clean=0
    fi
    if [ $clean -eq 1 ]; then
        echo "$module: $out/$module.doccarchive, no warnings, every public declaration documented"
    else
        failed=1
    fi
done
exit $failed
