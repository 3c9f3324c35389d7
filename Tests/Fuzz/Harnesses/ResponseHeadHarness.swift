#if COURIER_FUZZ
@testable import Courier
import Foundation

/// `CurlResponseHeadParser`: the input split into lines (each keeps its LF) as libcurl's header
/// callback hands them over. A head has a final status code of three digits (not 1xx, except 101
/// Switching Protocols, which ends the head as libcurl treats it) and an
/// `HTTP/` version that parse back to themselves, and field names without surrounding blanks that
/// can be looked up.
enum ResponseHeadHarness {
    static func run(_ input: Data) {
        var parser = CurlResponseHeadParser()
        var start = input.startIndex
        while start < input.endIndex {
            let end = input[start...].firstIndex(of: 0x0A).map { input.index(after: $0) } ?? input.endIndex
            let line = input[start..<end]
            start = end
            let outcome = Data(line).withUnsafeBytes { parser.consume($0) }
            guard case .head(let head) = outcome else { continue }
            fuzzCheck((200...999).contains(head.statusCode) || head.statusCode == 101, "status \(head.statusCode)")
            fuzzCheck(head.httpVersion.hasPrefix("HTTP/") && !head.httpVersion.contains(" "),
                      "version \(head.httpVersion)")
            let statusLine = "\(head.httpVersion) \(head.statusCode) Reason"
            let parsed = CurlResponseHeadParser.parseStatusLine(statusLine)
            fuzzCheck(parsed?.0 == head.httpVersion && parsed?.1 == head.statusCode,
                      "status line does not parse back: \(statusLine)")
            for name in head.fields.names {
                fuzzCheck(!name.isEmpty && name.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) == name,
                          "field name \(name.debugDescription)")
                fuzzCheck(head.fields.value(for: name) != nil, "field \(name.debugDescription) cannot be looked up")
            }
        }
    }
}
#endif
