internal import CCurl
import Foundation

/// What the FTP handler does when libcurl reports that an operation's transfer ended: the whole
/// decision, as a pure function of what the handler knew then (``Facts``). The handler gathers the
/// facts, calls ``decide(_:)`` and carries the outcome out.
enum FTPTransferOutcome {
    /// The probe of a resumed download ended: download from the resume offset when the file is
    /// unchanged (`resume`: the offset and the file's size, reported with the response), otherwise
    /// from byte zero (`nil`).
    case downloadAfterProbe(resume: (offset: Int64, total: Int64)?)
    /// The download ended: deliver the response if no byte did (an empty file), then finish.
    case finishDownload
    /// The listing ended: deliver its last line, then finish.
    case finishListing
    /// The upload was stored: deliver the upload's response, then finish.
    case finishUpload
    /// The server has no `MLSD`: remember that, and list with `LIST`.
    case listWithoutMLSD
    /// The probe of a download from a `Range: bytes=N-` header ended and the file is at least `N`
    /// bytes long (or says no size): download from `N`, without checking the file is unchanged.
    case downloadFromRangeStart(Int64)
    /// The server could not continue the download where the resume data says (the file shrank, or
    /// it cannot seek): download from byte zero.
    case downloadFromStart
    /// The server refused the login: ask the delegate for a credential; `error` ends the load
    /// otherwise.
    case loginChallenge(error: URLError)
    /// The server's certificate failed verification: ask the delegate whether to trust it.
    case serverTrustChallenge(error: URLError)
    /// The load fails with this error.
    case fail(URLError)

    /// What the handler knows when a transfer ends.
    struct Facts {
        /// libcurl's result (`CURLE_OK` on success).
        var result: CURLcode
        /// What the transfer did.
        var operation: FTPOperation
        /// The request's URL (the failing URL of every error).
        var url: URL?
        /// A response was passed to the client during the transfer.
        var responseDelivered = false
        /// The server's last reply code (`CURLINFO_RESPONSE_CODE`; 0 when none).
        var replyCode = 0
        /// The server's last reply line.
        var reply: String? = nil
        /// libcurl's detailed message about the failure, if any.
        var errorDetail: String? = nil
        /// A server-trust challenge was accepted already (by this load or earlier in the session).
        var serverTrustAccepted = false
        /// The remote file's size (`SIZE`), when known.
        var remoteSize: Int64? = nil
        /// The remote file's modification time (`MDTM`, seconds since 1970), when known.
        var remoteModificationTime: Int64? = nil
        /// The offset and validator the request asks to resume from (``ResumeRequest``).
        var resume: (offset: Int64, validator: String?)? = nil
        /// The start offset of the request's `Range: bytes=N-` header (``RangeStartOffset``).
        var rangeStart: Int64? = nil
    }

    /// The outcome. A transfer that succeeded ends its operation (a probe leads to the download).
    /// A failure, in this order: a refused `MLSD` lists with `LIST`; a refused resume starts over; a
    /// refused login and an untrusted certificate become challenges; anything else fails the load
    /// (``FTPErrorMapping``, with libcurl's message and the server's last reply).
    static func decide(_ facts: Facts) -> FTPTransferOutcome {
        let result = facts.result
        if result == CURLE_OK {
            switch facts.operation {
            case .probe:
                if let start = facts.rangeStart {
                    if let size = facts.remoteSize, start > size {
                        return .fail(RangeStartOffset.pastTheEnd(start, size: size, url: facts.url))
                    }
                    return .downloadFromRangeStart(start)
                }
                let current = FTPResumeValidator.make(size: facts.remoteSize, modificationTime: facts.remoteModificationTime)
                if let resume = facts.resume, let current, resume.validator == current,
                   let size = facts.remoteSize, resume.offset <= size {
                    return .downloadAfterProbe(resume: (resume.offset, size))
                }
                return .downloadAfterProbe(resume: nil)
            case .download: return .finishDownload
            case .list: return .finishListing
            case .upload: return .finishUpload
            }
        }
        if case .list(machineReadable: true) = facts.operation, !facts.responseDelivered,
           (500...504).contains(facts.replyCode), result != CURLE_LOGIN_DENIED {
            return .listWithoutMLSD
        }
        if result == CURLE_BAD_DOWNLOAD_RESUME || result == CURLE_FTP_COULDNT_USE_REST, facts.rangeStart == nil,
           case .download(let offset) = facts.operation, offset > 0, !facts.responseDelivered {
            return .downloadFromStart
        }
        if result == CURLE_LOGIN_DENIED {
            return .loginChallenge(error: URLError(.userAuthenticationRequired, url: facts.url,
                                                   description: "The FTP server refused the login\(facts.reply.map { ": \($0)" } ?? ".")"))
        }
        if result == CURLE_PEER_FAILED_VERIFICATION, !facts.serverTrustAccepted, facts.url != nil {
            return .serverTrustChallenge(error: CurlErrorMapping.error(for: result, url: facts.url, detail: facts.errorDetail))
        }
        let detail = [facts.errorDetail, facts.reply.map { "the server said \"\($0)\"" }].compactMap { $0 }.joined(separator: "; ")
        return .fail(FTPErrorMapping.error(for: result, operation: facts.operation, url: facts.url, reply: facts.reply,
                                           detail: detail.isEmpty ? nil : detail))
    }
}
