import Foundation

/// A `Range: bytes=N-` request header on an ftp, ftps or sftp request: the body starts at byte `N`
/// of the file, whatever the file is now.
///
/// This is how a caller continues a partial file it kept itself — `courier -C -`, like curl's
/// `-C`, which sends `REST` over FTP and seeks over SFTP. Unlike resuming from a download task's
/// resume data (``ResumeRequest``), nothing checks that the file is unchanged: the caller vouches
/// for the bytes before `N`. An HTTP server answers the same header with `206 Partial Content`; the
/// ftp and sftp handlers answer with a `URLResponse` whose `expectedContentLength` is what is left
/// from `N` (when the server says the file's size).
///
/// Only a start offset can be honoured. Any other `Range` value (`bytes=0-99`, `bytes=-500`,
/// several ranges, another unit) fails the request with `unsupportedURL` instead of delivering
/// bytes the caller did not ask for; so does a start past the end of the file.
enum RangeStartOffset {
    /// The start offset a request asks for: nil when it has no `Range` header, the offset when the
    /// header is `bytes=N-`, an error naming the request's URL otherwise.
    static func of(_ request: URLRequest) -> Result<Int64, URLError>? {
        guard let value = request.value(forHTTPHeaderField: "Range") else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        let prefix = "bytes="
        if trimmed.lowercased().hasPrefix(prefix), trimmed.hasSuffix("-") {
            let digits = trimmed.dropFirst(prefix.count).dropLast()
            if !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let offset = Int64(digits) {
                return .success(offset)
            }
        }
        let scheme = request.url?.scheme ?? "this scheme"
        return .failure(URLError(.unsupportedURL, url: request.url, description:
            "\(scheme) honours only a start offset as a Range (\"bytes=N-\"), not \"\(value)\"."))
    }

    /// The error for a start offset past the end of a file of `size` bytes.
    static func pastTheEnd(_ offset: Int64, size: Int64, url: URL?) -> URLError {
        URLError(.unsupportedURL, url: url, description:
            "The range starts at byte \(offset), past the end of the file (\(size) bytes).")
    }
}
