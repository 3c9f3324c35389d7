import Foundation

/// The contents of the opaque resume data a cancelled or failed download produces.
///
/// Encoded as versioned JSON. Decoding validates every field, so resume data that was damaged, made
/// by another program or by an incompatible version gives a clear error, never a crash.
struct DownloadResumeData: Codable, Equatable {
    /// Identifies Courier resume data.
    static let format = "courier.download-resume"
    /// The version this code writes and reads.
    static let currentVersion = 1

    var format: String = DownloadResumeData.format
    var version: Int = DownloadResumeData.currentVersion
    /// The URL the download was loading (after redirects).
    var url: URL
    /// The task's original request URL.
    var originalURL: URL
    /// How many bytes the partial file holds.
    var bytesReceived: Int64
    /// The full size, or -1 when unknown.
    var expectedTotalBytes: Int64
    /// The partial file.
    var partialFilePath: String
    /// The resource's validator when the partial file was written.
    var validator: String?
    /// The header fields of the request that was loading (without `Range` and `If-Range`, which
    /// the resumed load sets itself), so that the rest is asked for as the start was: with the
    /// same credentials, `Accept` and the app's own fields. Absent in resume data from before it
    /// was kept; the resumed request then has none.
    var headerFields: [String: String]?
    /// The request's timeout interval, when it was not the default.
    var timeoutInterval: TimeInterval?

    /// The fields of `request` that resume data keeps.
    static func keptHeaderFields(of request: URLRequest?) -> [String: String]? {
        guard let fields = request?.allHTTPHeaderFields else { return nil }
        let kept = fields.filter { name, _ in
            let lowered = name.lowercased()
            return lowered != "range" && lowered != "if-range"
        }
        return kept.isEmpty ? nil : kept
    }

    /// The request that asks for the rest: the URL that was loading, with the kept fields.
    var request: URLRequest {
        var request = URLRequest(url: url)
        for (name, value) in headerFields ?? [:] { request.setValue(value, forHTTPHeaderField: name) }
        if let timeoutInterval { request.timeoutInterval = timeoutInterval }
        return request
    }

    /// Encodes to the opaque `Data` handed to the app.
    func encoded() -> Data? {
        try? JSONEncoder().encode(self)
    }

    /// Decodes and validates resume data; throws `URLError.cannotDecodeRawData` for anything else.
    static func decode(_ data: Data) throws(URLError) -> DownloadResumeData {
        let decoded: DownloadResumeData
        do {
            decoded = try JSONDecoder().decode(DownloadResumeData.self, from: data)
        } catch {
            throw URLError(.cannotDecodeRawData, url: nil, description: "the resume data is not Courier resume data")
        }
        guard decoded.format == format, decoded.version == currentVersion else {
            throw URLError(.cannotDecodeRawData, url: decoded.url,
                           description: "the resume data has an unsupported format or version (\(decoded.version))")
        }
        guard decoded.bytesReceived >= 0, decoded.expectedTotalBytes >= -1,
              decoded.partialFilePath.hasPrefix("/"), !decoded.partialFilePath.contains("\0"),
              // The validator goes into request headers (`If-Range`): no control characters.
              decoded.validator.map(isPrintable) ?? true,
              // The kept fields go into the resumed request's head as well.
              (decoded.headerFields ?? [:]).allSatisfy({ isPrintable($0.key) && !$0.key.isEmpty && isPrintable($0.value) }),
              decoded.timeoutInterval.map({ $0.isFinite && $0 > 0 }) ?? true else {
            throw URLError(.cannotDecodeRawData, url: decoded.url, description: "the resume data is damaged")
        }
        return decoded
    }

    /// Whether `text` holds no control characters (it may go into a request head).
    private static func isPrintable(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }
    }
}
