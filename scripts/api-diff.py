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

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ALLOWLIST = Path(__file__).resolve().parent / "api-diff.allow"
TARGET = "x86_64-unknown-linux-gnu"
MODULE_QUALIFIERS = ("Courier", "FoundationNetworking", "FoundationEssentials", "Foundation", "Swift")
TYPE_KEYWORDS = ("class", "struct", "enum", "protocol", "extension", "actor")

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
# Parsing
# ---------------------------------------------------------------------------------------------


@dataclass
class Member:
    """One declaration inside a type (or at module scope)."""

    raw: str            # the declaration as printed, module qualifiers removed
    sig: str            # normalised signature, what is compared
    key: str            # identity used to pair a declaration with a differently declared one
    deprecated: bool
    in_extension: bool
    is_open: bool


@dataclass
class TypeDecl:
    """A type, with its extensions folded in."""

    path: str
    kind: str = ""                 # class, struct, enum, protocol ("" while only extensions were seen)
    header: str = ""               # modifiers and keyword as declared, e.g. "open class"
    inherits: set[str] = field(default_factory=set)
    deprecated: bool = False
    members: list[Member] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)


def strip_qualifiers(text: str) -> str:
    pattern = r"\b(?:%s)\.(?=[A-Za-z_`])" % "|".join(MODULE_QUALIFIERS)
    return re.sub(pattern, "", text)


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Splits on `sep` outside (), [], <>, {} and string literals (the `>` of `->` is no bracket)."""
    parts: list[str] = []
    current: list[str] = []
    depth, in_string, i = 0, False, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            in_string = not in_string
        elif not in_string:
            if ch == "-" and text[i + 1:i + 2] == ">":
                current.append("->")
                i += 2
                continue
            if ch in "([<{":
                depth += 1
            elif ch in ")]>}":
                depth -= 1
            elif ch == sep and depth == 0:
                parts.append("".join(current))
                current = []
                i += 1
                continue
        current.append(ch)
        i += 1
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def find_matching_paren(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def normalise_parameters(params: str) -> tuple[str, list[str]]:
    """Drops internal parameter names; returns the parameter list text and the labels."""
    out, labels = [], []
    for param in split_top_level(params):
        name_part, _, rest = param.partition(":")
        names = name_part.split()
        label = names[0].strip("`") if names else "_"
        labels.append(label)
        out.append(f"{label}: {rest.strip()}")
    return ", ".join(out), labels


PLATFORM_AVAILABLE = re.compile(r"@available\((?:macOS|iOS|watchOS|tvOS|visionOS|macCatalyst|OSX)\b")
DROPPED_ATTRIBUTES = re.compile(
    r"@(?:discardableResult|inlinable|usableFromInline|_alwaysEmitIntoClient|_transparent|frozen|"
    r"inline\([^)]*\)|_effects\([^)]*\))\s*"
)


def is_deprecation(attribute: str) -> bool:
    return attribute.startswith("@available") and (
        "deprecated" in attribute or "unavailable" in attribute or "renamed" in attribute
    )


def normalise_member(decl: str, attributes: list[str], container_kind: str) -> tuple[str, str]:
    """Returns (signature, key) for one member declaration."""
    text = DROPPED_ATTRIBUTES.sub("", decl).strip()
    kept = [a for a in attributes if not is_deprecation(a) and not PLATFORM_AVAILABLE.match(a)
            and not DROPPED_ATTRIBUTES.fullmatch(a + " ")]
    text = re.sub(r"\s+", " ", text)

    # Modifiers before the introducer.
    m = re.match(r"^((?:(?:[a-z_]+(?:\([a-z]+\))?|@\w+(?:\([^)]*\))?)\s+)*)(func|init\??!?|var|let|case|subscript|typealias|"
                 r"associatedtype|deinit)(?!\w)(.*)$", text)
    if not m:
        return " ".join(kept + [text]), text
    modifiers = m.group(1).split()
    introducer = m.group(2)
    rest = m.group(3)

    read_only_setter = any(re.fullmatch(r"(?:private|fileprivate|internal)\(set\)", mod) for mod in modifiers)
    modifiers = [mod for mod in modifiers if not mod.endswith("(set)") and mod not in ("final",)]
    static_ness = next((mod for mod in modifiers if mod in ("static", "class")), "")

    if introducer in ("var", "let"):
        name_type, accessor = rest, ""
        acc = re.search(r"\{([^{}]*)\}\s*$", rest)
        if acc:
            accessor = acc.group(1).split()
            name_type = rest[: acc.start()]
        name, _, type_ = name_type.partition(":")
        name = name.strip().strip("`")
        type_ = type_.strip()
        if introducer == "let" or read_only_setter:
            access = "get"
        elif accessor:
            access = "get set" if "set" in accessor else "get"
        else:
            access = "get set"
        sig = " ".join(kept + modifiers + ["var", f"{name}: {type_} {{ {access} }}"])
        key = f"{static_ness} var {name}".strip()
        return sig, key

    if introducer == "case":
        sig = " ".join(kept + ["case", rest.strip()])
        name = re.match(r"\s*`?(\w+)", rest)
        return sig, f"case {name.group(1) if name else rest.strip()}"

    if introducer in ("typealias", "associatedtype"):
        name = rest.split("=")[0].split(":")[0].strip()
        sig = " ".join(kept + modifiers + [introducer, re.sub(r"\s+", " ", rest.strip())])
        return sig, f"{introducer} {name}"

    if introducer == "deinit":
        return "deinit", "deinit"

    # func / init / subscript: normalise the parameter list.
    head_end = rest.find("(")
    if head_end < 0:
        return " ".join(kept + modifiers + [introducer + rest]), introducer + rest
    close = find_matching_paren(rest, head_end)
    name = rest[:head_end].strip()
    params, labels = normalise_parameters(rest[head_end + 1:close])
    tail = re.sub(r"\s+", " ", rest[close + 1:].strip())
    sig = " ".join(kept + modifiers + [f"{introducer} {name}({params}) {tail}".strip()])
    sig = sig.replace(f"{introducer} (", f"{introducer}(")
    key_name = name if introducer != "init" else ""
    key = f"{static_ness} {introducer.rstrip('?!')} {key_name}({''.join(l + ':' for l in labels)})"
    return sig.strip(), re.sub(r"\s+", " ", key).strip()


TYPE_HEADER = re.compile(
    r"^(?P<mods>(?:[a-z@_]+(?:\([^)]*\))?\s+)*)(?P<kw>class|struct|enum|protocol|extension|actor)\s+"
    r"(?P<name>[A-Za-z_][\w.]*)(?P<generics><[^{]*?>)?\s*(?::\s*(?P<inherits>[^{]*?))?\s*"
    r"(?P<where>where\s+[^{]*)?\{$"
)


def parse_interface(text: str) -> dict[str, TypeDecl]:
    """Parses a synthesised interface into types keyed by dotted path ("" is module scope)."""
    types: dict[str, TypeDecl] = {"": TypeDecl(path="", kind="module")}
    # Stack of (path, is_extension, container_kind).
    stack: list[tuple[str, bool, str]] = [("", False, "module")]
    attributes: list[str] = []

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("//") or stripped.startswith("import "):
            continue
        stripped = strip_qualifiers(stripped)
        if stripped == "}":
            if len(stack) > 1:
                stack.pop()
            attributes = []
            continue
        if re.fullmatch(r"@\w+(?:\(.*\))?", stripped):
            attributes.append(stripped)
            continue
        header = TYPE_HEADER.match(stripped) if stripped.endswith("{") else None
        if header:
            scope_path = stack[-1][0]
            kw = header.group("kw")
            name = header.group("name")
            if kw == "extension":
                path = name  # an extension names its type in full
            else:
                path = f"{scope_path}.{name}" if scope_path else name
            decl = types.setdefault(path, TypeDecl(path=path))
            inherits = header.group("inherits") or ""
            decl.inherits.update(re.sub(r"\s+", " ", i) for i in split_top_level(inherits))
            if kw != "extension":
                mods = [m for m in header.group("mods").split() if not m.startswith("@")]
                decl.kind = kw
                decl.header = " ".join(mods + [kw])
                decl.deprecated = any(is_deprecation(a) for a in attributes)
                if scope_path:
                    # Record the nested type as a member of its container too.
                    parent = types.setdefault(scope_path, TypeDecl(path=scope_path))
                    parent.members.append(Member(raw=f"{decl.header} {name}", sig=f"{decl.header} {name}",
                                                 key=f"type {name}", deprecated=decl.deprecated,
                                                 in_extension=stack[-1][1], is_open=False))
            stack.append((path, kw == "extension", kw if kw != "extension" else (decl.kind or "extension")))
            attributes = []
            continue
        path, in_extension, _ = stack[-1]
        decl = types.setdefault(path, TypeDecl(path=path))
        container_kind = decl.kind or "extension"
        # A protocol extension's members are defaults, not requirements: keep them apart.
        if decl.kind == "protocol" and in_extension:
            container_kind = "protocol-extension"
        sig, key = normalise_member(stripped, attributes, "protocol" if container_kind == "protocol" else decl.kind)
        if container_kind == "protocol-extension":
            sig, key = "default: " + sig, "default: " + key
        if key == "deinit":
            attributes = []
            continue
        if key.startswith("case "):
            decl.cases.append(key[5:])
        decl.members.append(Member(raw=stripped, sig=sig, key=key,
                                   deprecated=any(is_deprecation(a) for a in attributes),
                                   in_extension=in_extension,
                                   is_open=bool(re.match(r"^(?:[a-z]+\s+)*open\b", stripped))))
        attributes = []
    # Module-scope globals are printed twice by the tool (as `let` and as `var`): fold duplicates.
    for decl in types.values():
        seen: dict[str, Member] = {}
        unique = []
        for member in decl.members:
            if member.sig in seen:
                continue
            seen[member.sig] = member
            unique.append(member)
        decl.members = unique
    return types


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
