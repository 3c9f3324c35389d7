import Foundation
import Courier

/// `-C/--continue-at`: where a download resumes in its output file, and how the request asks
/// for the rest.
///
/// Over http(s) the request carries `Range: bytes=OFFSET-` and the body is appended to the file
/// from OFFSET (the file is cut to OFFSET first): a `206` continues it; a `416`, or a `200` whose
/// length is the offset, means the file is complete already; any other `200` fails, as curl does,
/// rather than append a whole body to the part. Over ftp, ftps and sftp the same header asks
/// Courier's handlers to start at OFFSET (`REST` over FTP, a seek over SFTP), without checking the
/// file is unchanged, as curl's `-C` does; a start past the end of the file fails. Other schemes
/// cannot resume at an arbitrary offset, so `-C` with an offset above zero fails there with a clear
/// message.
enum ResumePlan {
    /// What `-C` asks for.
    enum Start: Sendable, Equatable {
        /// `-C -`: continue at the output file's size.
        case automatic
        /// `-C N`: continue at byte N.
        case offset(Int64)

        /// Parses a `-C` argument; nil for anything but `-` or a non-negative number.
        init?(argument: String) {
            if argument == "-" {
                self = .automatic
            } else if let offset = Int64(argument), offset >= 0 {
                self = .offset(offset)
            } else {
                return nil
            }
        }
    }

    /// The offset `start` means for the file at `path` (a missing file has size 0).
    static func offset(for start: Start, path: String) -> Int64 {
        switch start {
        case .offset(let offset):
            return offset
        case .automatic:
            let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber
            return size?.int64Value ?? 0
        }
    }

    /// Whether `url`'s scheme resumes through a `Range` header.
    static func resumesWithRange(_ url: URL) -> Bool {
        ["http", "https", "ftp", "ftps", "sftp"].contains(url.scheme?.lowercased() ?? "")
    }

    /// What to do with `response` to a request resumed at `offset`.
    static func decision(for response: URLResponse, offset: Int64) -> ResponseDecision {
        guard offset > 0, let http = response as? HTTPURLResponse else { return .proceed }
        switch http.statusCode {
        case 206:
            return .proceed
        case 416:
            return .skipBody
        case 200 where http.expectedContentLength == offset:
            return .skipBody
        case 200...299:
            return .fail(ToolFailure(.badServerResponse, "the server does not support byte ranges: cannot resume at \(offset)",
                                     url: response.url, exit: .serverError))
        default:
            return .proceed
        }
    }
}
