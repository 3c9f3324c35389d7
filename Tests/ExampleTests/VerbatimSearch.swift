/// Whether a documentation block appears in a source file as it is shown: its lines, in order and
/// consecutive, each the file's line with one indentation (the same for every line) taken off. A
/// block shown at the top level may so sit inside a function or a type in the file. Blank lines match
/// blank (or whitespace-only) lines.
enum VerbatimSearch {
    static func contains(_ file: String, block: String) -> Bool {
        let fileLines = lines(of: file)
        let blockLines = lines(of: block)
        guard let first = blockLines.first(where: { !$0.isEmpty }),
              let firstIndex = blockLines.firstIndex(of: first) else { return true }
        guard fileLines.count >= blockLines.count else { return false }
        for start in 0...(fileLines.count - blockLines.count) {
            let candidate = fileLines[start + firstIndex]
            guard candidate.hasSuffix(first) else { continue }
            let indentation = String(candidate.dropLast(first.count))
            guard indentation.allSatisfy({ $0 == " " }) else { continue }
            let matches = blockLines.enumerated().allSatisfy { offset, line in
                let fileLine = fileLines[start + offset]
                return line.isEmpty ? fileLine.allSatisfy { $0 == " " } : fileLine == indentation + line
            }
            if matches { return true }
        }
        return false
    }

    private static func lines(of text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }
}
