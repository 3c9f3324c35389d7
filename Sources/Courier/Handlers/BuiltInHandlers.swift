import Foundation

/// The handlers Courier ships: the rows of the table of built-in schemes.
///
/// One row per ``BuiltInScheme`` case, made by an exhaustive `switch`, so every reserved scheme has
/// a handler and no handler serves a scheme that is not reserved from plugins. A row says which
/// class serves the scheme and what it can do (``HandlerCapabilities``); the loader, the task and the
/// plugin loader take everything they know about built-in handlers from here.
enum BuiltInHandlers {
    /// The row for `scheme`.
    static func row(for scheme: BuiltInScheme) -> SchemeRow {
        switch scheme {
        case .data:
            // Stateless: it starts on the thread that resumes the task, with no queue of its own.
            SchemeRow(scheme, DataURLProtocol.self, [.read, .concurrentStartStop])
        case .file:
            SchemeRow(scheme, FileURLProtocol.self, [.read, .list, .resume, .flowControl])
        case .http, .https:
            SchemeRow(scheme, HTTPURLProtocol.self,
                      [.read, .write, .resume, .flowControl, .concurrentStartStop, .deliversRefusedRedirect,
                       .cacheScoping, .cachesResponses],
                      redirectsTo: [.http, .https])
        case .ftp, .ftps:
            SchemeRow(scheme, FTPURLProtocol.self, [.read, .write, .list, .resume, .flowControl])
        case .sftp:
            SchemeRow(scheme, SFTPURLProtocol.self, [.read, .write, .list, .resume, .flowControl])
        case .ws, .wss:
            // WebSocket tasks only: the handshake's redirects may lead to ws, wss, http or https
            // (which the WebSocket task loads as ws and wss).
            SchemeRow(scheme, WebSocketURLProtocol.self, [.read, .concurrentStartStop],
                      redirectsTo: [.ws, .wss, .http, .https])
        }
    }

    /// The table the loader consults after app-registered classes and plugins.
    static let table = SchemeTable(BuiltInScheme.allCases.map(row(for:)))
}
