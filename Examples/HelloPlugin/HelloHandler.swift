// Documentation/Plugins.md, "Writing a plugin in Swift". CourierExampleTests checks that Plugins.md shows
// this code verbatim, links this target into libhello.so and fetches hello: URLs through it.
import CourierPluginKit
import Foundation

final class HelloHandler: PluginHandler, @unchecked Sendable {
    override func startLoading() {
        let body = Data("hello from \(request.url.absoluteString)".utf8)
        client.didReceive(PluginResponse(mimeType: "text/plain", expectedContentLength: Int64(body.count)))
        client.didLoad(body)
        client.didFinishLoading()       // or client.didFail(.fileDoesNotExist, message: "…")
    }
    override func stopLoading() {}      // cancel your work
}

@_cdecl("courier_plugin_entry")
public func courierPluginEntry() -> UnsafeRawPointer? {
    PluginExport.descriptor(name: "hello", version: "1.0.0", schemes: [.init("hello", [.read])],
                            handler: HelloHandler.self)
}
