import Foundation

/// Where Courier keeps the files of its persistent stores (the shared cookie and credential
/// storages).
///
/// The directory is, in order of preference:
/// 1. `$COURIER_DATA_HOME`, when it is set to an absolute path. The files go straight into it.
///    Test suites and sandboxes use it to keep Courier away from the user's real data.
/// 2. `$XDG_DATA_HOME/Courier`, when `XDG_DATA_HOME` is an absolute path.
/// 3. `~/.local/share/Courier`.
///
/// Nothing is created here: the stores create the directory (mode 0700) on their first write.
enum CourierDataDirectory {

    /// The environment variable that overrides the whole directory.
    static let overrideVariable = "COURIER_DATA_HOME"

    /// The name of the shared cookie storage's file.
    static let cookiesFileName = "Cookies.json"

    /// The name of the shared credential storage's file.
    static let credentialsFileName = "Credentials.json"

    /// The data directory for an environment (the process's own by default).
    ///
    /// - Parameters:
    ///   - environment: The environment variables to read.
    ///   - home: The user's home directory, used when neither variable is usable.
    static func url(environment: [String: String] = ProcessInfo.processInfo.environment,
                    home: @autoclosure () -> URL = FileManager.default.homeDirectoryForCurrentUser) -> URL {
        if let override = environment[overrideVariable], override.hasPrefix("/") {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        let base: URL
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            base = home()
                .appendingPathComponent(".local", isDirectory: true)
                .appendingPathComponent("share", isDirectory: true)
        }
        return base.appendingPathComponent("Courier", isDirectory: true)
    }

    /// The file of `HTTPCookieStorage.shared`.
    static var cookiesFile: URL {
        url().appendingPathComponent(cookiesFileName, isDirectory: false)
    }

    /// The file of `URLCredentialStorage.shared`.
    static var credentialsFile: URL {
        url().appendingPathComponent(credentialsFileName, isDirectory: false)
    }
}
