import Foundation
import Courier

/// Where the bodies of explicitly named URLs go (`-o/--output`).
///
/// The rule: without `-o`, every body goes to standard output, one after the other. With one URL,
/// `-o PATH` is the file the body is saved in, unless PATH is an existing directory. With several URLs,
/// `-o PATH` is a directory (created if missing; its parent must exist), and each body is saved there
/// under a name taken from its URL: the last path component, `data-N` for a data: URL, `index-N` when the
/// path has no usable last component, N being the URL's position (1, 2, ...); a name already used in
/// the same run gets `-N` appended. Every file is written to a temporary file beside it first and moved
/// into place only when its load succeeded.
enum OutputDestination: Sendable {
    case standardOutput
    case file(String)
    case directory(String)

    /// Picks the destination for `output` and `urlCount` URLs, creating the directory when needed.
    static func plan(output: String?, urlCount: Int) throws(ToolFailure) -> OutputDestination {
        guard let output else { return .standardOutput }
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory)
        if exists && isDirectory.boolValue { return .directory(output) }
        if urlCount <= 1 { return .file(output) }
        if exists {
            throw ToolFailure(.cannotCreateFile, "-o \(output) must be a directory when several URLs are given",
                              exit: .usage)
        }
        if mkdir(output, 0o777) != 0 {
            throw ToolFailure(wrapping: OutputError(operation: .create, path: output, errno: errno))
        }
        return .directory(output)
    }

    /// The file name the body of `url`, at 1-based `position`, gets in a directory.
    static func fileName(for url: URL, position: Int, used: Set<String>) -> String {
        var name: String
        if url.scheme?.lowercased() == "data" {
            name = "data-\(position)"
        } else {
            name = url.lastPathComponent
            if name.isEmpty || name == "/" || name == "." || name == ".." || name.contains("/") {
                name = "index-\(position)"
            }
        }
        if used.contains(name) { name += "-\(position)" }
        return name
    }
}
