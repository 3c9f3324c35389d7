import Foundation

/// One fenced code block of `README.md`, `Documentation/*.md` or a DocC article, with the marker on the
/// line before it.
///
/// Every block carries one of these HTML comments (invisible when the Markdown is rendered):
/// - `<!-- example: NAME -->` — part of example NAME, which ``ExampleRunTests`` builds and runs. A
///   ```` ```swift ```` block also appears verbatim in a file of `Examples/NAME/`; a ```` ```console ````
///   block's `$ ` lines are run and the lines after each are what it must print; a ```` ```sh ````
///   block runs and prints nothing; a ```` ```c ```` block is compiled.
/// - `<!-- output: NAME -->` — what example NAME prints when run with no arguments.
/// - `<!-- source: PATH -->` — appears verbatim in the repository's file PATH, which is compiled or read.
/// - `<!-- fragment: REASON -->` — not checked, for the reason given.
struct DocumentationBlock: Sendable, CustomStringConvertible {
    /// What the marker says to do with the block.
    enum Marker: Sendable, Equatable {
        case example(String)
        case output(String)
        case source(String)
        case fragment(String)
    }

    /// The Markdown file, relative to the repository root (`README.md`, `Documentation/Plugins.md`).
    let file: String
    /// The line of the opening fence, counted from 1.
    let line: Int
    /// The info string after the opening fence (`swift`, `console`, or empty).
    let language: String
    /// The marker on the line before the fence, or nil when there is none (or it is not understood).
    let marker: Marker?
    /// The lines between the fences, joined with newlines (no trailing newline).
    let text: String

    var description: String { "\(file):\(line)" }

    /// The Markdown files whose blocks are checked: the README, the design notes, and the articles of
    /// the DocC catalogs (`Sources/<Target>/<Target>.docc/`).
    static func documentationFiles(in root: URL) throws -> [String] {
        let manager = FileManager.default
        func markdown(in directory: String) throws -> [String] {
            try manager.contentsOfDirectory(atPath: root.appendingPathComponent(directory).path)
                .filter { $0.hasSuffix(".md") }.sorted().map { "\(directory)/\($0)" }
        }
        var files = try ["README.md"] + markdown(in: "Documentation")
        for target in try manager.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path).sorted() {
            let catalog = "Sources/\(target)/\(target).docc"
            if manager.fileExists(atPath: root.appendingPathComponent(catalog).path) { files += try markdown(in: catalog) }
        }
        return files
    }

    /// Every fenced block of every documentation file under `root`.
    static func all(in root: URL) throws -> [DocumentationBlock] {
        try documentationFiles(in: root).flatMap { file in
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            return parse(text, file: file)
        }
    }

    /// The fenced blocks of one Markdown text. A fence is a line starting with three backticks (after
    /// indentation); the block ends at the next line that is only such a fence.
    static func parse(_ markdown: String, file: String) -> [DocumentationBlock] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [DocumentationBlock] = []
        var index = 0
        while index < lines.count {
            let opening = lines[index].trimmingCharacters(in: .whitespaces)
            guard opening.hasPrefix("```") else {
                index += 1
                continue
            }
            let language = String(opening.dropFirst(3)).trimmingCharacters(in: .whitespaces)
            let marker = index > 0 ? Marker(comment: lines[index - 1]) : nil
            var body: [String] = []
            var end = index + 1
            while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "```" {
                body.append(lines[end])
                end += 1
            }
            blocks.append(DocumentationBlock(file: file, line: index + 1, language: language, marker: marker,
                                             text: body.joined(separator: "\n")))
            index = end + 1
        }
        return blocks
    }
}

extension DocumentationBlock.Marker {
    /// The marker an HTML comment line holds (`<!-- example: HelloData -->`), or nil.
    init?(comment line: String) {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("<!--"), trimmed.hasSuffix("-->") else { return nil }
        let inner = trimmed.dropFirst(4).dropLast(3).trimmingCharacters(in: .whitespaces)
        guard let colon = inner.firstIndex(of: ":") else { return nil }
        let value = inner[inner.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !value.isEmpty else { return nil }
        switch inner[..<colon] {
        case "example": self = .example(value)
        case "output": self = .output(value)
        case "source": self = .source(value)
        case "fragment": self = .fragment(value)
        default: return nil
        }
    }
}
