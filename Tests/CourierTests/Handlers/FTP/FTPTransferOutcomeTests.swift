import CCurl
import Foundation
import Testing
@testable import Courier

/// The FTP handler's end-of-transfer decision, one test per outcome (and per fact that turns one
/// outcome into another), on facts alone: no server, no transfer.
@Suite("FTP end-of-transfer decision")
struct FTPTransferOutcomeTests {
    private static let url = URL(string: "ftp://example.test/dir/file.bin")!

    private static func facts(_ result: CURLcode, _ operation: FTPOperation,
                              _ adjust: (inout FTPTransferOutcome.Facts) -> Void = { _ in }) -> FTPTransferOutcome.Facts {
        var facts = FTPTransferOutcome.Facts(result: result, operation: operation, url: url)
        adjust(&facts)
        return facts
    }

    /// The case of an outcome, without its values.
    fileprivate enum Kind: Equatable {
        case downloadAfterProbe, finishDownload, finishListing, finishUpload, listWithoutMLSD, downloadFromStart
        case downloadFromRangeStart
        case loginChallenge, serverTrustChallenge, fail
    }

    /// The error of a `.fail` outcome, or `nil` (recorded as an issue) for any other.
    private static func failure(_ outcome: FTPTransferOutcome, sourceLocation: SourceLocation = #_sourceLocation) -> URLError? {
        guard case .fail(let error) = outcome else {
            Issue.record("expected a failure, got \(outcome)", sourceLocation: sourceLocation)
            return nil
        }
        return error
    }

    /// What the probe of a file of `size` bytes modified at `time` leads to, for resume data made
    /// at offset 400 of a 1000-byte file modified at 1,700,000,000: whether it resumes, and where.
    /// An outcome other than a download is recorded as an issue.
    private static func probe(size: Int64, time: Int64,
                              sourceLocation: SourceLocation = #_sourceLocation) -> (resumes: Bool, offset: Int64?, total: Int64?) {
        let outcome = FTPTransferOutcome.decide(facts(CURLE_OK, .probe) {
            $0.remoteSize = size
            $0.remoteModificationTime = time
            $0.resume = (400, "ftp:1000:1700000000")
        })
        guard case .downloadAfterProbe(let resume) = outcome else {
            Issue.record("expected a download after the probe, got \(outcome)", sourceLocation: sourceLocation)
            return (false, nil, nil)
        }
        return (resume != nil, resume?.offset, resume?.total)
    }

    @Test func aProbeOfAnUnchangedFileResumesAtTheOffset() {
        let next = Self.probe(size: 1000, time: 1_700_000_000)
        #expect(next.resumes && next.offset == 400 && next.total == 1000)
    }

    @Test func aProbeOfAChangedFileDownloadsFromTheStart() {
        #expect(!Self.probe(size: 1200, time: 1_700_000_500).resumes)
    }

    @Test func aCompletedDownloadFinishes() {
        #expect(FTPTransferOutcome.decide(Self.facts(CURLE_OK, .download(offset: 0))).kind == .finishDownload)
    }

    @Test func aCompletedListingFinishes() {
        #expect(FTPTransferOutcome.decide(Self.facts(CURLE_OK, .list(machineReadable: true))).kind == .finishListing)
    }

    @Test func aCompletedUploadFinishes() {
        #expect(FTPTransferOutcome.decide(Self.facts(CURLE_OK, .upload)).kind == .finishUpload)
    }

    @Test func aServerRefusingMLSDIsListedWithLIST() {
        #expect(FTPTransferOutcome.decide(Self.facts(CURLE_FTP_COULDNT_RETR_FILE, .list(machineReadable: true)) { $0.replyCode = 500 }).kind == .listWithoutMLSD)
    }

    @Test func aRefusedLISTIsNotRetried() {
        let error = Self.failure(FTPTransferOutcome.decide(Self.facts(CURLE_FTP_COULDNT_RETR_FILE, .list(machineReadable: false)) {
            $0.replyCode = 500
        }))
        #expect(error?.code == .fileDoesNotExist)
    }

    @Test func aRefusedResumeDownloadsFromTheStart() {
        #expect(FTPTransferOutcome.decide(Self.facts(CURLE_BAD_DOWNLOAD_RESUME, .download(offset: 400))).kind == .downloadFromStart)
    }

    @Test func aRefusedLoginIsAChallenge() {
        let outcome = FTPTransferOutcome.decide(Self.facts(CURLE_LOGIN_DENIED, .download(offset: 0)) { $0.reply = "530 Login incorrect." })
        guard case .loginChallenge(let error) = outcome else {
            Issue.record("expected a login challenge, got \(outcome)")
            return
        }
        #expect(error.code == .userAuthenticationRequired && error.failingURL == Self.url)
    }

    @Test func anUntrustedCertificateIsAServerTrustChallenge() {
        let outcome = FTPTransferOutcome.decide(Self.facts(CURLE_PEER_FAILED_VERIFICATION, .download(offset: 0)))
        guard case .serverTrustChallenge(let error) = outcome else {
            Issue.record("expected a server-trust challenge, got \(outcome)")
            return
        }
        #expect(error.code == .serverCertificateUntrusted)
    }

    @Test func aMissingFileFailsWithTheServersReply() {
        let error = Self.failure(FTPTransferOutcome.decide(Self.facts(CURLE_REMOTE_FILE_NOT_FOUND, .download(offset: 0)) {
            $0.reply = "550 No such file."
        }))
        #expect(error?.code == .fileDoesNotExist && error?.localizedDescription.contains("550 No such file.") == true)
    }
}

private extension FTPTransferOutcome {
    /// The outcome's case, for tests that expect one.
    var kind: FTPTransferOutcomeTests.Kind {
        switch self {
        case .downloadAfterProbe: .downloadAfterProbe
        case .finishDownload: .finishDownload
        case .finishListing: .finishListing
        case .finishUpload: .finishUpload
        case .listWithoutMLSD: .listWithoutMLSD
        case .downloadFromStart: .downloadFromStart
        case .downloadFromRangeStart: .downloadFromRangeStart
        case .loginChallenge: .loginChallenge
        case .serverTrustChallenge: .serverTrustChallenge
        case .fail: .fail
        }
    }
}
