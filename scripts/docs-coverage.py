#!/usr/bin/env python3
"""Lists the public declarations of a module that carry no doc comment of their own.

    scripts/docs-coverage.py MODULE SYMBOLGRAPH_DIR     (exit 1 if any is undocumented)

Reads the symbol graphs swift-docc-plugin extracted for MODULE (MODULE.symbols.json and
MODULE@Other.symbols.json, the extensions MODULE makes to other modules' types) and reports every
public or open symbol whose declaration is in Sources/MODULE but has no `///` comment written
for it in MODULE. Not counted: what the compiler synthesizes (`!=`, `hash(into:)`, Codable and
RawRepresentable members: they have no declaration in the source) and the symbols DocC lists for
extensions themselves. A witness of a protocol requirement without a comment of its own counts
as undocumented: the symbol graph then carries the requirement's comment (marked with the other
module's name, or, within the module, written away from the declaration), which says what any
conformer does, not what this one does.

DocC's own `--experimental-documentation-coverage` counts the synthesized members and the
extension pages as undocumented (they have no abstract and cannot be given one), so its figures
never reach 100 %; this check reads the same symbol graphs without them.
"""
import glob
import json
import os
import sys


def written_above(comment, symbol):
    """Whether the comment is the declaration's own: it ends just above it (a few lines leave
    room for attributes). A witness of a requirement of the same module otherwise carries the
    requirement's comment, from wherever the protocol is."""
    ranges = [l["range"] for l in comment.get("lines", []) if "range" in l]
    if not ranges:
        return True  # no positions to compare (a synthesized comment): trust the module
    if comment.get("uri", symbol["location"]["uri"]) != symbol["location"]["uri"]:
        return False
    gap = symbol["location"]["position"]["line"] - ranges[-1]["end"]["line"]
    return 0 < gap <= 4


def undocumented(module, directory):
    found = []
    for path in sorted(glob.glob(os.path.join(directory, f"{module}*.symbols.json"))):
        name = os.path.basename(path)
        if name != f"{module}.symbols.json" and not name.startswith(f"{module}@"):
            continue
        with open(path) as f:
            graph = json.load(f)
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            if symbol["kind"]["identifier"] in ("swift.extension", "module"):
                continue
            uri = symbol.get("location", {}).get("uri", "")
            if f"/Sources/{module}/" not in uri:
                continue  # synthesized, or declared elsewhere (a protocol extension's default)
            comment = symbol.get("docComment")
            lines = [l.get("text", "").strip() for l in (comment or {}).get("lines", [])]
            own = comment is not None and comment.get("module", module) == module and written_above(comment, symbol)
            if not own or not any(lines):
                position = symbol["location"].get("position", {}).get("line", 0) + 1
                where = f"{uri.split('/Sources/', 1)[1]}:{position}"
                found.append(f"Sources/{where}: {'.'.join(symbol['pathComponents'])}")
    return sorted(set(found))


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    module, directory = sys.argv[1], sys.argv[2]
    if not glob.glob(os.path.join(directory, f"{module}.symbols.json")):
        print(f"docs-coverage.py: no symbol graph for {module} in {directory}", file=sys.stderr)
        return 2
    missing = undocumented(module, directory)
    for line in missing:
        print(f"{line}: public, no doc comment")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
