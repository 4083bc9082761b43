#!/usr/bin/env python3
"""The Swift code blocks of the docs an embedder reads, as sources a package depending on SwiftYOLO compiles.

Blocks: README.md, docs/*.md, the DocC catalog (Sources/YOLO/YOLO.docc/*.md) and the doc comments of
Sources/ (what DocC shows). scripts/check-as-dependency.sh builds them as the target `Snippets` of its app.

    doc-snippets.py sources OUT_DIR     one file per block in OUT_DIR (emptied first)
    doc-snippets.py manifest URL VERSION
                                        the app's Package.swift: README's manifest block with its URL and
                                        version replaced, plus the target Snippets; other manifest fragments
                                        (the DocC catalog's) are compiled as unused values in it

A block that imports modules gets exactly those imports (what a reader copies); a block without imports
gets every library product's. Each block becomes the body of an `async throws` function, and, unless it
awaits, also of a plain `throws` one: synchronous calls must compile in both. Names the docs use without
declaring them (`detector`, `image`, ...) are declared in Prelude.swift. Manifest blocks are those that
contain `.package(`.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRODUCTS = ["YOLO", "YOLOModels", "YOLOVideo", "YOLOConversion", "YOLOEvaluation", "YOLOMOTMetrics"]
# Names the docs use as if declared in an earlier block or by the reader's program.
PRELUDE = """import Foundation
import YOLO

// What the doc blocks use without declaring: the reader's own values. Never evaluated (the blocks are compiled, not run).
var model: Model { fatalError() }
var lut8: Model { fatalError() }
var detector: Detector { fatalError() }
var image: Image { fatalError() }
var options: DetectionOptions { fatalError() }
var path: String { fatalError() }
var first: Image { fatalError() }
var frames: [Image] { fatalError() }
var framePaths: [String] { fatalError() }
func draw(_ box: Rect, dashed: Bool) {}
"""


def markdown_blocks(path):
    """The ```swift blocks of a Markdown file: (first line number, text)."""
    blocks, lines, start = [], None, 0
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        stripped = line.strip()
        if lines is None and stripped == "```swift":
            lines, start = [], number + 1
        elif lines is not None and stripped == "```":
            blocks.append((start, "".join(lines)))
            lines = None
        elif lines is not None:
            lines.append(line)
    return blocks


def comment_blocks(path):
    """The ```swift blocks of a Swift file's `///` doc comments."""
    blocks, lines, start = [], None, 0
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        stripped = line.strip()
        if not stripped.startswith("///"):
            lines = None
            continue
        text = stripped[3:]
        text = text[1:] if text.startswith(" ") else text
        if lines is None and text.strip() == "```swift":
            lines, start = [], number + 1
        elif lines is not None and text.strip() == "```":
            blocks.append((start, "".join(lines)))
            lines = None
        elif lines is not None:
            lines.append(text + "\n")
    return blocks


def all_blocks():
    """(source path relative to the root, line, text) for every block, in a stable order."""
    found = []
    markdown = ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=ROOT)) \
        + sorted(glob.glob("Sources/YOLO/YOLO.docc/*.md", root_dir=ROOT))
    for relative in markdown:
        found += [(relative, line, text) for line, text in markdown_blocks(os.path.join(ROOT, relative))]
    for relative in sorted(glob.glob("Sources/**/*.swift", root_dir=ROOT, recursive=True)):
        found += [(relative, line, text) for line, text in comment_blocks(os.path.join(ROOT, relative))]
    return found


def is_manifest(text):
    return ".package(" in text


def swift_file(source, line, text):
    """A Swift file compiling the block `text` (from `source`, line `line`)."""
    imports = [l.strip() for l in text.splitlines() if re.match(r"\s*import\s+\w+\s*(//.*)?$", l)]
    body = "\n".join(l for l in text.splitlines() if not re.match(r"\s*import\s+\w+\s*(//.*)?$", l))
    header = imports if imports else ["import " + p for p in PRODUCTS]
    name = re.sub(r"\W", "_", f"{source}_{line}")
    indented = "\n".join("    " + l if l.strip() else "" for l in body.splitlines())
    out = [f"// {source}:{line} (made by scripts/doc-snippets.py)", "import Foundation", *header, ""]
    out += [f"func async_{name}() async throws {{", indented, "}", ""]
    if not re.search(r"\bawait\b", body):
        out += [f"func sync_{name}() throws {{", indented, "}", ""]
    return name, "\n".join(out)


def write_sources(folder):
    os.makedirs(folder, exist_ok=True)
    for old in glob.glob(os.path.join(folder, "*.swift")):
        os.remove(old)
    with open(os.path.join(folder, "Prelude.swift"), "w") as f:
        f.write(PRELUDE)
    count = 0
    for source, line, text in all_blocks():
        if is_manifest(text):
            continue
        name, code = swift_file(source, line, text)
        with open(os.path.join(folder, name + ".swift"), "w") as f:
            f.write(code)
        count += 1
    print(f"doc-snippets: {count} blocks written to {folder}")


def manifest(url, version):
    blocks = [(s, l, t) for s, l, t in all_blocks() if is_manifest(t)]
    main = [b for b in blocks if re.search(r"^\s*dependencies:", b[2], re.M)]
    if len(main) != 1 or main[0][0] != "README.md":
        sys.exit(f"doc-snippets: expected one full manifest block, in README.md; found {[(s, l) for s, l, _ in main]}")
    text = re.sub(r'\.package\(url: "[^"]*", from: "[^"]*"\)', f'.package(url: "{url}", from: "{version}")', main[0][2])
    out = ["// swift-tools-version:6.2", "import PackageDescription", "",
           f"// README.md:{main[0][1]}, with this check's URL and version.", 'let package = Package(', '    name: "app",']
    out += ["    " + l for l in text.rstrip().splitlines()]
    out += [")", "", "// Every library product, for the doc blocks (scripts/doc-snippets.py).",
            'package.targets.append(.target(name: "Snippets", dependencies: ['
            + ", ".join(f'.product(name: "{p}", package: "SwiftYOLO")' for p in PRODUCTS) + "]))"]
    for source, line, text in blocks:
        if (source, line) == main[0][:2]:
            continue
        # A fragment: its dependency and target lines, each compiled as an element of an unused array.
        code = [l.strip().rstrip(",") for l in text.splitlines() if l.strip() and not l.strip().startswith("//")]
        dependencies = [l for l in code if l.startswith(".package(")]
        targets = [l for l in code if not l.startswith(".package(")]
        tag = re.sub(r"\W", "_", f"{source}_{line}")
        out += ["", f"// {source}:{line}"]
        out += [f"let dependencies_{tag}: [Package.Dependency] = [{', '.join(dependencies)}]"]
        out += [f"let targets_{tag}: [Target] = [{', '.join(targets)}]"]
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "sources":
        write_sources(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "manifest":
        manifest(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
