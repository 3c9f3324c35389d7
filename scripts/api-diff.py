#!/usr/bin/env python3
"""Compare Courier's public interface with FoundationNetworking's.

Courier promises that a program written for `import FoundationNetworking` compiles after that one
import becomes `import Courier`. This script checks the promise at the level of declarations: it
prints both module interfaces with `swift-synthesize-interface`, normalises them and lists every
declaration FoundationNetworking has that Courier lacks or declares differently.

Normalisation (what is *not* a difference):
  * doc comments, blank lines, `import` lines, `deinit`;
  * module qualification (`Courier.URLRequest` == `FoundationNetworking.URLRequest` == `URLRequest`);
  * member order inside a type, and whether a member sits in the type or in one of its extensions
    (except for `open` members, which cannot be overridden from an extension);
  * internal parameter names (`for space:` == `for protectionSpace:`); labels are compared;
  * how a read-only property is spelled: `let x: T`, `var x: T { get }` and
    `var x: T` with `private(set)`, `fileprivate(set)` or `internal(set)` are the same to a caller;
  * platform `@available(macOS …)` attributes and `@discardableResult`;
  * deprecation (`@available(*, deprecated…)`, `@available(swift, deprecated…)`): a mismatch is
    printed as a note and does not fail the run.

Everything else is compared exactly: names, argument labels, types, `open` versus `public`,
`override`, `required`, `convenience`, `static`/`class`, `@Sendable`, `@escaping`, `throws`,
`async`, default arguments, optionality, enum cases (and their order, which fixes raw values),
and each type's superclass and conformances.

Differences that a later issue is expected to close are listed in an allow-list (default:
`api-diff.allow` beside this script): one Python regular expression a line, matched against each
difference line; `#` starts a comment. The script exits 1 when a difference is not allowed, 2 when
an interface cannot be produced, 0 otherwise.

Usage:
  scripts/api-diff.py                      # build Courier into .build-compat, print, compare
  scripts/api-diff.py --no-build           # reuse what .build-compat holds
  scripts/api-diff.py --foundation-interface fn.swift --courier-interface courier.swift
  scripts/api-diff.py --show-extras        # also list what Courier has and FoundationNetworking lacks
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_diff_interface import Member, TypeDecl, parse_interface  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ALLOWLIST = Path(__file__).resolve().parent / "api-diff.allow"
TARGET = "x86_64-unknown-linux-gnu"

# ---------------------------------------------------------------------------------------------
# Producing the interfaces
# ---------------------------------------------------------------------------------------------


def find_tool(name: str) -> str:
    """Finds a toolchain executable: next to `swift` on PATH, then PATH, then /opt/swift."""
    swift = shutil.which("swift")
    candidates = []
    if swift:
        candidates.append(Path(os.path.realpath(swift)).parent / name)
    found = shutil.which(name)
    if found:
        candidates.append(Path(found))
    candidates.append(Path("/opt/swift/usr/bin") / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    sys.stderr.write(f"api-diff: cannot find {name} (looked next to swift, on PATH, in /opt/swift)\n")
    raise SystemExit(2)


def toolchain_linux_lib() -> str:
    """The toolchain's lib/swift/linux folder, where FoundationNetworking.swiftmodule lives."""
    swiftc = find_tool("swiftc")
    return str(Path(swiftc).parent.parent / "lib" / "swift" / "linux")


def synthesize(module: str, includes: list[str]) -> str:
    tool = find_tool("swift-synthesize-interface")
    cmd = [tool, "-module-name", module, "-target", TARGET]
    for include in includes:
        cmd += ["-I", include]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0 or not result.stdout.strip():
        sys.stderr.write(result.stderr)
        raise SystemExit(2)
    return result.stdout


def courier_modules_dir(scratch: Path, build: bool) -> str:
    if build:
        cmd = ["swift", "build", "--package-path", str(REPO_ROOT), "--scratch-path", str(scratch),
               "--target", "Courier"]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            sys.stderr.write(result.stdout[-4000:])
            sys.stderr.write(result.stderr[-4000:])
            sys.stderr.write("api-diff: building Courier failed\n")
            raise SystemExit(2)
    for candidate in (scratch / "debug" / "Modules", scratch / TARGET / "debug" / "Modules"):
        if (candidate / "Courier.swiftmodule").exists():
            return str(candidate)
    sys.stderr.write(f"api-diff: no Courier.swiftmodule under {scratch}/debug/Modules\n")
    raise SystemExit(2)


def clang_module_dirs() -> list[str]:
    """Folders holding the module maps of the package's C and system-library targets (such as
    CCurl), which loading Courier's module needs."""
    maps = list((REPO_ROOT / "Sources").glob("*/module.modulemap"))
    maps += list((REPO_ROOT / "Sources").glob("*/include/module.modulemap"))
    return sorted({str(m.parent) for m in maps})


# ---------------------------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------------------------


def display(path: str) -> str:
    return path or "<module>"


def compare(fn: dict[str, TypeDecl], courier: dict[str, TypeDecl]) -> tuple[list[str], list[str], list[str]]:
    """Returns (differences, notes, extras)."""
    diffs: list[str] = []
    notes: list[str] = []
    extras: list[str] = []

    for path in sorted(fn):
        theirs = fn[path]
        ours = courier.get(path)
        where = display(path)
        if ours is None or (theirs.kind and not ours.kind):
            diffs.append(f"MISSING TYPE {where}: {theirs.header} {path}".rstrip())
            continue
        if theirs.kind and theirs.header != ours.header:
            diffs.append(f"DIFFERENT {where}: declared `{theirs.header}`, Courier has `{ours.header}`")
        if theirs.inherits != ours.inherits:
            missing = sorted(theirs.inherits - ours.inherits)
            extra = sorted(ours.inherits - theirs.inherits)
            if missing:
                diffs.append(f"CONFORMANCE {where}: Courier lacks {', '.join(missing)}")
            if extra:
                diffs.append(f"CONFORMANCE {where}: Courier adds {', '.join(extra)}")
        if theirs.deprecated != ours.deprecated:
            notes.append(f"deprecation of {where}: FoundationNetworking {theirs.deprecated}, Courier {ours.deprecated}")
        if theirs.cases and [c for c in theirs.cases] != [c for c in ours.cases if c in theirs.cases]:
            diffs.append(f"CASE ORDER {where}: FoundationNetworking {theirs.cases}, Courier {ours.cases}")

        our_sigs: dict[str, list[Member]] = {}
        for member in ours.members:
            our_sigs.setdefault(member.sig, []).append(member)
        their_sigs = {m.sig for m in theirs.members}
        for member in theirs.members:
            matches = our_sigs.get(member.sig)
            if matches:
                if member.is_open and not member.in_extension and all(m.in_extension for m in matches):
                    diffs.append(f"IN EXTENSION {where}: `{member.raw}` is declared in an extension in Courier, "
                                 f"so it cannot be overridden")
                if member.deprecated != matches[0].deprecated:
                    notes.append(f"deprecation of {where}: `{member.raw}`: FoundationNetworking "
                                 f"{member.deprecated}, Courier {matches[0].deprecated}")
                continue
            candidates = [m for m in ours.members if m.key == member.key and m.sig not in their_sigs]
            if not candidates:  # same name, other labels
                base = member.key.split("(")[0]
                candidates = [m for m in ours.members
                              if "(" in m.key and m.key.split("(")[0] == base and m.sig not in their_sigs
                              and not any(t.key == m.key for t in theirs.members)]
            if candidates:
                alternatives = " | ".join(f"`{m.sig}`" for m in candidates)
                diffs.append(f"DIFFERENT {where}: `{member.sig}`; Courier has {alternatives}")
            else:
                diffs.append(f"MISSING {where}: `{member.sig}`")
        for member in ours.members:
            if member.sig not in their_sigs:
                extras.append(f"{where}: `{member.sig}`")

    for path in sorted(courier):
        if path not in fn:
            extras.append(f"type {display(path)} ({courier[path].header or 'extension'})")
    return diffs, notes, extras


def load_allowlist(path: Path | None) -> list[tuple[str, re.Pattern[str]]]:
    if path is None or not path.exists():
        return []
    patterns = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            patterns.append((line, re.compile(line)))
    return patterns


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--foundation-interface", type=Path, help="use this file instead of synthesising it")
    parser.add_argument("--courier-interface", type=Path, help="use this file instead of synthesising it")
    parser.add_argument("--scratch-path", type=Path,
                        default=Path(os.environ.get("COURIER_COMPAT_SCRATCH", REPO_ROOT / ".build-compat")),
                        help="SwiftPM scratch path for building Courier (default: .build-compat)")
    parser.add_argument("--no-build", action="store_true", help="do not run swift build first")
    parser.add_argument("--allowlist", type=Path, default=DEFAULT_ALLOWLIST,
                        help="file of regular expressions for expected differences")
    parser.add_argument("--show-extras", action="store_true",
                        help="also list declarations Courier has and FoundationNetworking lacks")
    parser.add_argument("--save-interfaces", type=Path, help="write both synthesised interfaces into this folder")
    args = parser.parse_args()

    if args.foundation_interface:
        fn_text = args.foundation_interface.read_text()
    else:
        fn_text = synthesize("FoundationNetworking", [toolchain_linux_lib()])
    if args.courier_interface:
        courier_text = args.courier_interface.read_text()
    else:
        modules = courier_modules_dir(args.scratch_path, not args.no_build)
        courier_text = synthesize("Courier", [modules] + clang_module_dirs())
    if args.save_interfaces:
        args.save_interfaces.mkdir(parents=True, exist_ok=True)
        (args.save_interfaces / "FoundationNetworking.swiftinterface.txt").write_text(fn_text)
        (args.save_interfaces / "Courier.swiftinterface.txt").write_text(courier_text)

    diffs, notes, extras = compare(parse_interface(fn_text), parse_interface(courier_text))
    allow = load_allowlist(args.allowlist)
    used = set()
    unexpected, expected = [], []
    for diff in diffs:
        hits = [source for source, pattern in allow if pattern.search(diff)]
        if not hits:
            unexpected.append(diff)
        else:
            used.update(hits)
            expected.append(diff)

    if expected:
        print(f"Expected differences (allow-listed, {len(expected)}):")
        for diff in expected:
            print(f"  {diff}")
    for source, _ in allow:
        if source not in used:
            print(f"note: allow-list entry matched nothing: {source}")
    for note in notes:
        print(f"note: {note}")
    if args.show_extras:
        print(f"Courier additions ({len(extras)}):")
        for extra in extras:
            print(f"  {extra}")
    if unexpected:
        print(f"Differences from FoundationNetworking ({len(unexpected)}):")
        for diff in unexpected:
            print(f"  {diff}")
        print(f"api-diff: {len(unexpected)} unexpected difference(s)")
        return 1
    print("api-diff: Courier declares everything FoundationNetworking declares, the same way "
          f"({len(expected)} allow-listed difference(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
