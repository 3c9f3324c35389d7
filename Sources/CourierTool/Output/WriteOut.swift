import Foundation
import Courier

/// What `-w` can report about one finished transfer.
struct TransferReport: Sendable {
    /// The URL as given on the command line.
    var url: String
    /// The URL last loaded (after redirects).
    var effectiveURL: String
    /// The HTTP status, or 0 when there was no HTTP response.
    var httpCode: Int = 0
    var sizeDownload: Int64 = 0
    var sizeUpload: Int64 = 0
    var timeTotal: Double = 0
    var contentType: String?
    var redirects = 0
    var exitCode: Int32 = 0
    var errorMessage = ""
    /// The HTTP version of the response (`1.1`, `2`), or empty.
    var httpVersion = ""
    /// Where the body was saved, or empty for standard output.
    var fileName = ""
}

/// A parsed `-w/--write-out` format, as curl reads it: `%{variable}`, `%%` for a percent sign, and
/// the escapes `\n`, `\r`, `\t` and `\\`; everything else is written as is.
struct WriteOut: Sendable, Equatable {
    /// A piece of the format.
    enum Piece: Sendable, Equatable {
        case text(String)
        case variable(String)
    }

    /// The variables courier knows (curl's names).
    static let variables: Set<String> = [
        "http_code", "response_code", "size_download", "size_upload", "time_total", "url_effective",
        "url", "content_type", "num_redirects", "exitcode", "errormsg", "http_version", "filename_effective",
    ]

    let pieces: [Piece]

    /// Parses `format`.
    init(format: String) {
        var pieces: [Piece] = []
        var text = ""
        var index = format.startIndex
        while index < format.endIndex {
            let character = format[index]
            let next = format.index(after: index)
            if character == "%", next < format.endIndex {
                if format[next] == "%" {
                    text.append("%")
                    index = format.index(after: next)
                    continue
                }
                if format[next] == "{", let close = format[next...].firstIndex(of: "}") {
                    if !text.isEmpty { pieces.append(.text(text)); text = "" }
                    pieces.append(.variable(String(format[format.index(after: next)..<close])))
                    index = format.index(after: close)
                    continue
                }
            }
            if character == "\\", next < format.endIndex {
                let escaped: Character? = switch format[next] {
                case "n": "\n"
                case "r": "\r"
                case "t": "\t"
                case "\\": "\\"
                default: nil
                }
                if let escaped {
                    text.append(escaped)
                    index = format.index(after: next)
                    continue
                }
            }
            text.append(character)
            index = next
        }
        if !text.isEmpty { pieces.append(.text(text)) }
        self.pieces = pieces
    }

    /// The format named by a `-w` argument: `@FILE` reads it from a file (`@-` from standard input).
    static func load(_ argument: String) throws(ToolFailure) -> WriteOut {
        guard argument.hasPrefix("@") else { return WriteOut(format: argument) }
        let path = String(argument.dropFirst())
        if path == "-" {
            return WriteOut(format: String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self))
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ToolFailure(.fileDoesNotExist, "cannot read -w file \(path)", url: URL(fileURLWithPath: path), exit: .usage)
        }
        return WriteOut(format: String(decoding: data, as: UTF8.self))
    }

    /// The variables in the format that courier does not know.
    var unknownVariables: [String] {
        pieces.compactMap { if case .variable(let name) = $0, !Self.variables.contains(name) { name } else { nil } }
    }

    /// The text for `report`; unknown variables write nothing.
    func render(_ report: TransferReport) -> String {
        pieces.map { piece in
            switch piece {
            case .text(let text): text
            case .variable(let name): Self.value(of: name, in: report) ?? ""
            }
        }.joined()
    }

    /// One variable's value, as curl formats it.
    static func value(of name: String, in report: TransferReport) -> String? {
        switch name {
        case "http_code", "response_code": String(format: "%03d", report.httpCode)
        case "size_download": String(report.sizeDownload)
        case "size_upload": String(report.sizeUpload)
        case "time_total": String(format: "%.6f", report.timeTotal)
        case "url_effective": report.effectiveURL
        case "url": report.url
        case "content_type": report.contentType ?? ""
        case "num_redirects": String(report.redirects)
        case "exitcode": String(report.exitCode)
        case "errormsg": report.errorMessage
        case "http_version": report.httpVersion
        case "filename_effective": report.fileName
        default: nil
        }
    }
}
