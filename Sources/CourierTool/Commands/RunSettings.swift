import Foundation
import Courier

/// Everything the command line says about a run of explicit URLs, parsed and checked.
struct RunSettings: Sendable {
    var options = RequestOptions()
    /// `-i` (and `-I`): headers before the body.
    var include = false
    /// `-v`.
    var verbose = false
    /// `--trace-secrets`: `-v` shows credentials.
    var traceSecrets = false
    /// `--fail`.
    var failOnHTTPError = false
    /// `-s`.
    var silent = false
    /// `-S`.
    var showError = false
    /// `-o`.
    var output: String?
    /// `-O`.
    var remoteName = false
    /// `-w`.
    var writeOut: WriteOut?
    /// `-C`.
    var resume: ResumePlan.Start?
    /// `-u`.
    var login: Login?
    /// `-n` / `--netrc-file`.
    var netrc: Netrc?
    /// `-k`.
    var insecure = false
    /// `-L`.
    var followRedirects = false
    /// `--max-redirs`, nil for the library's cap.
    var maxRedirects: Int?
    var retry = RetryPolicy()
    /// `-Z`.
    var parallel = false
    /// `--parallel-max`.
    var parallelMax = 50
    /// `-b FILE`: the cookies read, put into the session's storage before the first request.
    var cookies: [HTTPCookie] = []
    /// `-c FILE`.
    var cookieJar: String?

    /// Whether failures are reported on standard error (not with `-s`, unless `-S`).
    var showsErrors: Bool { !silent || showError }

    /// The login for `url`: `-u`, else (when `url` carries no user) the netrc entry for its host.
    func login(for url: URL) -> Login? {
        if let login { return login }
        guard url.user == nil, let host = url.host else { return nil }
        return netrc?.login(for: host)
    }
}
