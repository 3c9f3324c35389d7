import Courier
import Foundation
import FoundationNetworking

/// One bridged load: a Courier data task whose own delegate this is, reporting to the
/// FoundationNetworking protocol instance that started it through that protocol's client.
///
/// - The response is passed on with `.notAllowed` (FoundationNetworking caches only what its own
///   protocols load).
/// - The body is passed on chunk by chunk as Courier delivers it (`.stream`), or held and passed
///   on once at the end (`.whole`) for tasks whose body FoundationNetworking gives to a completion
///   handler, since it keeps only the last chunk of those (see ``FoundationTaskInspection``).
/// - Redirects are followed by Courier; the FoundationNetworking delegate, when there is one, is
///   asked first (``FoundationDelegateRoute``), and the response finally passed on is the last one.
/// - Challenges go to that delegate and its answers back to Courier (``BridgeChallenge``); without
///   a delegate, Courier does what it does without one (stored and URL credentials, known hosts).
/// - Errors are Courier's `URLError`s, passed on as they are (code, `failingURL`, description).
///
/// Every report runs on the Courier session's delegate queue, one at a time. Once the
/// FoundationNetworking task is cancelled nothing more is reported: FoundationNetworking reports
/// the cancellation itself.
final class BridgeLoad: NSObject, Courier.URLSessionDataDelegate, @unchecked Sendable {
    /// How the body reaches FoundationNetworking.
    enum Delivery {
        case stream
        case whole
    }

    private let lock = NSLock()
    /// FoundationNetworking keeps its protocol until the task ends; the load must not keep it longer.
    private weak var foundationProtocol: FoundationNetworking.URLProtocol?
    private let client: any FoundationNetworking.URLProtocolClient
    private let delivery: Delivery
    private let foundationDelegate: FoundationDelegateRoute?
    private let originalURL: URL
    // Guarded by `lock`:
    private var courierTask: Courier.URLSessionDataTask?
    private var ended = false
    private var heldBody = Data()

    init(foundationProtocol: FoundationNetworking.URLProtocol, client: any FoundationNetworking.URLProtocolClient,
         originalURL: URL, delivery: Delivery, foundationDelegate: FoundationDelegateRoute?) {
        self.foundationProtocol = foundationProtocol
        self.client = client
        self.originalURL = originalURL
        self.delivery = delivery
        self.foundationDelegate = foundationDelegate
    }

    // MARK: Driven by the FoundationNetworking protocol

    func start(_ request: Courier.URLRequest, on session: Courier.URLSession) {
        let task = session.dataTask(with: request)
        task.delegate = self
        lock.withLock { courierTask = task }
        task.resume()
    }

    /// FoundationNetworking's task was suspended: Courier stops reading until ``resume()``.
    func suspend() {
        lock.withLock { courierTask }?.suspend()
    }

    func resume() {
        lock.withLock { courierTask }?.resume()
    }

    /// FoundationNetworking's task was cancelled: the Courier task is cancelled and nothing more is
    /// reported.
    func cancel() {
        let task = lock.withLock { () -> Courier.URLSessionDataTask? in
            ended = true
            return courierTask
        }
        task?.cancel()
    }

    /// The protocol instance and its client while the load still reports.
    private func receiver() -> (FoundationNetworking.URLProtocol, any FoundationNetworking.URLProtocolClient)? {
        lock.withLock {
            guard !ended, let foundationProtocol else { return nil }
            return (foundationProtocol, client)
        }
    }

    // MARK: Courier's reports

    func urlSession(_ session: Courier.URLSession, dataTask: Courier.URLSessionDataTask, didReceive response: Courier.URLResponse,
                    completionHandler: @escaping @Sendable (Courier.URLSession.ResponseDisposition) -> Void) {
        if let (foundationProtocol, client) = receiver() {
            let converted = FoundationResponseConversion.foundationResponse(from: response, fallbackURL: originalURL)
            client.urlProtocol(foundationProtocol, didReceive: converted, cacheStoragePolicy: .notAllowed)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: Courier.URLSession, dataTask: Courier.URLSessionDataTask, didReceive data: Data) {
        switch delivery {
        case .stream:
            if let (foundationProtocol, client) = receiver() {
                client.urlProtocol(foundationProtocol, didLoad: data)
            }
        case .whole:
            lock.withLock { heldBody.append(data) }
        }
    }

    func urlSession(_ session: Courier.URLSession, task: Courier.URLSessionTask, didCompleteWithError error: (any Error)?) {
        let receiver = receiver()
        let body = lock.withLock { () -> Data in
            ended = true
            courierTask = nil
            defer { heldBody = Data() }
            return heldBody
        }
        guard let (foundationProtocol, client) = receiver else { return }
        if let error {
            client.urlProtocol(foundationProtocol, didFailWithError: error)
            return
        }
        if !body.isEmpty {
            client.urlProtocol(foundationProtocol, didLoad: body)
        }
        client.urlProtocolDidFinishLoading(foundationProtocol)
    }

    func urlSession(_ session: Courier.URLSession, task: Courier.URLSessionTask, willPerformHTTPRedirection response: Courier.HTTPURLResponse,
                    newRequest request: Courier.URLRequest, completionHandler: @escaping @Sendable (Courier.URLRequest?) -> Void) {
        guard let foundationDelegate,
              let foundationResponse = FoundationResponseConversion.foundationResponse(from: response, fallbackURL: originalURL)
                as? FoundationNetworking.HTTPURLResponse,
              let foundationRequest = request.converted(to: FoundationNetworking.URLRequest.self) else {
            completionHandler(request)
            return
        }
        foundationDelegate.redirect(foundationResponse, to: foundationRequest) { answer in
            completionHandler(answer.flatMap { $0.converted(to: Courier.URLRequest.self) })
        }
    }

    func urlSession(_ session: Courier.URLSession, task: Courier.URLSessionTask, didReceive challenge: Courier.URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (Courier.URLSession.AuthChallengeDisposition, Courier.URLCredential?) -> Void) {
        guard let foundationDelegate,
              !BridgeChallenge.unanswerableMethods.contains(challenge.protectionSpace.authenticationMethod) else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        let bridged = BridgeChallenge(challenge, fallbackURL: originalURL, completion: completionHandler)
        foundationDelegate.challenge(bridged.foundationChallenge) { disposition, credential in
            bridged.answer(disposition, credential)
        }
    }
}
