"""Parse a Swift module interface, as `swift-synthesize-interface` prints it, into types and
normalised member signatures: the parsing half of `api-diff.py` (which documents what the
normalisation treats as the same)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MODULE_QUALIFIERS = ("Courier", "FoundationNetworking", "FoundationEssentials", "Foundation", "Swift")
TYPE_KEYWORDS = ("class", "struct", "enum", "protocol", "extension", "actor")


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
