import Foundation

/// The handlers Courier ships, by scheme. Adding a built-in scheme means adding its class here.
enum BuiltInHandlers {
    /// The table the loader consults after app-registered classes.
    static let table = SchemeTable([
        DataURLProtocol.self,
        FileURLProtocol.self,
        HTTPURLProtocol.self,
        FTPURLProtocol.self,
        SFTPURLProtocol.self,
    ])
}
