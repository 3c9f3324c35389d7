#if COURIER_FUZZ
@testable import Courier
import Foundation

/// `DownloadResumeData.decode`: resume data is the app's opaque blob, which may come from disk or
/// from anyone. What decodes must re-encode and decode to the same value, and build its request.
enum ResumeDataHarness {
    static func run(_ input: Data) {
        guard let decoded = try? DownloadResumeData.decode(input) else { return }
        fuzzCheck(decoded.bytesReceived >= 0 && decoded.partialFilePath.hasPrefix("/"), "accepted \(decoded)")
        guard let encoded = decoded.encoded() else {
            fuzzCheck(false, "accepted resume data does not encode: \(decoded)")
            return
        }
        let again = try? DownloadResumeData.decode(encoded)
        fuzzCheck(again == decoded, "round trip changed \(decoded)")
        _ = decoded.request
    }
}
#endif
