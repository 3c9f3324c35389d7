#if USE_FOUNDATION_NETWORKING
import FoundationNetworking
#else
import Courier
#endif
import Foundation

// A program written against FoundationNetworking's cookie storage, credential storage and URL
// cache, the way people write one: it must type-check unchanged against Courier;
// `scripts/check-source-compatibility` compiles it both ways and never runs it. Sessions and tasks
// are FoundationNetworkingTasks.swift's subject.

// MARK: - Cookies, credentials, cache

func cookies() {
    let url = URL(string: "https://example.com/account")!
    let properties: [HTTPCookiePropertyKey: Any] = [
        .name: "session", .value: "abc123", .domain: "example.com", .path: "/", .secure: "TRUE",
        .expires: Date(timeIntervalSinceNow: 3600), .version: "0", .comment: "login", .commentURL: url,
        .discard: "FALSE", .maximumAge: "3600", .port: "443", .originURL: url,
        HTTPCookiePropertyKey("HttpOnly"): "TRUE", HTTPCookiePropertyKey(rawValue: "SameSite"): "Lax",
    ]
    guard let cookie = HTTPCookie(properties: properties) else { return }
    print(cookie.name, cookie.value, cookie.domain, cookie.path, cookie.isSecure, cookie.isHTTPOnly,
          cookie.isSessionOnly, cookie.expiresDate as Any, cookie.version, cookie.comment as Any,
          cookie.commentURL as Any, cookie.portList as Any, cookie.properties?[.name] as Any)
    let fromHeaders = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "a=b; Path=/"], for: url)
    let header = HTTPCookie.requestHeaderFields(with: fromHeaders + [cookie])["Cookie"]

    let storage = HTTPCookieStorage.shared
    storage.cookieAcceptPolicy = .always
    storage.setCookie(cookie)
    storage.setCookies(fromHeaders, for: url, mainDocumentURL: nil)
    let matching = storage.cookies(for: url) ?? []
    let sorted = storage.sortedCookies(using: [NSSortDescriptor(keyPath: \HTTPCookie.name, ascending: true)])
    for stale in storage.cookies ?? [] where stale.expiresDate.map({ $0 < Date() }) ?? false {
        storage.deleteCookie(stale)
    }
    storage.removeCookies(since: Date(timeIntervalSinceNow: -60))
    let group = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "group.example")
    let observer = NotificationCenter.default.addObserver(forName: .NSHTTPCookieManagerCookiesChanged, object: storage,
                                                          queue: nil) { _ in print("cookies changed") }
    NotificationCenter.default.removeObserver(observer)
    let policy: HTTPCookie.AcceptPolicy = group.cookieAcceptPolicy == .never ? .onlyFromMainDocumentDomain : .never
    print(header as Any, matching.count, sorted.count, policy)
}

func credentials(task: URLSessionTask) {
    let space = URLProtectionSpace(host: "example.com", port: 443, protocol: NSURLProtectionSpaceHTTPS,
                                   realm: "api", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
    let proxy = URLProtectionSpace(proxyHost: "proxy.local", port: 1080, type: NSURLProtectionSpaceSOCKSProxy,
                                   realm: nil, authenticationMethod: NSURLAuthenticationMethodNegotiate)
    print(space.host, space.port, space.protocol as Any, space.realm as Any, space.authenticationMethod,
          space.receivesCredentialSecurely, space.isProxy(), proxy.proxyType as Any, space.copy(),
          [NSURLProtectionSpaceHTTP, NSURLProtectionSpaceHTTPSProxy, NSURLAuthenticationMethodHTMLForm,
           NSURLAuthenticationMethodNTLM, NSURLCredentialStorageRemoveSynchronizableCredentials])

    let credential = URLCredential(user: "me", password: "secret", persistence: .permanent)
    let persistence: URLCredential.Persistence = credential.persistence == .none ? .forSession : credential.persistence
    print(credential.user as Any, credential.password as Any, credential.hasPassword, persistence, credential.copy())

    let storage = URLCredentialStorage.shared
    storage.set(credential, for: space)
    storage.setDefaultCredential(credential, for: space)
    let forSpace = storage.credentials(for: space)?["me"]
    let all = storage.allCredentials.count
    let preferred = storage.defaultCredential(for: space)
    storage.remove(credential, for: space)
    storage.remove(credential, for: space, options: [NSURLCredentialStorageRemoveSynchronizableCredentials: NSNumber(value: true)])

    storage.set(credential, for: space, task: task)
    storage.setDefaultCredential(credential, for: space, task: task)
    storage.getCredentials(for: space, task: task) { byUser in print(byUser?.keys.sorted() ?? []) }
    storage.getDefaultCredential(for: space, task: task) { credential in print(credential?.user as Any) }
    storage.remove(credential, for: space, task: task)
    storage.remove(credential, for: space, options: nil, task: task)

    let isolated = URLCredentialStorage()
    let token = NotificationCenter.default.addObserver(forName: .NSURLCredentialStorageChanged, object: isolated,
                                                       queue: .main) { _ in print("credentials changed") }
    NotificationCenter.default.removeObserver(token)
    print(forSpace as Any, all, preferred as Any)
}

/// A cache that refuses large bodies, overriding both store methods.
final class SmallBodyCache: URLCache, @unchecked Sendable {
    override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
        guard cachedResponse.data.count < 64 * 1024 else { return }
        super.storeCachedResponse(cachedResponse, for: request)
    }

    override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for dataTask: URLSessionDataTask) {
        guard cachedResponse.data.count < 64 * 1024 else { return }
        super.storeCachedResponse(cachedResponse, for: dataTask)
    }

    override func getCachedResponse(for dataTask: URLSessionDataTask, completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        super.getCachedResponse(for: dataTask, completionHandler: completionHandler)
    }
}

func caching(task: URLSessionDataTask) {
    let url = URL(string: "https://example.com/data.json")!
    let request = URLRequest(url: url, cachePolicy: .returnCacheDataDontLoad)
    let response = URLResponse(url: url, mimeType: "application/json", expectedContentLength: 2, textEncodingName: nil)
    let cached = CachedURLResponse(response: response, data: Data("{}".utf8))
    let detailed = CachedURLResponse(response: response, data: Data("{}".utf8), userInfo: nil, storagePolicy: .allowedInMemoryOnly)
    print(cached.response.url as Any, cached.data.count, cached.userInfo as Any, detailed.storagePolicy, cached.copy())

    let cache = SmallBodyCache(memoryCapacity: 4 << 20, diskCapacity: 16 << 20, diskPath: "client-cache")
    URLCache.shared = cache
    cache.storeCachedResponse(cached, for: request)
    cache.storeCachedResponse(detailed, for: task)
    if let hit = URLCache.shared.cachedResponse(for: request) { print("hit", hit.data.count) }
    cache.getCachedResponse(for: task) { response in print(response?.storagePolicy as Any) }
    cache.removeCachedResponse(for: request)
    cache.removeCachedResponse(for: task)
    cache.removeCachedResponses(since: Date(timeIntervalSinceNow: -3600))
    cache.removeAllCachedResponses()
    cache.memoryCapacity = 8 << 20
    cache.diskCapacity = 0
    print(cache.currentMemoryUsage, cache.currentDiskUsage)
}

// MARK: - Entry point

@main
struct StorageProgram {
    static func main() {
        let task = URLSession.shared.dataTask(with: URLRequest(url: URL(fileURLWithPath: "/tmp/data.json")))
        credentials(task: task)
        caching(task: task)
        cookies()
    }
}
