import Foundation

/// Resumable HTTP downloads: the validator a response offers, the headers that ask a server to
/// continue, and whether its answer did.
enum HTTPResumeSupport {
    /// The validator to store in resume data: a strong entity tag, else `Last-Modified`; `nil` (no
    /// resume data) when there is neither, or when the body is content-encoded: Courier stores it
    /// decoded, and a `Range` counts bytes of the encoded representation, so no offset in the file
    /// could ask for the rest.
    static func validator(of response: HTTPURLResponse) -> String? {
        if let coding = response.value(forHTTPHeaderField: "Content-Encoding"),
           !coding.isEmpty, coding.lowercased() != "identity" { return nil }
        if let tag = response.value(forHTTPHeaderField: "ETag"), !tag.hasPrefix("W/"), !tag.isEmpty { return tag }
        if let modified = response.value(forHTTPHeaderField: "Last-Modified"), !modified.isEmpty { return modified }
        return nil
    }

    /// Header lines asking to continue at `offset` if the resource still matches `validator`.
    static func requestHeaders(offset: Int64, validator: String?) -> [String] {
        var lines = ["Range: bytes=\(offset)-"]
        if let validator { lines.append("If-Range: \(validator)") }
        return lines
    }

    /// When `response` continues the body at exactly `offset`, the full length (or -1 when the
    /// server does not say); `nil` when the server sent something else (the download restarts).
    static func continuation(of response: HTTPURLResponse, at offset: Int64) -> Int64? {
        guard response.statusCode == 206,
              let range = response.value(forHTTPHeaderField: "Content-Range") else { return nil }
        // "bytes 100-999/1000" or "bytes 100-999/*"
        let text = range.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst(6)
        let halves = spec.split(separator: "/", maxSplits: 1)
        guard halves.count == 2, let dash = halves[0].firstIndex(of: "-"),
              let start = Int64(halves[0][..<dash]), start == offset else { return nil }
        return Int64(halves[1]) ?? -1
    }
}
