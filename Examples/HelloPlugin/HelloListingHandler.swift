// Documentation/Plugins.md, "Directory listings": the Swift fragment, compiled here as the body of a
// handler's `startLoading()` (where `client` and the entries' `modified` date come from).
import CourierPluginKit
import Foundation

/// Answers with a fixed two-entry listing, as Plugins.md shows; compiled, not exported.
final class HelloListingHandler: PluginHandler, @unchecked Sendable {
    override func startLoading() {
        let modified = Date(timeIntervalSince1970: 1_795_173_243)
        let entries = [
            PluginDirectoryEntry(name: "notes.txt", type: .file, size: 1204, modificationDate: modified, permissions: 0o644),
            PluginDirectoryEntry(name: "docs", type: .directory),
        ]
        let body = PluginDirectoryListing.encode(entries)
        client.didReceive(PluginResponse(mimeType: PluginDirectoryListing.mimeType, textEncodingName: "utf-8",
                                         expectedContentLength: Int64(body.count)))
        client.didLoad(body)
        client.didFinishLoading()
    }

    override func stopLoading() {}
}
