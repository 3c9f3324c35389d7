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
              decoded.validator?.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) ?? true else {
            throw URLError(.cannotDecodeRawData, url: decoded.url, description: "the resume data is damaged")
        }
        return decoded
    }
}
