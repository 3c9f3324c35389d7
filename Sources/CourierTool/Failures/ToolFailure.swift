import Foundation

/// A failure as the tool reports it: a `URLError` (for the message and code name) and an exit status.
struct ToolFailure: Error, Sendable {
    /// The error, always a `URLError` so it has a code name.
    let error: URLError
    /// The exit status for this failure.
    let exit: ToolExit

    init(_ error: URLError, exit: ToolExit? = nil) {
        self.error = error
        self.exit = exit ?? URLErrorCatalog.exit(for: error.code)
    }

    /// Wraps any error: `URLError`s keep their code, output-file errors keep their errno-based
    /// status, anything else becomes `unknown`.
    init(wrapping error: any Error) {
        switch error {
        case let failure as ToolFailure:
            self = failure
        case let urlError as URLError:
            self.init(urlError)
        case let output as OutputError:
            self.init(output.urlError, exit: output.exit)
        case let nsError as NSError where nsError.domain == NSURLErrorDomain:
            // An NSError in the URL domain that did not bridge: rebuild the URLError from its code.
            self.init(URLError(URLError.Code(rawValue: nsError.code) ?? .unknown, userInfo: nsError.userInfo))
        default:
            self.init(URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: String(describing: error)]), exit: .other)
        }
    }

    /// A failure with code `code` and message `message` about `url`.
    init(_ code: URLError.Code, _ message: String, url: URL? = nil, exit: ToolExit? = nil) {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        self.init(URLError(code, userInfo: info), exit: exit)
    }

    /// The human part of the diagnostic line.
    var message: String { URLErrorCatalog.message(for: error) }

    /// The code name in parentheses at the end of the diagnostic line.
    var codeName: String { URLErrorCatalog.name(of: error.code) }
}
