import CourierFoundationBridge
import Foundation
import FoundationNetworking

CourierFoundationBridge.install()

// Anywhere in the process, FoundationNetworking code now loads sftp:, file: and plugin URLs
// (without the bridge, FoundationNetworking's data task refuses a file: URL):
let (data, response) = try await URLSession.shared.data(from: URL(fileURLWithPath: "/etc/hostname"))
print(response.url?.path ?? "-", data == FileManager.default.contents(atPath: "/etc/hostname"))
