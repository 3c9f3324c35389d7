#if COURIER_FUZZ
@testable import Courier
import Foundation

/// `FTPListingParser` on a `LIST` body (Unix and DOS styles, `FTPLISTParser`) and on an `MLSD` body
/// (`FTPMLSDParser`). Every entry has an acceptable name, a size that is not negative and permission
/// bits only; it survives the JSON Lines listing format; an MLSD file or directory written back as
/// an MLSD line parses to the same entry.
enum FTPListingHarness {
    /// A fixed "now", so that a crash found with a yearless `LIST` date reproduces.
    private static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static func runLIST(_ input: Data) {
        check(FTPListingParser.parse(input, mlsd: false, now: now), from: input)
    }

    static func runMLSD(_ input: Data) {
        let entries = FTPListingParser.parse(input, mlsd: true, now: now)
        check(entries, from: input)
        for entry in entries where entry.type == .file || entry.type == .directory {
            var facts = "type=\(entry.type == .file ? "file" : "dir");"
            if let size = entry.size { facts += "size=\(size);" }
            if let permissions = entry.permissions { facts += "UNIX.mode=\(String(permissions, radix: 8));" }
            let line = facts + " " + entry.name
            let again = FTPMLSDParser.entry(fromLine: line)
            fuzzCheck(again?.name == entry.name && again?.type == entry.type && again?.size == entry.size
                          && again?.permissions == entry.permissions,
                      "MLSD line does not parse back: \(line.debugDescription)")
        }
    }

    private static func check(_ entries: [URLDirectoryEntry], from input: Data) {
        for entry in entries {
            fuzzCheck(FTPListingParser.isAcceptableName(entry.name), "entry name \(entry.name.debugDescription)")
            fuzzCheck(entry.size.map { $0 >= 0 } ?? true, "negative size \(entry.size ?? 0) for \(entry.name.debugDescription)")
            fuzzCheck(entry.permissions.map { $0 <= 0o7777 } ?? true, "permissions \(entry.permissions ?? 0)")
        }
        guard let decoded = try? URLDirectoryListing.decode(URLDirectoryListing.encode(entries)) else {
            fuzzCheck(false, "the JSON Lines listing of \(entries.count) entries does not decode")
            return
        }
        fuzzCheck(decoded.count == entries.count, "JSON Lines round trip kept \(decoded.count) of \(entries.count) entries")
        for (entry, again) in zip(entries, decoded) {
            var same = again
            same.modificationDate = entry.modificationDate
            fuzzCheck(same == entry, "JSON Lines round trip changed \(entry)")
            switch (entry.modificationDate, again.modificationDate) {
            case (nil, nil): break
            case (let date?, let back?):
                fuzzCheck(abs(date.timeIntervalSince(back)) < 0.001, "JSON Lines round trip moved \(date) to \(back)")
            default:
                fuzzCheck(false, "JSON Lines round trip lost or added the date of \(entry)")
            }
        }
    }
}
#endif
