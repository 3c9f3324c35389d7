import Courier
import Foundation
import FoundationNetworking

/// The FoundationNetworking `URLProtocol` the bridge registers: it claims the schemes
/// ``BridgeInstallation`` serves and runs each load as a Courier data task (``BridgeLoad``).
///
/// FoundationNetworking calls `startLoading()` and `stopLoading()` on its task's serial work queue,
/// so `load` needs no lock. Its `suspend()` calls `stopLoading()` and a later `resume()` calls
/// `startLoading()` again on the same instance: the task's state tells a suspension from a cancel.
final class CourierBridgeURLProtocol: FoundationNetworking.URLProtocol {
    private var load: BridgeLoad?

    override class func canInit(with request: FoundationNetworking.URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased(), let installation = BridgeInstallation.current else { return false }
        return installation.serves(scheme)
    }

    override class func canonicalRequest(for request: FoundationNetworking.URLRequest) -> FoundationNetworking.URLRequest {
        request
    }

    override func startLoading() {
        if let load {
            load.resume()
            return
        }
        guard let client else { return }
        guard let installation = BridgeInstallation.current else {
            client.urlProtocol(self, didFailWithError: BridgeError.unsupported(request.url, "the Courier bridge is not installed"))
            return
        }
        guard !(task is FoundationNetworking.URLSessionDownloadTask) else {
            // FoundationNetworking gives a custom protocol no way to hand over a download's file.
            client.urlProtocol(self, didFailWithError: BridgeError.unsupported(
                request.url, "the Courier bridge serves data and upload tasks; load the body with a data task"))
            return
        }
        guard let url = request.url, let courierRequest = request.converted(to: Courier.URLRequest.self) else {
            client.urlProtocol(self, didFailWithError: BridgeError.unsupported(request.url, "the request has no URL"))
            return
        }
        let inspection = task.map(FoundationTaskInspection.init(task:))
        let load = BridgeLoad(foundationProtocol: self, client: client, originalURL: url,
                              delivery: inspection?.bodyGoesToDelegate == true ? .stream : .whole,
                              foundationDelegate: inspection?.delegateRoute)
        self.load = load
        load.start(courierRequest, on: installation.session)
    }

    override func stopLoading() {
        guard let load else { return }
        if task?.state == .suspended {
            load.suspend()
        } else {
            load.cancel()
        }
    }
}
